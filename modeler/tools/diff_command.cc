// `lumos-model diff A B [--json] [--timeline OUT.json] ...`: what changed between two runs
// (modeler/diff/diff_cli.h).
#include <cstdio>

#include "modeler/diff/diff_cli.h"
#include "modeler/tools/commands.h"

namespace lumos::modeler {

int RunDiff(const Args& args) { return diff::RunDiffCommand(args, stdout, stderr); }

}  // namespace lumos::modeler
