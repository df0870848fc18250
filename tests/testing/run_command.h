// Test support: runs a command line in a shell and captures exit code, stdout and stderr.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

namespace lumos::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CommandResult RunCommand(const std::string& command_line);

// A command line started in the background by `sh -c "exec COMMAND"` (so signals reach the
// command itself, not a shell), stdin from /dev/null, stdout and stderr kept in files.
// The destructor kills it (SIGKILL) if it still runs, and reaps it.
class BackgroundCommand {
 public:
  explicit BackgroundCommand(const std::string& command_line);
  ~BackgroundCommand();
  BackgroundCommand(const BackgroundCommand&) = delete;
  BackgroundCommand& operator=(const BackgroundCommand&) = delete;

  // False when the command could not be started.
  bool started() const { return pid_ > 0; }
  // Whether it has not exited yet (reaps it when it has).
  bool Running();
  void Signal(int signal_number);
  // Waits for it to end: the exit code, or 128 + the signal that ended it; then its output.
  CommandResult Wait();

 private:
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

// Calls `done` every few milliseconds until it returns true or `timeout_s` passes; returns
// its last answer. Polling, not a delay: the caller waits for a state, as long as it takes.
bool PollUntil(const std::function<bool()>& done, double timeout_s);

// Path of the built lumos-model binary.
std::string LumosModelBinary();

}  // namespace lumos::testing
