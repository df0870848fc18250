// `lumos-model search`: the command itself lives in modeler/plan/search_cli.cc so that the
// tests can run it in-process.
#include "modeler/plan/search_cli.h"
#include "modeler/tools/commands.h"

namespace lumos::modeler {

int RunSearch(const Args& args) { return plan::RunSearchCommand(args, stdout, stderr); }

}  // namespace lumos::modeler
