// Design: the command line of `lumos-model export` (modeler/tools/export_command.cc only
// forwards to it), kept in the library so tests can drive it in-process. Exit codes: 0 ok,
// 1 failure or damaged input (the readable part is still written; one line per damaged file
// names it and the byte offset), 2 usage error. Messages go to `err`, the summary to `out`.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace lumos::modeler {

int RunExportCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace lumos::modeler
