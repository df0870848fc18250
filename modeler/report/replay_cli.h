// Design: `lumos-model replay`, in-process (tests call it directly; tools/ only forwards
// argv). Load the job, align clocks, build and validate the graph, apply what-ifs, simulate,
// analyse, print. Exit status: 0 replayed (warnings and graph issues are reported, not fatal);
// 1 the input could not be read or replayed; 2 bad arguments.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace lumos::modeler {

int RunReplayCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace lumos::modeler
