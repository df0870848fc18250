// lumos-model: the offline modeler's command line. main() only: every subcommand lives in
// its own *_command.cc.
#include <cstdio>
#include <cstring>
#include <string>

#include "modeler/graph/batch_allocator.h"
#include "modeler/tools/commands.h"

namespace {

constexpr const char kUsage[] =
    "usage: lumos-model <command> [options] [--help]\n"
    "\n"
    "Offline modeler for Lumos traces (*.pb.zst).\n"
    "\n"
    "commands:\n"
    "  replay FILE|DIR|GLOB...       replay a job: measured vs replayed iterations, breakdown,\n"
    "                                critical path, what-ifs (--scale, --drop-gaps)\n"
    "  synth FILE... -o DIR --ranks N  a large consistent job from a real one (benchmarks)\n"
    "  inspect FILE...               ranks, devices, versions, time span, counts, loss\n"
    "  export FILE... -o OUT.json    Chrome/Perfetto trace JSON (opens in ui.perfetto.dev)\n"
    "  import kineto IN... -o OUT    convert PyTorch profiler (Kineto) traces: .json,\n"
    "                                .json.gz, or .tar.gz with one JSON per rank\n"
    "\n"
    "Run `lumos-model <command> --help` for the options of each command.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  lumos::modeler::KeepFreedMemoryInProcess();
  std::string command = argv[1];
  lumos::modeler::Args args(argv + 2, argv + argc);
  if (command == "inspect") return lumos::modeler::RunInspect(args);
  if (command == "export") return lumos::modeler::RunExport(args);
  if (command == "import") return lumos::modeler::RunImport(args);
  if (command == "replay") return lumos::modeler::RunReplay(args);
  if (command == "synth") return lumos::modeler::RunSynth(args);
  if (command == "--version") {
    std::printf("lumos-model 0.1.0\n");
    return 0;
  }
  std::fprintf(stderr, "lumos-model: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return 2;
}
