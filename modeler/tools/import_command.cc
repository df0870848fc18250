// `lumos-model import kineto IN... -o OUT [--job-id ID] [--zstd-level N]`: PyTorch profiler
// traces to Lumos traces. Argument handling only; the work is in modeler/import/kineto_import.h.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "modeler/import/kineto_import.h"
#include "modeler/io/output_file.h"
#include "modeler/tools/commands.h"

namespace lumos::modeler {
namespace {

constexpr const char kDescription[] =
    "Converts PyTorch profiler (Kineto) Chrome-trace JSON into Lumos traces (*.pb.zst).\n"
    "\n"
    "inputs (recognised by content, not by name):\n"
    "  IN.json, IN.json.gz     one trace (one rank)\n"
    "  IN.tar.gz, IN.tgz, IN.tar\n"
    "                          an archive with one .json or .json.gz per rank\n"
    "  PyTorch Execution Traces (\"nodes\"/\"schema\") are a different format: not accepted.";

constexpr const char kExitStatus[] =
    "exit status: 0 imported; 1 an input could not be read or converted (one line on stderr\n"
    "names it; nothing is written: the import is all or nothing), or an output could not be\n"
    "written; 2 bad arguments.";

}  // namespace

int RunImport(const Args& args) {
  kineto::ImportRequest request;
  std::vector<std::string> positionals;
  bool force = false;
  cli::ArgParser parser("lumos-model import", "kineto IN... -o OUT [--job-id ID] [--zstd-level N]");
  parser.Description(kDescription)
      .String("-o, --output", "OUT",
              "one trace in total: the file to write; several, or OUT ending in '/' or naming a "
              "directory: a directory (created) that gets one <input stem>.pb.zst per trace. "
              "Written to temporary files and renamed at the end, all or none: an existing file "
              "is only ever replaced by a complete one",
              &request.output)
      .Required()
      .String("--job-id", "ID",
              "job id of every output (default: the input's name, or the output directory's name "
              "when there are several inputs)",
              &request.job_id)
      .Int("--zstd-level", "N", "compression level, 1..19 (default 19; 54 MB of JSON takes ~2 s)",
           1, 19, &request.zstd_level)
      .Flag("--force", io::kForceHelp, &force)
      .Positionals("kineto IN...", "input", 0, &positionals)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, stdout, stderr)) return *exit;
  if (positionals.empty()) return parser.UsageError(stderr, "no input format given (kineto)");
  if (positionals[0] != "kineto") {
    return parser.UsageError(stderr,
                             "unknown input format '" + positionals[0] + "' (supported: kineto)");
  }
  request.inputs.assign(positionals.begin() + 1, positionals.end());
  if (request.inputs.empty()) return parser.UsageError(stderr, "no input given (kineto IN...)");

  for (const std::string& input : request.inputs) {
    if (io::SameFile(input, request.output)) {
      return parser.UsageError(stderr, "the output " + request.output + " is also an input");
    }
  }

  cli::CommandOutcome outcome("lumos-model import", stdout, stderr);
  request.force = force;
  auto imported = kineto::ImportKineto(request);
  if (!imported.ok()) return outcome.Fail(imported.status());
  for (const kineto::ImportedTrace& trace : *imported) {
    // Written, but the input is not all it should be: said, each naming the input.
    for (const std::string& warning : trace.stats.warnings) {
      std::fprintf(stderr, "lumos-model import: warning: %s\n", warning.c_str());
    }
  }
  for (const kineto::ImportedTrace& trace : *imported) {
    const kineto::ConvertStats& s = trace.stats;
    std::printf(
        "%s: %llu bytes, %llu kernels, %llu API calls, %llu memcpy, %llu memset, %llu syncs, "
        "%llu host ranges, %llu collectives, %llu communicators, %llu threads",
        trace.output_path.c_str(), static_cast<unsigned long long>(s.output_bytes),
        static_cast<unsigned long long>(s.kernels), static_cast<unsigned long long>(s.api_calls),
        static_cast<unsigned long long>(s.memcpys), static_cast<unsigned long long>(s.memsets),
        static_cast<unsigned long long>(s.syncs), static_cast<unsigned long long>(s.host_ranges),
        static_cast<unsigned long long>(s.collectives),
        static_cast<unsigned long long>(s.communicators),
        static_cast<unsigned long long>(s.threads));
    if (s.gemm_calls != 0) {
      std::printf(", %llu GEMM shapes", static_cast<unsigned long long>(s.gemm_calls));
    }
    if (s.skipped != 0) {
      std::printf(", %llu skipped", static_cast<unsigned long long>(s.skipped));
    }
    std::printf("\n");
  }
  return outcome.Finish();
}

}  // namespace lumos::modeler
