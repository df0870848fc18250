// Design: the exit status of one command run, by the contract in README.md ("Commands"):
//   0  all good;
//   1  damaged or partly unreadable input (what could be read is still used and reported), or an
//      output that could not be written: a file, or the command's own output stream;
//   2  bad arguments (ArgParser).
// Every problem is one line on `err`, "<program>: <message>"; nothing of it goes to `out`, which
// holds only the command's result. Finish() checks `out` itself (flushed, no error): text that
// could not all be written (a full disk, /dev/full) is a failed output, said once.
// Threading: none; one outcome per command run.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "base/status.h"

namespace lumos::cli {

enum ExitStatus : int {
  kExitOk = 0,
  kExitFailure = 1,  // Damaged input, or an output that could not be written.
  kExitUsage = 2,
};

class CommandOutcome {
 public:
  CommandOutcome(std::string program, std::FILE* out, std::FILE* err);

  // Input that is damaged, partly unreadable or skipped; the command goes on with the rest.
  void InputProblem(std::string_view message);
  // An output that could not be written; the command goes on with the others.
  void OutputFailed(std::string_view message);
  // Nothing more can be done: says why and returns 1 (`return outcome.Fail(...)`).
  int Fail(std::string_view message);
  // Fail(status.message()), except that a Status::BadArgument is a usage error: the message,
  // the pointer to --help and exit 2.
  int Fail(const Status& status);

  // Flushes `out`; a write error there is a failed output. Returns the exit status.
  int Finish();
  int exit_status() const { return status_; }
  std::FILE* out() const { return out_; }
  std::FILE* err() const { return err_; }

 private:
  void Say(std::string_view message);

  std::string program_;
  std::FILE* out_;
  std::FILE* err_;
  int status_ = kExitOk;
};

// After a command wrote to stdout: flushes and closes it; a failure not already reported
// (stdout's error flag set) is reported as "<program>: cannot write to standard output: why".
// Returns the exit status to use (1 on failure, else `status`).
int CloseStdout(std::string_view program, int status);

}  // namespace lumos::cli
