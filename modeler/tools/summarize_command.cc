// `lumos-model summarize FILE|DIR|GLOB... -o OUT [--format ndjson|csv] [--force] ...`: capture
// windows into typed tables (modeler/summarize/summarize_cli.h).
#include <cstdio>

#include "modeler/summarize/summarize_cli.h"
#include "modeler/tools/commands.h"

namespace lumos::modeler {

int RunSummarize(const Args& args) { return summarize::RunSummarizeCommand(args, stdout, stderr); }

}  // namespace lumos::modeler
