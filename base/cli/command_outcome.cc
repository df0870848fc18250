#include "base/cli/command_outcome.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include "base/cli/arg_parser.h"

namespace lumos::cli {

CommandOutcome::CommandOutcome(std::string program, std::FILE* out, std::FILE* err)
    : program_(std::move(program)), out_(out), err_(err) {}

void CommandOutcome::Say(std::string_view message) {
  std::fprintf(err_, "%s: %.*s\n", program_.c_str(), static_cast<int>(message.size()),
               message.data());
}

void CommandOutcome::InputProblem(std::string_view message) {
  Say(message);
  status_ = kExitFailure;
}

void CommandOutcome::OutputFailed(std::string_view message) {
  Say(message);
  status_ = kExitFailure;
}

int CommandOutcome::Fail(std::string_view message) {
  Say(message);
  status_ = kExitFailure;
  return status_;
}

int CommandOutcome::Fail(const Status& status) {
  if (!status.bad_argument()) return Fail(status.message());
  std::fputs(UsageErrorText(program_, status.message()).c_str(), err_);
  status_ = kExitUsage;
  return status_;
}

int CommandOutcome::Finish() {
  errno = 0;
  const bool flushed = std::fflush(out_) == 0;
  const int flush_errno = errno;
  if (!flushed || std::ferror(out_) != 0) {
    OutputFailed(std::string("cannot write to standard output: ") +
                 (flush_errno != 0 ? std::strerror(flush_errno) : "write error"));
  }
  return status_;
}

int CloseStdout(std::string_view program, int status) {
  // Already reported (CommandOutcome::Finish): the error flag stays set.
  if (std::ferror(stdout) != 0) return status == kExitOk ? kExitFailure : status;
  errno = 0;
  if (std::fclose(stdout) != 0) {
    std::fprintf(stderr, "%.*s: cannot write to standard output: %s\n",
                 static_cast<int>(program.size()), program.data(),
                 errno != 0 ? std::strerror(errno) : "write error");
    return status == kExitOk ? kExitFailure : status;
  }
  return status;
}

}  // namespace lumos::cli
