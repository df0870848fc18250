// Design: `lumos-model diff A B`, in-process (tests call it; tools/ only forwards argv). A and B
// are one argument each (a trace file, a directory: every *.pb.zst inside, or a quoted glob),
// so directories and globs need no separator. Each side is profiled (run_profile.h), one at a
// time (without --timeline the first side's graph is freed before the second loads), compared
// (run_diff.h) and printed as text or JSON; --timeline writes both runs aligned
// (diff_timeline.h). Exit status (README, "Commands"): 0 both sides read from sound input; 1 an
// input unreadable, damaged or unclosed (one line each, said once when A and B share it; what
// could be read is compared), a side with nothing to compare (no readable trace, no API call
// or GPU op, no iteration: one line naming the side), or an output that could not be written;
// 2 bad arguments (not exactly two inputs, the timeline one of the inputs): nothing is read.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace lumos::modeler::diff {

int RunDiffCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace lumos::modeler::diff
