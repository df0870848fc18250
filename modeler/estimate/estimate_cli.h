// Design: `lumos-model estimate`, in-process for tests: arguments (settings are checked before
// any file is read), loading with every event kept, structure recovery, the cost model (the
// trace's own calibration, then --costs), the base replay, each configuration's estimate, the
// report (text or JSON; a sweep sorted), and --timeline. Exit status: estimate_cli.cc's
// kExitStatus (README "Commands").
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace lumos::modeler::estimate {

int RunEstimateCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace lumos::modeler::estimate
