// `lumos-model replay` on one core, over a job synthesized once from the bundled 8-rank DLRM
// example (lumos-model synth: 64 ranks in groups spanning 8 hosts, 5 repetitions, durations
// jittered) under $TMPDIR. Items are the events in the files, so the rates compare with the
// issue's target (docs/performance.md: load + graph + replay >= 5 M events/s):
//   BM_ReplayLoadAndGraph   read every rank, build its part of the graph, align, finish
//   BM_ReplaySimulate       the simulation alone on that graph
//   BM_ReplayWhole          everything the command does before printing (+ the analysis:
//                           iterations, critical path, the rank's own path, stragglers, idle,
//                           launches)
//   BM_ReplayAnalysis       the analysis alone on one replay
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/batch_allocator.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/replay/idle_breakdown.h"
#include "modeler/replay/launch_stats.h"
#include "modeler/replay/stragglers.h"
#include "modeler/sim/simulator.h"
#include "modeler/synth/job_synth.h"
#include "modeler/trace/trace_set.h"

namespace lumos::bench {
namespace {

using namespace ::lumos::modeler;  // NOLINT(google-build-using-namespace): one module's bench.

// As lumos-model's main() does.
const bool kAllocatorTuned = (KeepFreedMemoryInProcess(), true);

constexpr int32_t kRanks = 64;
constexpr int32_t kIterations = 5;

struct SynthJob {
  std::string dir;
  std::vector<std::string> paths;
  ~SynthJob() { std::filesystem::remove_all(dir); }
};

void Die(const std::string& why) {
  std::fprintf(stderr, "replay benchmark: %s\n", why.c_str());
  std::abort();
}

const SynthJob& Job() {
  static const std::unique_ptr<SynthJob> job = [] {
    auto j = std::make_unique<SynthJob>();
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/lumos-replay-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) Die("mkdtemp failed");
    j->dir = pattern;
    auto example = ExpandTracePaths({std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"});
    if (!example.ok()) Die(example.status().message());
    auto base = LoadJob(*example);
    if (!base.ok()) Die(base.status().message());
    SynthOptions options;
    options.ranks = kRanks;
    options.iterations = kIterations;
    auto written = SynthesizeJob(*base, options, j->dir);
    if (!written.ok()) Die(written.status().message());
    auto paths = ExpandTracePaths({j->dir});
    if (!paths.ok()) Die(paths.status().message());
    j->paths = *paths;
    return j;
  }();
  return *job;
}

struct Loaded {
  modeler::Job job;
  ExecutionGraph graph;
};

// What `replay` does before simulating: streaming load into the graph builder.
std::unique_ptr<Loaded> LoadAndBuild(const std::vector<std::string>& paths) {
  auto out = std::make_unique<Loaded>();
  GraphBuilder builder;
  LoadOptions load;
  load.keep_events = false;
  load.on_rank_count = [&builder](size_t ranks) { builder.ExpectRanks(ranks); };
  load.on_rank = [&builder](const RankTrace& rank, uint32_t index) {
    builder.AddRank(rank, index);
  };
  AnalysisOptions analysis;
  load.keep_range = [&analysis](std::string_view name, bool step) {
    return MayMarkIteration(name, step, analysis);
  };
  auto job = LoadJob(paths, load);
  if (!job.ok()) Die(job.status().message());
  out->job = std::move(*job);
  out->graph = builder.Finish(AlignClocks(out->job).rank_offset_ns);
  return out;
}

void BM_ReplayLoadAndGraph(benchmark::State& state) {
  const SynthJob& job = Job();
  uint64_t events = 0;
  for (auto _ : state) {
    auto loaded = LoadAndBuild(job.paths);
    events = loaded->job.events_read;
    benchmark::DoNotOptimize(loaded->graph.nodes.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(events * state.iterations()));
}
BENCHMARK(BM_ReplayLoadAndGraph)->Unit(benchmark::kMillisecond);

void BM_ReplaySimulate(benchmark::State& state) {
  const auto loaded = LoadAndBuild(Job().paths);
  const Scenario scenario = MeasuredScenario(loaded->graph);
  for (auto _ : state) {
    SimResult sim = Simulate(loaded->graph, scenario);
    benchmark::DoNotOptimize(sim.end_ns.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(loaded->job.events_read * state.iterations()));
  state.counters["nodes"] = static_cast<double>(loaded->graph.nodes.size());
}
BENCHMARK(BM_ReplaySimulate)->Unit(benchmark::kMillisecond);

void BM_ReplayWhole(benchmark::State& state) {
  const SynthJob& job = Job();
  uint64_t events = 0;
  for (auto _ : state) {
    auto loaded = LoadAndBuild(job.paths);
    SimResult sim = Simulate(loaded->graph, MeasuredScenario(loaded->graph));
    Validate(&loaded->graph, sim.not_run == 0);
    auto iterations = AnalyzeIterations(loaded->job, loaded->graph, sim, {});
    auto stragglers = AnalyzeStragglers(loaded->graph, sim, iterations);
    auto idle = AnalyzeIdle(loaded->graph, sim, iterations);
    auto launches = AnalyzeLaunches(loaded->graph, sim, iterations);
    events = loaded->job.events_read;
    benchmark::DoNotOptimize(iterations.data());
    benchmark::DoNotOptimize(&stragglers);
    benchmark::DoNotOptimize(&idle);
    benchmark::DoNotOptimize(&launches);
  }
  state.SetItemsProcessed(static_cast<int64_t>(events * state.iterations()));
}
BENCHMARK(BM_ReplayWhole)->Unit(benchmark::kMillisecond);

void BM_ReplayAnalysis(benchmark::State& state) {
  const SynthJob& job = Job();
  auto loaded = LoadAndBuild(job.paths);
  const SimResult sim = Simulate(loaded->graph, MeasuredScenario(loaded->graph));
  for (auto _ : state) {
    auto iterations = AnalyzeIterations(loaded->job, loaded->graph, sim, {});
    auto stragglers = AnalyzeStragglers(loaded->graph, sim, iterations);
    auto idle = AnalyzeIdle(loaded->graph, sim, iterations);
    auto launches = AnalyzeLaunches(loaded->graph, sim, iterations);
    benchmark::DoNotOptimize(iterations.data());
    benchmark::DoNotOptimize(&stragglers);
    benchmark::DoNotOptimize(&idle);
    benchmark::DoNotOptimize(&launches);
  }
  state.SetItemsProcessed(static_cast<int64_t>(loaded->job.events_read * state.iterations()));
}
BENCHMARK(BM_ReplayAnalysis)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lumos::bench
