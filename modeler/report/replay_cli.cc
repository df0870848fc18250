#include "modeler/report/replay_cli.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstring>
#include <optional>

#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/report/replay_analysis.h"
#include "modeler/report/replay_report.h"
#include "modeler/report/replay_timeline.h"
#include "modeler/sim/simulator.h"
#include "modeler/sim/whatif.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler {
namespace {

constexpr const char kHelp[] =
    "usage: lumos-model replay FILE|DIR|GLOB... [options]\n"
    "\n"
    "Rebuilds the execution graph of every rank of one job (one trace file per rank), replays\n"
    "it in a discrete-event simulation and compares it with the measurement: per iteration\n"
    "and rank, measured and replayed time and the error; the breakdown (exposed compute,\n"
    "overlapped, exposed communication, other), GPU busy per 1 ms, the critical path, top\n"
    "kernels and collectives. Clocks of different hosts are aligned from matched collectives.\n"
    "\n"
    "  --job ID             the job to replay when the files hold several (header job id)\n"
    "  --iteration REGEX    iterations are the host/NVTX ranges whose name matches REGEX\n"
    "                       (default: ProfilerStep#N ranges; none: detected from the\n"
    "                       repeating kernel stream, else the whole trace)\n"
    "  --json               print the report as JSON instead of text\n"
    "  --stats              phase times, events/s and peak memory on stderr\n"
    "  --timeline OUT.json  write measured and replayed timelines as a Perfetto/Chrome trace\n"
    "  --scale SPEC         what-if, repeatable: kernel:REGEX=F (kernels matching REGEX take F\n"
    "                       times as long), comm=F (collective transfer), host=F (host calls\n"
    "                       and gaps)\n"
    "  --drop-gaps          what-if: no host time between API calls\n"
    "  --dependencies-only  replay from the recorded dependencies alone: drop the measured GPU\n"
    "                       queueing the graph does not explain (its error shows how much the\n"
    "                       graph explains)\n"
    "\n"
    "Exit status: 0 replayed; 1 unreadable input or nothing to replay; 2 bad arguments.\n";

// A progress bar on stderr for steps that take over a second, only when stderr is a terminal:
// "lumos-model replay: loading [########............]  40%", redrawn at most every 100 ms.
class Progress {
 public:
  explicit Progress(std::FILE* err) : err_(err), enabled_(isatty(fileno(err)) != 0) {}
  void Step(const char* what) {
    Clear();
    what_ = what;
    start_ = std::chrono::steady_clock::now();
    drawn_ = start_;
  }
  // `done` in [0, 1]; negative: unknown (the label alone).
  void Update(double done) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) ||
        (shown_ && now - drawn_ < std::chrono::milliseconds(100))) {
      return;
    }
    drawn_ = now;
    shown_ = true;
    if (done < 0) {
      std::fprintf(err_, "\rlumos-model replay: %s...\033[K", what_);
    } else {
      constexpr int kWidth = 30;
      const int filled = static_cast<int>(std::min(1.0, done) * kWidth);
      std::fprintf(err_, "\rlumos-model replay: %s [%.*s%.*s] %3d%%\033[K", what_, filled,
                   "##############################", kWidth - filled,
                   "..............................", static_cast<int>(done * 100));
    }
    std::fflush(err_);
  }
  void Clear() {
    if (shown_) std::fprintf(err_, "\r\033[K");
    shown_ = false;
  }

 private:
  std::FILE* err_;
  bool enabled_;
  const char* what_ = "";
  std::chrono::steady_clock::time_point start_, drawn_;
  bool shown_ = false;
};

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
  std::vector<WhatIf> scales;
  std::vector<std::string> what_ifs;
  AnalysisOptions analysis;
  bool json = false, drop_gaps = false, dependencies_only = false, stats = false;
  std::string timeline;
  std::optional<std::string> job_id;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> const std::string* {
      if (i + 1 >= args.size()) {
        std::fprintf(err, "lumos-model replay: %s needs a value\n", flag);
        return nullptr;
      }
      return &args[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, out);
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--stats") {
      stats = true;
    } else if (a == "--dependencies-only") {
      dependencies_only = true;
    } else if (a == "--drop-gaps") {
      drop_gaps = true;
      what_ifs.push_back("--drop-gaps");
    } else if (a == "--iteration") {
      const std::string* v = value("--iteration");
      if (v == nullptr) return 2;
      try {
        analysis.iteration = std::regex(*v, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        std::fprintf(err, "lumos-model replay: --iteration '%s': %s\n", v->c_str(), e.what());
        return 2;
      }
      analysis.iteration_pattern = *v;
    } else if (a == "--job") {
      const std::string* v = value("--job");
      if (v == nullptr) return 2;
      job_id = *v;
    } else if (a == "--timeline") {
      const std::string* v = value("--timeline");
      if (v == nullptr) return 2;
      timeline = *v;
    } else if (a == "--scale") {
      const std::string* v = value("--scale");
      if (v == nullptr) return 2;
      StatusOr<WhatIf> scale = ParseScale(*v);
      if (!scale.ok()) {
        std::fprintf(err, "lumos-model replay: %s\n", scale.status().message().c_str());
        return 2;
      }
      scales.push_back(std::move(scale).value());
      what_ifs.push_back("--scale " + *v);
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(err, "lumos-model replay: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    } else {
      inputs.push_back(a);
    }
  }
  if (inputs.empty()) {
    std::fprintf(err, "lumos-model replay: no trace files given (see --help)\n");
    return 2;
  }
  StatusOr<std::vector<std::string>> paths = ExpandTracePaths(inputs);
  if (!paths.ok()) {
    std::fprintf(err, "lumos-model replay: %s\n", paths.status().message().c_str());
    return 1;
  }
  PhaseClock clock;
  Progress progress(err);
  progress.Step("loading");
  // Streaming: each rank's part of the graph is built as it loads, then its events are dropped.
  GraphBuilder builder;
  LoadOptions load;
  load.keep_events = false;
  load.job_id = job_id;
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
  if (!loaded.ok()) {
    progress.Clear();
    std::fprintf(err, "lumos-model replay: %s\n", loaded.status().message().c_str());
    return 1;
  }
  const Job& job = *loaded;
  ReplayReport report;
  report.job_id = job.job_id;
  for (const RankTrace& r : job.ranks) report.ranks.push_back(r.rank);
  report.events = job.events_read;
  report.warnings = job.warnings;
  clock.Mark("load + per-rank graph");
  report.alignment = AlignClocks(job);
  ExecutionGraph graph = builder.Finish(report.alignment.rank_offset_ns);
  clock.Mark("align + finish");
  report.graph = &graph;
  if (graph.nodes.empty()) {
    progress.Clear();
    std::fprintf(err,
                 "lumos-model replay: no API calls or GPU ops in the input: nothing to replay\n");
    return 1;
  }
  progress.Step("replaying");
  progress.Update(-1);
  const Scenario scenario = ApplyWhatIfs(
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
  report.iterations = AnalyzeIterations(job, graph, sim, analysis);
  report.iteration_rule =
      (analysis.iteration ? "ranges matching '" + analysis.iteration_pattern + "'"
                          : std::string("ProfilerStep#N ranges")) +
      "; else detected from the repeating kernel stream; else the whole trace";
  progress.Clear();
  clock.Mark("analyse");
  if (!timeline.empty()) {
    Status status = WriteReplayTimeline(graph, sim, timeline);
    if (!status.ok()) {
      std::fprintf(err, "lumos-model replay: %s\n", status.message().c_str());
      return 1;
    }
  }
  if (json) {
    Status status = WriteJsonReport(report, out);
    if (!status.ok()) {
      std::fprintf(err, "lumos-model replay: %s\n", status.message().c_str());
      return 1;
    }
  } else {
    WriteTextReport(report, out);
  }
  clock.Mark("report");
  if (stats) clock.Print(err, report.events, graph.nodes.size(), graph.edges.size());
  return 0;
}

}  // namespace lumos::modeler
