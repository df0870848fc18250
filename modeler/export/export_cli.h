// Design: the command line of `lumos-model export` (modeler/tools/export_command.cc only
// forwards to it), kept in the library so tests can drive it in-process. Exit codes (README,
// "Commands"): 0 ok; 1 an input skipped (not a trace), damaged or unclosed (the rest, and the
// readable part, is still written; one line per file names it and the byte offset), or an
// output that could not be written (`out` included); 2 usage error. Messages go to `err`, the
// summary to `out`.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace lumos::modeler {

int RunExportCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace lumos::modeler
