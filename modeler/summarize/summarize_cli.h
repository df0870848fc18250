// Design: `lumos-model summarize`, in-process (tests call it; tools/ only forwards argv). The
// inputs are grouped into capture windows (trace_windows.h), each window summarized
// (window_summary.h) and its rows streamed into OUT (summary_output.h), one window at a time,
// so memory holds one window. Exit status (README, "Commands"): 0 every window summarized
// from sound input; 1 an input unreadable, damaged or unclosed (one line each; the rest is
// summarized), a window that could not be summarized (one line naming it; the others are), or
// OUT could not be written; 2 bad arguments, or OUT exists (without --force, or not a
// summary): nothing is read or written then.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace lumos::modeler::summarize {

int RunSummarizeCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace lumos::modeler::summarize
