// `lumos-model export`: the command itself lives in modeler/export/export_cli.cc so that its
// tests can run it in-process.
#include <cstdio>

#include "modeler/export/export_cli.h"
#include "modeler/tools/commands.h"

namespace lumos::modeler {

int RunExport(const Args& args) { return RunExportCommand(args, stdout, stderr); }

}  // namespace lumos::modeler
