#include "modeler/summarize/summarize_cli.h"

#include <cinttypes>
#include <optional>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "base/cli/progress.h"
#include "modeler/io/json_writer.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/summarize/summary_output.h"
#include "modeler/summarize/trace_windows.h"
#include "modeler/summarize/window_summary.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler::summarize {
namespace {

constexpr const char kDescription[] =
    "Summarizes capture windows into tables a warehouse loads as they are (DuckDB, Spark,\n"
    "BigQuery, ClickHouse): per (window, rank, iteration) its time and breakdown (exposed\n"
    "compute, overlapped, exposed communication, idle, GPU busy); per (window, kernel name,\n"
    "grid, block) count and duration statistics over all ranks (p50, p90, max); per (window,\n"
    "collective op, dtype, bytes, ranks, nodes) count, transfer time statistics, algorithm\n"
    "and bus bandwidth (nccl-tests' definitions) and the bus bandwidth the collective cost\n"
    "model expects on the trace's GPU and network. Files with the same job, capture window\n"
    "start, request id and trigger (the agent's DIR/<job>/<stamp>/ files) are one window;\n"
    "traces without a capture window are one window per job and directory. Each window is\n"
    "analysed as replay measures it (iterations, breakdown), without a simulation.\n"
    "\n"
    "OUT is a directory: iterations, kernels and collectives .ndjson (or .csv) and\n"
    "manifest.json (summary_version, typed columns, windows). Columns:\n"
    "modeler/summarize/README.md.\n"
    "\n"
    "inputs: trace files, directories (every *.pb.zst inside, recursively; *.partial files\n"
    "still being written are not) or glob patterns.";

constexpr const char kExitStatus[] =
    "exit status: 0 every window summarized from sound input; 1 an input is unreadable,\n"
    "damaged or unclosed (one line each; the rest is used), a window could not be summarized\n"
    "(one line naming it; the others are), or OUT could not be written; 2 bad arguments.\n"
    "An existing OUT (without --force, or not a summary) is a bad argument: nothing is read or\n"
    "written.";

void WindowJson(const TraceWindow& w, const WindowRows* rows, const std::string& error,
                std::string* out) {
  using io::AppendJsonString;
  *out += "\n{\"job\":";
  AppendJsonString(w.job, out);
  *out += ",\"window_stamp\":";
  AppendJsonString(w.stamp, out);
  *out += ",\"directory\":";
  AppendJsonString(w.directory, out);
  *out += ",\"files\":" + std::to_string(w.paths.size());
  if (rows != nullptr) {
    *out += ",\"ranks\":" + std::to_string(rows->ranks) +
            ",\"events\":" + std::to_string(rows->events) +
            ",\"collectives_left_out\":" + std::to_string(rows->collectives_left_out);
  }
  *out += ",\"error\":";
  if (error.empty()) {
    *out += "null";
  } else {
    AppendJsonString(error, out);
  }
  *out += "}";
}

}  // namespace

int RunSummarizeCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  std::vector<std::string> inputs;
  std::string output, format_name = "ndjson", iteration, iterations_text,
                      net_name = models::kDefaultNetwork, costs_path;
  bool force = false, quiet = false, costs_given = false;
  SummaryOptions options;
  cli::ArgParser parser("lumos-model summarize", "FILE|DIR|GLOB... -o OUT [options]");
  parser.Description(kDescription)
      .String("-o, --output", "OUT", "the summary directory to write (must not exist)", &output)
      .Required()
      .Choice("--format", "ndjson|csv", "row format of the tables (default ndjson)",
              {"ndjson", "csv"}, &format_name)
      .Flag("--force", "replace OUT when it is a summary directory", &force)
      .String("--iteration", "REGEX",
              "iterations are the host/NVTX ranges whose name matches REGEX (default: "
              "ProfilerStep#N ranges; none: detected from the repeating kernel stream, else the "
              "whole trace), as replay's",
              &iteration)
      .Check([&options](const std::string& pattern) {
        return SetIterationPattern(pattern, &options.analysis);
      })
      .String("--iterations", "WHICH", kIterationsHelp, &iterations_text)
      .Check([&options](const std::string& text) {
        return SetIterationChoice(text, &options.analysis);
      })
      .String("--net", "NAME",
              "the network between nodes for the expected bandwidth (default ib400; a spec "
              "name or GBITGbps,LATENCYus)",
              &net_name)
      .String("--costs", "MODEL.json",
              "a `lumos-model costs fit` model: its collective calibrations give the expected "
              "bandwidth (default: NCCL's constants on the GPU's fabric)",
              &costs_path)
      .Given(&costs_given)
      .Flag("-q, --quiet", "print nothing when all goes well", &quiet)
      .Positionals("FILE|DIR|GLOB...", "input", 1, &inputs)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, out, err)) return *exit;
  const Format format = format_name == "csv" ? Format::kCsv : Format::kNdjson;
  options.specs = &models::SpecTable::Builtin();
  StatusOr<models::NetworkSpec> network = options.specs->ResolveNetwork(net_name);
  if (!network.ok()) return parser.UsageError(err, "--net " + network.status().message());
  options.network = *network;
  if (Status s = CheckOutput(output, force); !s.ok()) return parser.UsageError(err, s.message());

  cli::CommandOutcome outcome("lumos-model summarize", out, err);
  if (costs_given) {
    StatusOr<models::CostModel> costs = models::ReadCostModel(costs_path);
    if (!costs.ok()) return outcome.Fail(costs.status());
    options.calibrations = std::move(costs->collectives);
  }
  std::vector<std::string> missing;
  StatusOr<std::vector<std::string>> paths = ExpandTracePaths(inputs, &missing);
  for (const std::string& problem : missing) outcome.InputProblem(problem);
  if (!paths.ok()) return outcome.Fail(paths.status());
  WindowSet set = GroupWindows(*paths);
  for (const std::string& problem : set.problems) outcome.InputProblem(problem);
  if (set.windows.empty()) {
    // Each unreadable file has had its line; without any, the inputs held no trace at all.
    if (!set.problems.empty()) return outcome.Finish();
    return outcome.Fail("no readable trace: nothing to summarize");
  }

  StatusOr<std::unique_ptr<SummaryOutput>> created = SummaryOutput::Create(output, format);
  if (!created.ok()) return outcome.Fail(created.status());
  SummaryOutput& summary = **created;
  cli::Progress progress("lumos-model summarize", err);
  progress.Step("summarizing");
  std::string windows_json = "[";
  size_t failed = 0;
  for (size_t i = 0; i < set.windows.size(); ++i) {
    const TraceWindow& w = set.windows[i];
    StatusOr<WindowRows> rows = SummarizeWindow(w, options);
    if (i > 0) windows_json += ",";
    if (!rows.ok()) {
      progress.Clear();
      outcome.InputProblem(WindowName(w) + ": " + rows.status().message());
      WindowJson(w, nullptr, rows.status().message(), &windows_json);
      ++failed;
      continue;
    }
    progress.Clear();
    for (const std::string& problem : rows->input_problems) outcome.InputProblem(problem);
    WindowJson(w, &*rows, "", &windows_json);
    for (Table t : kTables) {
      if (Status s = summary.Add(t, rows->rows[static_cast<int>(t)]); !s.ok()) {
        return outcome.Fail(s.message());
      }
    }
    progress.Update(static_cast<double>(i + 1) / static_cast<double>(set.windows.size()));
  }
  progress.Clear();
  windows_json += "]";
  if (Status s = summary.Commit(windows_json, force); !s.ok()) return outcome.Fail(s.message());
  if (!quiet) {
    std::fprintf(out,
                 "%s: %zu window(s)%s, %" PRIu64 " iteration, %" PRIu64 " kernel and %" PRIu64
                 " collective rows (%s)\n",
                 output.c_str(), set.windows.size() - failed,
                 failed > 0 ? (" (" + std::to_string(failed) + " failed)").c_str() : "",
                 summary.rows(Table::kIterations), summary.rows(Table::kKernels),
                 summary.rows(Table::kCollectives), FormatExtension(format));
  }
  return outcome.Finish();
}

}  // namespace lumos::modeler::summarize
