// `lumos-model replay`: the command itself lives in modeler/replay/replay_cli.cc so that its
// tests can run it in-process.
#include <cstdio>

#include "modeler/replay/replay_cli.h"
#include "modeler/tools/commands.h"

namespace lumos::modeler {

int RunReplay(const Args& args) { return RunReplayCommand(args, stdout, stderr); }

}  // namespace lumos::modeler
