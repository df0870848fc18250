#include "tests/testing/run_command.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "tests/testing/sample_trace.h"

namespace lumos::testing {

CommandResult RunCommand(const std::string& command_line) {
  TempDir dir;
  std::string shell =
      "( " + command_line + " ) >" + dir.File("out") + " 2>" + dir.File("err") + " </dev/null";
  int status = std::system(shell.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadFileBytes(dir.File("out"));
  result.err = ReadFileBytes(dir.File("err"));
  return result;
}

BackgroundCommand::BackgroundCommand(const std::string& command_line) {
  static int counter = 0;
  const std::string base = (std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp") +
                           std::string("/lumos-bg-") + std::to_string(getpid()) + "-" +
                           std::to_string(counter++);
  out_path_ = base + ".out";
  err_path_ = base + ".err";
  const std::string shell =
      "exec " + command_line + " >" + out_path_ + " 2>" + err_path_ + " </dev/null";
  pid_ = fork();
  if (pid_ == 0) {
    execl("/bin/sh", "sh", "-c", shell.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
}

BackgroundCommand::~BackgroundCommand() {
  if (pid_ > 0 && Running()) {
    kill(pid_, SIGKILL);
    Wait();
  }
  unlink(out_path_.c_str());
  unlink(err_path_.c_str());
}

bool BackgroundCommand::Running() {
  if (pid_ <= 0 || reaped_) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

void BackgroundCommand::Signal(int signal_number) {
  if (pid_ > 0 && !reaped_) kill(pid_, signal_number);
}

CommandResult BackgroundCommand::Wait() {
  CommandResult result;
  if (pid_ <= 0) return result;
  if (!reaped_) {
    while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  result.exit_code = WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  result.out = ReadFileBytes(out_path_);
  result.err = ReadFileBytes(err_path_);
  return result;
}

bool PollUntil(const std::function<bool()>& done, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

std::string LumosModelBinary() {
  return std::string(LUMOS_BINARY_DIR) + "/modeler/tools/lumos-model";
}

}  // namespace lumos::testing
