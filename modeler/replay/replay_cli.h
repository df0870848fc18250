// Design: `lumos-model replay`, in-process (tests call it directly; tools/ only forwards
// argv). Load the job, align clocks, build and validate the graph, apply what-ifs, simulate,
// analyse, print. Exit status (README, "Commands"): 0 replayed from sound input (graph issues
// and missing ranks are reported, not failures); 1 a file skipped, cut short or unclosed (one
// line each on `err`; the report still printed), nothing to replay, or an output (`out`, the
// timeline) that could not be written; 2 bad arguments.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace lumos::modeler {

int RunReplayCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace lumos::modeler
