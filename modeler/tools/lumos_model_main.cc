// lumos-model: the offline modeler's command line. main() only: every subcommand lives in
// its own *_command.cc.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "base/memory_budget.h"
#include "modeler/graph/batch_allocator.h"
#include "modeler/tools/commands.h"

#ifndef LUMOS_VERSION
#define LUMOS_VERSION "unknown"
#endif

namespace {

constexpr const char kUsage[] =
    "usage: lumos-model <command> [options] [--help]\n"
    "       lumos-model --version\n"
    "\n"
    "Offline modeler for Lumos traces (*.pb.zst).\n"
    "\n"
    "commands:\n"
    "  replay FILE|DIR|GLOB...       replay a job: measured vs replayed iterations, breakdown,\n"
    "                                critical path, what-ifs (--scale, --drop-gaps)\n"
    "  structure FILE|DIR|GLOB...    a job's structure: iterations, phases, layers, parallel\n"
    "                                groups, model sizes with their origin (--base K=V,...)\n"
    "  estimate FILE|DIR|GLOB... --set K=V,...\n"
    "                                a setup nobody ran, from the trace of one that ran:\n"
    "                                layers, hidden, seq, micro-batches, dp, GPU, network\n"
    "  search --model SPEC --gpus N --gpu NAME\n"
    "                                every layout (tp, pp, dp, ...) of a model on N GPUs,\n"
    "                                ranked by estimated step time, with memory per GPU\n"
    "  summarize FILE|DIR|GLOB... -o OUT [--format ndjson|csv]\n"
    "                                capture windows into typed tables for warehouses: per\n"
    "                                iteration and rank, kernel, collective (DuckDB, BigQuery)\n"
    "  diff A B [--json] [--timeline OUT.json]\n"
    "                                what changed between two runs (each a file, directory or\n"
    "                                quoted glob): iteration, breakdown, kernels, collectives,\n"
    "                                host time, ranks, by contribution to the change\n"
    "  synth FILE... -o DIR --ranks N  a large consistent job from a real one (benchmarks)\n"
    "  synth gpt -o DIR [--set K=V,...] a GPT training job from the cost models (test double)\n"
    "  inspect FILE...               ranks, devices, versions, time span, counts, loss\n"
    "  export FILE... -o OUT.json    Chrome/Perfetto trace JSON (opens in ui.perfetto.dev)\n"
    "  import kineto IN... -o OUT    convert PyTorch profiler (Kineto) traces: .json,\n"
    "                                .json.gz, or .tar.gz with one JSON per rank\n"
    "  costs fit|predict ...         kernel cost models: fit to measured tables, predict\n"
    "                                durations (other shapes, dtypes, GPUs) with their source\n"
    "\n"
    "Run `lumos-model <command> --help` for the options of each command.\n"
    "\n"
    "exit status (every command): 0 all good; 1 damaged or partly unreadable input (what could\n"
    "be read is still used and reported) or an output that could not be written; 2 bad\n"
    "arguments. Problems go to stderr, one line each; results to stdout.\n";

constexpr const char kCommands[] =
    "replay, structure, estimate, search, summarize, diff, synth, inspect, export, import, costs";

int Run(const std::string& command, const lumos::modeler::Args& args) {
  if (command == "inspect") return lumos::modeler::RunInspect(args);
  if (command == "export") return lumos::modeler::RunExport(args);
  if (command == "import") return lumos::modeler::RunImport(args);
  if (command == "replay") return lumos::modeler::RunReplay(args);
  if (command == "synth") return lumos::modeler::RunSynth(args);
  if (command == "structure") return lumos::modeler::RunStructure(args);
  if (command == "costs") return lumos::modeler::RunCosts(args);
  if (command == "estimate") return lumos::modeler::RunEstimate(args);
  if (command == "search") return lumos::modeler::RunSearch(args);
  if (command == "summarize") return lumos::modeler::RunSummarize(args);
  if (command == "diff") return lumos::modeler::RunDiff(args);
  const std::string what = !command.empty() && command[0] == '-' ? "option" : "command";
  std::fputs(lumos::cli::UsageErrorText("lumos-model", "unknown " + what + " '" + command +
                                                           "' (commands: " + kCommands +
                                                           "; or --help, --version)")
                 .c_str(),
             stderr);
  return lumos::cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(lumos::cli::UsageErrorText("lumos-model",
                                          std::string("no command given (") + kCommands + ")")
                   .c_str(),
               stderr);
    return lumos::cli::kExitUsage;
  }
  const std::string command = argv[1];
  int status = 0;
  std::string program = "lumos-model";
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
  } else if (command == "--version") {
    std::printf("lumos-model %s\n", LUMOS_VERSION);
  } else {
    lumos::modeler::KeepFreedMemoryInProcess();
    program += " " + command;
    // The memory every command may plan to use (base/memory_budget.h); --max-memory overrides.
    if (const char* text = std::getenv("LUMOS_MAX_MEMORY"); text != nullptr && *text != '\0') {
      const std::optional<uint64_t> bytes = lumos::ParseSizeBytes(text);
      if (!bytes || *bytes == 0) {
        std::fputs(lumos::cli::UsageErrorText(program, std::string("LUMOS_MAX_MEMORY='") + text +
                                                           "': expected a size such as 512M, "
                                                           "64G or 2T")
                       .c_str(),
                   stderr);
        return lumos::cli::kExitUsage;
      }
      lumos::SetMemoryBudget(*bytes);
    }
    status = Run(command, lumos::modeler::Args(argv + 2, argv + argc));
  }
  // Output that could not be written (a full disk, /dev/full) is a failure, never exit 0.
  return lumos::cli::CloseStdout(program, status);
}
