#include "tests/testing/run_command.h"

#include <sys/wait.h>

#include <cstdlib>

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

std::string LumosModelBinary() {
  return std::string(LUMOS_BINARY_DIR) + "/modeler/tools/lumos-model";
}

}  // namespace lumos::testing
