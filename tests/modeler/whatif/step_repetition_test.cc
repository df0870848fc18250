// RepeatSteps (modeler/whatif/step_repetition.h): hand-built jobs whose rewritten replay is
// worked out by hand, and the bundled real example (8 DLRM ranks) with a window of every rank's
// work repeated and removed.
#include "modeler/whatif/step_repetition.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "modeler/graph/execution_graph.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/job_builder.h"

namespace lumos::modeler::testing {
namespace {

using schema::ApiKind;
using whatif::RepeatSteps;
using whatif::RewrittenGraph;
using whatif::StepCopies;

// Thread 1 launches a, b, c (100 µs each) on stream 7 back to back, then synchronises.
//   API  launch a [0,5) b [10,15) c [20,25)  sync [30,340)
//   GPU  a [40,140) b [140,240) c [240,340)
// The GPU binds: b and c start when the previous kernel ends.
Job ThreeKernelJob() {
  Job job;
  job.job_id = "toy";
  RankBuilder(&job, 0, 1)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 0, 5, 1)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 10, 5, 2)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 20, 5, 3)
      .Api(ApiKind::kStreamSynchronize, "cudaStreamSynchronize", 30, 310, 0, 7)
      .Kernel("a", 7, 40, 100, 1)
      .Kernel("b", 7, 140, 100, 2)
      .Kernel("c", 7, 240, 100, 3)
      .Step("ProfilerStep#1", 0, 345);
  return job;
}

// The step of kernel `name`: it and its launch call.
StepCopies StepOf(const ExecutionGraph& g, std::string_view name, uint32_t copies) {
  const uint32_t kernel = NodeNamed(g, 0, name);
  return StepCopies{{g.nodes[kernel].launch, kernel}, copies};
}

int64_t End(const ExecutionGraph& g, const SimResult& sim) {
  int64_t end = 0;
  for (uint32_t n = 0; n < g.nodes.size(); ++n) end = std::max(end, sim.end_ns[n]);
  return end;
}

std::vector<std::string_view> StreamNames(const RewrittenGraph& r) {
  std::vector<std::string_view> names;
  for (const Processor& p : r.graph.processors) {
    if (!p.gpu) continue;
    for (uint32_t n : p.nodes) names.push_back(r.graph.nodes[n].name);
  }
  return names;
}

TEST(StepRepetitionTest, NoStepsIsTheMeasuredGraph) {
  const Job job = ThreeKernelJob();
  const Replayed base = Replay(job);
  auto r = RepeatSteps(base.graph, MeasuredScenario(base.graph), {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->graph.nodes.size(), base.graph.nodes.size());
  EXPECT_EQ(r->graph.edges.size(), base.graph.edges.size());
  const SimResult sim = Simulate(r->graph, r->scenario);
  EXPECT_EQ(sim.not_run, 0u);
  for (uint32_t n = 0; n < base.graph.nodes.size(); ++n) {
    const uint32_t m = r->Instance(n, 0);
    EXPECT_EQ(sim.start_ns[m], base.sim.start_ns[n]) << base.graph.nodes[n].name;
    EXPECT_EQ(sim.end_ns[m], base.sim.end_ns[n]) << base.graph.nodes[n].name;
  }
}

TEST(StepRepetitionTest, CopiesRunAfterTheOriginalOnItsStream) {
  const Job job = ThreeKernelJob();
  const Replayed base = Replay(job);
  auto r = RepeatSteps(base.graph, MeasuredScenario(base.graph), {StepOf(base.graph, "b", 3)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(StreamNames(*r), (std::vector<std::string_view>{"a", "b", "b", "b", "c"}));
  EXPECT_EQ(r->graph.nodes.size(), base.graph.nodes.size() + 4);  // 2 more launches, 2 kernels.
  ExecutionGraph graph = r->graph;
  EXPECT_EQ(Validate(&graph), 0u);
  const SimResult sim = Simulate(r->graph, r->scenario);
  EXPECT_EQ(sim.not_run, 0u);
  // GPU-bound: two more 100 µs kernels, and the sync waits for c, now 200 µs later.
  EXPECT_EQ(End(r->graph, sim), End(base.graph, base.sim) + 200 * kUs);
  const uint32_t b = NodeNamed(base.graph, 0, "b");
  ASSERT_EQ(r->Instances(b), 3u);
  for (uint32_t k = 0; k < 3; ++k) {
    EXPECT_EQ(r->origin[r->Instance(b, k)], b);
    EXPECT_EQ(r->copy[r->Instance(b, k)], k);
    EXPECT_EQ(sim.start_ns[r->Instance(b, k)], (140 + 100 * k) * kUs);
    // Each copy is launched by its own copy of the launch call.
    const uint32_t launch = r->graph.nodes[r->Instance(b, k)].launch;
    EXPECT_EQ(r->origin[launch], base.graph.nodes[b].launch);
    EXPECT_EQ(r->copy[launch], k);
  }
}

TEST(StepRepetitionTest, ARemovedStepIsGoneAndItsNeighboursJoin) {
  const Job job = ThreeKernelJob();
  const Replayed base = Replay(job);
  auto r = RepeatSteps(base.graph, MeasuredScenario(base.graph), {StepOf(base.graph, "b", 0)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(StreamNames(*r), (std::vector<std::string_view>{"a", "c"}));
  ExecutionGraph graph = r->graph;
  EXPECT_EQ(Validate(&graph), 0u);
  const SimResult sim = Simulate(r->graph, r->scenario);
  EXPECT_EQ(sim.not_run, 0u);
  EXPECT_EQ(End(r->graph, sim), End(base.graph, base.sim) - 100 * kUs);
  EXPECT_EQ(r->Instances(NodeNamed(base.graph, 0, "b")), 0u);
}

TEST(StepRepetitionTest, ANodeInTwoStepsIsAnError) {
  const Job job = ThreeKernelJob();
  const Replayed base = Replay(job);
  const uint32_t b = NodeNamed(base.graph, 0, "b");
  auto r = RepeatSteps(base.graph, MeasuredScenario(base.graph),
                       {StepCopies{{b}, 2}, StepCopies{{b}, 2}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("('b') is in steps 0 and 1"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(RepeatSteps(base.graph, MeasuredScenario(base.graph),
                           {StepCopies{{static_cast<uint32_t>(base.graph.nodes.size())}, 2}})
                   .ok());
}

// Thread 1 synchronises stream 7, then launches k1; thread 2 is busy in a 36 µs call, then
// launches k2 onto the same stream (after k1 in stream order).
//   thread 1  sync [10,15)  launch1 [20,25)               k1 [30,80)
//   thread 2  a [0,2)  busy [2,38)  launch2 [40,45)       k2 [80,130)
// Without the busy call thread 2 launches k2 before thread 1 synchronises; the sync must not
// wait for k2, queued behind k1, which thread 1 launches only after the sync (the simulator's
// launched-prefix rule; waiting would never end).
TEST(StepRepetitionTest, ASyncNeverWaitsBehindAnOpNotYetLaunched) {
  Job job;
  job.job_id = "toy";
  RankBuilder(&job, 0, 1)
      .Api(ApiKind::kStreamSynchronize, "cudaStreamSynchronize", 10, 5, 0, 7)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 20, 5, 1)
      .Api(ApiKind::kOther, "a", 0, 2, 0, 0, 0, /*thread=*/2)
      .Api(ApiKind::kOther, "busy", 2, 36, 0, 0, 0, /*thread=*/2)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 40, 5, 2, 0, 0, /*thread=*/2)
      .Kernel("k1", 7, 30, 50, 1)
      .Kernel("k2", 7, 80, 50, 2);
  const Replayed base = Replay(job);
  ASSERT_EQ(base.sim.not_run, 0u);
  const uint32_t busy = NodeNamed(base.graph, 0, "busy");
  auto r = RepeatSteps(base.graph, MeasuredScenario(base.graph), {StepCopies{{busy}, 0}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const SimResult sim = Simulate(r->graph, r->scenario);
  EXPECT_EQ(sim.not_run, 0u);
  const uint32_t sync = r->Instance(NodeNamed(base.graph, 0, "cudaStreamSynchronize"), 0);
  EXPECT_EQ(sim.end_ns[sync], 15 * kUs);  // Nothing of stream 7 was launched in order by then.
}

// The same part of the program on every rank, as a structure segment holds it: on each rank,
// the host calls from the launch of its collective `first` to that of `last` (its collectives
// in launch order; DLRM's ranks run the same 8), and the GPU ops they launched.
std::vector<uint32_t> Between(const ExecutionGraph& g, size_t first, size_t last) {
  std::vector<std::vector<int64_t>> launches(g.ranks.size());
  for (const CollectiveGroup& c : g.collectives) {
    for (uint32_t m : c.nodes) {
      const Node& x = g.nodes[m];
      if (x.launch != kNoNode) launches[x.rank_index].push_back(g.nodes[x.launch].start_ns);
    }
  }
  for (auto& times : launches) std::sort(times.begin(), times.end());
  std::vector<uint32_t> nodes;
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    const Node& x = g.nodes[n];
    const uint32_t host = x.gpu() ? x.launch : n;
    const auto& times = launches[x.rank_index];
    if (host == kNoNode || times.size() <= last) continue;
    const int64_t t = g.nodes[host].start_ns;
    if (t >= times[first] && t < times[last]) nodes.push_back(n);
  }
  return nodes;
}

// How many of the window's nodes have exactly one instance after a rewrite that repeats or
// removes it: the members of collectives the window cuts.
size_t Kept(const RewrittenGraph& r, const std::vector<uint32_t>& window) {
  size_t kept = 0;
  for (uint32_t n : window) kept += r.Instances(n) == 1 ? 1 : 0;
  return kept;
}

// The real example: a part of all 8 ranks' program (with its syncs, event waits and
// collectives, members on every rank) repeated twice more, and removed.
TEST(StepRepetitionTest, RealJobWindowRepeatsAndRemovesCleanly) {
  auto paths = ExpandTracePaths({std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"});
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  auto job = LoadJob(*paths);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const ClockAlignment alignment = AlignClocks(*job);
  const ExecutionGraph g = BuildGraph(*job, alignment.rank_offset_ns);
  const Scenario measured = MeasuredScenario(g);
  const SimResult base = Simulate(g, measured);
  ASSERT_EQ(base.not_run, 0u);
  const int64_t base_end = End(g, base);
  ExecutionGraph validated = g;
  const uint64_t base_issues = Validate(&validated);
  for (const auto& [first, last] : std::vector<std::pair<size_t, size_t>>{{0, 2}, {2, 5}, {5, 7}}) {
    SCOPED_TRACE("from collective " + std::to_string(first) + " to " + std::to_string(last));
    const std::vector<uint32_t> window = Between(g, first, last);
    ASSERT_FALSE(window.empty());
    for (uint32_t copies : {0u, 3u}) {
      auto r = RepeatSteps(g, measured, {StepCopies{window, copies}});
      ASSERT_TRUE(r.ok()) << r.status().message();
      ExecutionGraph rewritten = r->graph;
      // The imported trace's own issues (ops without a launch, unpaired waits), no new ones.
      EXPECT_EQ(Validate(&rewritten), base_issues);
      const SimResult sim = Simulate(r->graph, r->scenario);
      EXPECT_EQ(sim.not_run, 0u);
      // Collectives cut by the window (their members on other ranks outside it) stay once.
      const size_t kept = Kept(*r, window);
      if (copies == 0) {
        EXPECT_EQ(r->graph.nodes.size(), g.nodes.size() - window.size() + kept);
        EXPECT_LE(End(r->graph, sim), base_end);
      } else {
        EXPECT_EQ(r->graph.nodes.size(), g.nodes.size() + 2 * (window.size() - kept));
        EXPECT_GT(End(r->graph, sim), base_end);
      }
    }
  }
}

}  // namespace
}  // namespace lumos::modeler::testing
