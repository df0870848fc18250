// `lumos-model estimate`: the command itself lives in modeler/estimate/estimate_cli.cc so that
// its tests run it in-process; with --model (no trace) it is modeler/plan's one-layout fast path.
#include <algorithm>

#include "modeler/estimate/estimate_cli.h"
#include "modeler/plan/search_cli.h"
#include "modeler/tools/commands.h"

namespace lumos::modeler {

int RunEstimate(const Args& args) {
  const bool model = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a == "--model" || a.rfind("--model=", 0) == 0;
  });
  if (model) return plan::RunModelEstimateCommand(args, stdout, stderr);
  return estimate::RunEstimateCommand(args, stdout, stderr);
}

}  // namespace lumos::modeler
