#include "modeler/export/export_cli.h"

#include <sys/stat.h>

#include <optional>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "modeler/export/chrome_trace_export.h"
#include "modeler/io/output_file.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler {
namespace {

constexpr const char kDescription[] =
    "Converts Lumos traces (*.pb.zst, one per rank) into one Chrome trace JSON file that\n"
    "opens in ui.perfetto.dev (or chrome://tracing).\n"
    "\n"
    "inputs: trace files, directories (every *.pb.zst inside, recursively) or glob patterns\n"
    "        (quote them: 'run/rank*.pb.zst'). Each file becomes one process, in path order.";

constexpr const char kEpilogue[] =
    "layout: one process per rank (\"rank R \u00b7 host \u00b7 pid\"), rows for host threads,\n"
    "then GPU streams (\"stream S (device D)\"), \"NCCL\" and \"lumos\" (loss, capture windows).\n"
    "Ranges that overlap without nesting go to an \"(overlap N)\" row below their own.\n"
    "Times are µs from metadata.lumos.time_origin_ns, with ns precision.\n"
    "\n"
    "exit status: 0 ok; 1 an input is unreadable (skipped), has damaged frames or no trailer (the\n"
    "rest, and its readable part, is still exported; one line on stderr per file names it), or\n"
    "an output could not be written; 2 bad arguments.";

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return a == b;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

int RunExportCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  std::vector<std::string> inputs;
  std::string output;
  bool no_flows = false, quiet = false;
  bool force = false;
  cli::ArgParser parser("lumos-model export",
                        "FILE|DIR|GLOB... -o OUT.json [--no-flows] [--quiet]");
  parser.Description(kDescription)
      .String("-o, --output", "OUT.json",
              "where to write (required). Written to a temporary file next to it and renamed, so "
              "OUT.json is never left half-written; a device or FIFO (/dev/null, a pipe) is "
              "written directly.",
              &output)
      .Required()
      .Flag("--no-flows",
            "omit the flow arrows (launch -> kernel, event record -> stream wait, and between "
            "the ranks of one collective).",
            &no_flows)
      .Flag("-q, --quiet", "print nothing when all goes well.", &quiet)
      .Flag("--force", io::kForceHelp, &force)
      .Positionals("FILE|DIR|GLOB...", "input", 1, &inputs)
      .Epilogue(kEpilogue);
  if (std::optional<int> exit = parser.ParseOrExit(args, out, err)) return *exit;
  ExportOptions options;
  options.flows = !no_flows;

  cli::CommandOutcome outcome("lumos-model export", out, err);
  std::vector<std::string> missing;  // Arguments that name nothing: one line each, exit 1.
  StatusOr<std::vector<std::string>> paths = ExpandTracePaths(inputs, &missing);
  for (const std::string& problem : missing) outcome.InputProblem(problem);
  if (!paths.ok()) return outcome.Fail(paths.status());
  for (const std::string& path : *paths) {
    if (SameFile(path, output)) {
      return parser.UsageError(err, "the output " + output + " is also an input");
    }
  }

  ExportReport report;
  options.force = force;
  Status status = ExportChromeTraceFile(*paths, options, output, &report);
  for (const std::string& skipped : report.skipped) {
    outcome.InputProblem(skipped + " (skipped; the other inputs are exported)");
  }
  if (!status.ok()) {
    // Every input skipped: said above, one line each.
    if (report.files.empty() && !report.skipped.empty()) return outcome.Finish();
    return outcome.Fail(status.message());
  }
  for (const ExportFileReport& file : report.files) {
    if (!file.damage.ok()) {
      outcome.InputProblem(file.damage.message() + " (exported the " +
                           std::to_string(file.packets) + " packets before it)");
    } else if (!file.closed) {
      outcome.InputProblem(file.path +
                           ": no trailer: the writer did not close the file (killed, or still "
                           "writing?); exported what it holds");
    }
  }
  if (!quiet) {
    std::fprintf(out, "%s: %llu events, %llu flow arrows from %zu trace file%s (%.1f MB)\n",
                 output.c_str(), static_cast<unsigned long long>(report.events),
                 static_cast<unsigned long long>(report.flows), report.files.size(),
                 report.files.size() == 1 ? "" : "s", static_cast<double>(report.bytes) / 1e6);
  }
  return outcome.Finish();
}

}  // namespace lumos::modeler
