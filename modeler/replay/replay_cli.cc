#include "modeler/replay/replay_cli.h"

#include <sys/resource.h>

#include <chrono>
#include <cinttypes>
#include <cstring>
#include <optional>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "base/cli/progress.h"
#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/io/output_file.h"
#include "modeler/replay/idle_breakdown.h"
#include "modeler/replay/launch_stats.h"
#include "modeler/replay/replay_report.h"
#include "modeler/replay/replay_timeline.h"
#include "modeler/replay/stragglers.h"
#include "modeler/sim/replay_scales.h"
#include "modeler/sim/simulator.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler {
namespace {

constexpr const char kDescription[] =
    "Rebuilds the execution graph of every rank of one job (one trace file per rank), replays\n"
    "it in a discrete-event simulation and compares it with the measurement: per iteration\n"
    "and rank, measured and replayed time and the error; the breakdown (exposed compute,\n"
    "overlapped, exposed communication, other), GPU busy per 1 ms, the critical path, top\n"
    "kernels and collectives. Clocks of different hosts are aligned from matched collectives.\n"
    "\n"
    "inputs: trace files, directories (every *.pb.zst inside, recursively) or glob patterns.";

constexpr const char kExitStatus[] =
    "exit status: 0 replayed from sound input; 1 an input is unreadable (skipped: its rank is\n"
    "missing), has damaged frames or no trailer (replayed as far as it goes; one line on stderr\n"
    "per file, and the report still printed), nothing could be replayed, or an output could\n"
    "not be written; 2 bad arguments.";

// --stats: wall time per phase and the process's peak resident memory.
class PhaseClock {
 public:
  PhaseClock() : start_(std::chrono::steady_clock::now()), last_(start_) {}
  void Mark(const char* phase) {
    const auto now = std::chrono::steady_clock::now();
    phases_.emplace_back(phase, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }
  void Print(std::FILE* err, uint64_t events, size_t nodes, size_t edges) const {
    const double total = std::chrono::duration<double>(last_ - start_).count();
    for (const auto& [phase, seconds] : phases_) {
      std::fprintf(err, "stats: %-28s %8.3f s\n", phase, seconds);
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const double peak = static_cast<double>(usage.ru_maxrss) * 1024.0;  // KiB on Linux.
    std::fprintf(err,
                 "stats: %" PRIu64
                 " events, %zu nodes, %zu edges in %.3f s: %.2f M events/s; "
                 "peak memory %.1f MB, %.0f bytes/event\n",
                 events, nodes, edges, total,
                 total > 0 ? static_cast<double>(events) / total / 1e6 : 0.0, peak / 1e6,
                 events > 0 ? peak / static_cast<double>(events) : 0.0);
  }

 private:
  std::chrono::steady_clock::time_point start_, last_;
  std::vector<std::pair<const char*, double>> phases_;
};

}  // namespace

int RunReplayCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  std::vector<std::string> inputs;
  std::vector<std::string> scale_specs;
  std::vector<ReplayScale> scales;
  AnalysisOptions analysis;
  bool json = false, drop_gaps = false, dependencies_only = false, stats = false;
  std::string timeline, job_name, iteration, iterations_text, window_name;
  bool job_given = false, window_given = false;
  bool force = false;
  cli::ArgParser parser("lumos-model replay", "FILE|DIR|GLOB... [options]");
  parser.Description(kDescription)
      .String("--job", "ID", "the job to replay when the files hold several (header job id)",
              &job_name)
      .Given(&job_given)
      .String("--window", "STAMP",
              "the capture window to replay when the files hold several (its directory's stamp, "
              "e.g. 20261204T144812Z; default: the first, said in a warning)",
              &window_name)
      .Given(&window_given)
      .String("--iteration", "REGEX",
              "iterations are the host/NVTX ranges whose name matches REGEX (default: "
              "ProfilerStep#N ranges; none: detected from the repeating kernel stream, else the "
              "whole trace)",
              &iteration)
      .Check([&analysis](const std::string& pattern) {
        return SetIterationPattern(pattern, &analysis);
      })
      .String("--iterations", "WHICH", kIterationsHelp, &iterations_text)
      .Check([&analysis](const std::string& text) { return SetIterationChoice(text, &analysis); })
      .Flag("--json", "print the report as JSON instead of text", &json)
      .Flag("--stats", "phase times, events/s and peak memory on stderr", &stats)
      .String("--timeline", "OUT.json",
              "write measured and replayed timelines as a Perfetto/Chrome trace", &timeline)
      .Strings("--scale", "SPEC",
               "what-if, repeatable: kernel:REGEX=F (kernels matching REGEX take F times as "
               "long), comm=F (collective transfer), host=F (host calls and gaps)",
               &scale_specs)
      .Check([&scales](const std::string& spec) {
        StatusOr<ReplayScale> scale = ParseScale(spec);
        if (!scale.ok()) return scale.status();
        scales.push_back(std::move(scale).value());
        return Status::Ok();
      })
      .Flag("--drop-gaps", "what-if: no host time between API calls", &drop_gaps)
      .Flag("--dependencies-only",
            "replay from the recorded dependencies alone: drop the measured GPU queueing the "
            "graph does not explain (its error shows how much the graph explains)",
            &dependencies_only)
      .Flag("--force", io::kForceHelp, &force)
      .Positionals("FILE|DIR|GLOB...", "input", 1, &inputs)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, out, err)) return *exit;
  // As the report lists them: the scales in the order given, then --drop-gaps.
  std::vector<std::string> what_ifs;
  what_ifs.reserve(scale_specs.size() + 1);
  for (const std::string& spec : scale_specs) what_ifs.push_back("--scale " + spec);
  if (drop_gaps) what_ifs.push_back("--drop-gaps");
  std::optional<std::string> job_id;
  if (job_given) job_id = job_name;

  cli::CommandOutcome outcome("lumos-model replay", out, err);
  std::vector<std::string> missing;  // Arguments that name nothing: one line each, exit 1.
  StatusOr<std::vector<std::string>> paths = ExpandTracePaths(inputs, &missing);
  for (const std::string& problem : missing) outcome.InputProblem(problem);
  if (!paths.ok()) return outcome.Fail(paths.status());
  for (const std::string& path : *paths) {
    if (!timeline.empty() && io::SameFile(path, timeline)) {
      return parser.UsageError(err, "the timeline " + timeline + " is also an input");
    }
  }
  PhaseClock clock;
  cli::Progress progress("lumos-model replay", err);
  progress.Step("loading");
  // Streaming: each rank's part of the graph is built as it loads, then its events are dropped.
  GraphBuilder builder;
  LoadOptions load;
  load.keep_events = false;
  load.job_id = job_id;
  if (window_given) load.window = window_name;
  size_t ranks_to_load = paths->size();
  // The chosen job's rank count, not the input's file count: a directory may hold other jobs.
  load.on_rank_count = [&builder, &ranks_to_load](size_t ranks) {
    ranks_to_load = ranks;
    builder.ExpectRanks(ranks);
  };
  load.on_rank = [&](const RankTrace& rank, uint32_t index) {
    builder.AddRank(rank, index);
    progress.Update(static_cast<double>(index + 1) / static_cast<double>(ranks_to_load));
  };
  load.keep_range = [&analysis](std::string_view name, bool step) {
    return MayMarkIteration(name, step, analysis);
  };
  StatusOr<Job> loaded = LoadJob(*paths, load);
  progress.Clear();
  if (!loaded.ok()) return outcome.Fail(loaded.status());
  const Job& job = *loaded;
  // Damaged, skipped or unclosed files: one line each on stderr (they stay among the report's
  // warnings too, which say what the numbers were computed from).
  for (const std::string& problem : job.input_problems) outcome.InputProblem(problem);
  ReplayReport report;
  report.job_id = job.job_id;
  for (const RankTrace& r : job.ranks) {
    report.ranks.push_back(r.rank);
    report.devices.push_back(r.device);
  }
  report.events = job.events_read;
  report.warnings = job.warnings;
  clock.Mark("load + per-rank graph");
  report.alignment = AlignClocks(job);
  ExecutionGraph graph = builder.Finish(report.alignment.rank_offset_ns);
  clock.Mark("align + finish");
  report.graph = &graph;
  if (graph.nodes.empty()) {
    progress.Clear();
    return outcome.Fail("no API calls or GPU ops in the input: nothing to replay");
  }
  progress.Step("replaying");
  progress.Update(-1);
  const Scenario scenario = ApplyReplayScales(
      graph, dependencies_only ? DependenciesOnlyScenario(graph) : MeasuredScenario(graph), scales,
      drop_gaps);
  const SimResult sim =
      Simulate(graph, scenario, [&progress](double done) { progress.Update(done); });
  report.first_validation_diagnostic = graph.diagnostics.size();
  report.validation_issues = Validate(&graph, /*replay_ran_every_node=*/sim.not_run == 0);
  clock.Mark("simulate + validate");
  report.what_ifs = what_ifs;
  report.dependencies_only = dependencies_only;
  report.not_run = sim.not_run;
  report.sim_diagnostics = sim.diagnostics;
  progress.Step("analysing");
  progress.Update(-1);
  std::string choice;
  report.iterations = AnalyzeIterations(job, graph, sim, analysis, &choice);
  clock.Mark("analyse: iterations");
  report.stragglers = AnalyzeStragglers(graph, sim, report.iterations);
  report.idle = AnalyzeIdle(graph, sim, report.iterations);
  clock.Mark("analyse: stragglers, idle");
  report.launch = AnalyzeLaunches(graph, sim, report.iterations, {.bin_ns = analysis.bin_ns});
  report.iteration_rule =
      (analysis.iteration ? "ranges matching '" + analysis.iteration_pattern + "'"
                          : std::string("ProfilerStep#N ranges")) +
      "; else detected from the repeating kernel stream; else the whole trace; each from its "
      "start to the next one's start; kept: " +
      choice;
  progress.Clear();
  clock.Mark("analyse: launches");
  if (!timeline.empty()) {
    // A timeline that cannot be written is a failed output; the report is still printed.
    Status status = WriteReplayTimeline(graph, sim, &report.iterations, timeline, force);
    if (!status.ok()) outcome.OutputFailed(status.message());
  }
  if (json) {
    Status status = WriteJsonReport(report, out);
    // A write error on `out` itself is said once, by Finish().
    if (!status.ok() && std::ferror(out) == 0) outcome.OutputFailed(status.message());
  } else {
    WriteTextReport(report, out);
  }
  clock.Mark("report");
  if (stats) clock.Print(err, report.events, graph.nodes.size(), graph.edges.size());
  return outcome.Finish();
}

}  // namespace lumos::modeler
