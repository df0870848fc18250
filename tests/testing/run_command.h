// Test support: runs a command line in a shell and captures exit code, stdout and stderr.
#pragma once

#include <string>

namespace lumos::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CommandResult RunCommand(const std::string& command_line);

// Path of the built lumos-model binary.
std::string LumosModelBinary();

}  // namespace lumos::testing
