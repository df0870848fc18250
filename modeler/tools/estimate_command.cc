// `lumos-model estimate`: the command itself lives in modeler/estimate/estimate_cli.cc so that
// its tests run it in-process.
#include "modeler/estimate/estimate_cli.h"
#include "modeler/tools/commands.h"

namespace lumos::modeler {

int RunEstimate(const Args& args) { return estimate::RunEstimateCommand(args, stdout, stderr); }

}  // namespace lumos::modeler
