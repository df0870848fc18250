// Thread hand-offs (modeler/graph/thread_handoffs.cc): one host thread waiting for another,
// inferred from the calls' times. Hand-built jobs worked out by hand, and the real PyTorch
// loop of ../shared/data/traces/h200-pytorch, whose main thread waits across the autograd
// thread's backward every step.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/sim/simulator.h"
#include "tests/testing/job_builder.h"

namespace lumos::modeler::testing {
namespace {

using schema::ApiKind;

constexpr uint32_t kMain = 1, kAutograd = 2;

// One step as PyTorch runs it (µs): the main thread launches forward, waits while the autograd
// thread launches backward, then launches the optimizer and synchronizes.
//   main      fwd1 [0,10)  fwd2 [20,30)                       opt [700,710)  sync [720,1020)
//   autograd  (last step's bwd0 [-500,-490))  bwd1 [100,110)  bwd2 [300,310)  bwd3 [600,610)
//   stream 7  one kernel per launch, 50 µs each, 5 µs after its launch (or after the last)
Job ForwardBackwardJob(int64_t main_gap_from = 30) {
  Job job;
  job.job_id = "handoff";
  RankBuilder b(&job, 0, 1);
  b.Api(ApiKind::kLaunchKernel, "bwd0", -500, 10, 1, 7, 0, kAutograd)
      .Api(ApiKind::kLaunchKernel, "fwd1", 0, 10, 2, 7, 0, kMain)
      .Api(ApiKind::kLaunchKernel, "fwd2", main_gap_from - 10, 10, 3, 7, 0, kMain)
      .Api(ApiKind::kLaunchKernel, "bwd1", 100, 10, 4, 7, 0, kAutograd)
      .Api(ApiKind::kLaunchKernel, "bwd2", 300, 10, 5, 7, 0, kAutograd)
      .Api(ApiKind::kLaunchKernel, "bwd3", 600, 10, 6, 7, 0, kAutograd)
      .Api(ApiKind::kLaunchKernel, "opt", 700, 10, 7, 7, 0, kMain)
      .Api(ApiKind::kStreamSynchronize, "cudaStreamSynchronize", 720, 300, 0, 7, 0, kMain)
      .Kernel("k_bwd0", 7, -495, 50, 1)
      .Kernel("k_fwd1", 7, 5, 50, 2)
      .Kernel("k_fwd2", 7, 55, 50, 3)
      .Kernel("k_bwd1", 7, 105, 50, 4)
      .Kernel("k_bwd2", 7, 305, 50, 5)
      .Kernel("k_bwd3", 7, 605, 50, 6)
      .Kernel("k_opt", 7, 705, 50, 7)
      .Step("step", 0, 1020, kMain);
  return job;
}

std::vector<std::pair<std::string, std::string>> Handoffs(const ExecutionGraph& g,
                                                          std::vector<int64_t>* delays = nullptr) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Edge& e : g.edges) {
    if (e.kind != EdgeKind::kThreadHandoff) continue;
    EXPECT_TRUE(e.inferred);
    out.emplace_back(g.nodes[e.from].name, g.nodes[e.to].name);
    if (delays) delays->push_back(e.delay_ns);
  }
  return out;
}

int64_t ThreadOrderDelayInto(const ExecutionGraph& g, uint32_t node) {
  for (const Edge& e : g.edges) {
    if (e.kind == EdgeKind::kThreadOrder && e.to == node) return e.delay_ns;
  }
  return -1;
}

TEST(ThreadHandoffTest, TheMainThreadForksAndJoinsTheAutogradThread) {
  const Job job = ForwardBackwardJob();
  const Replayed r = Replay(job);
  std::vector<int64_t> delays;
  const auto handoffs = Handoffs(r.graph, &delays);
  ASSERT_EQ(handoffs.size(), 2u);
  // Edges come grouped by source, sources in time order: the fork, then the join.
  EXPECT_EQ(handoffs[0], std::make_pair(std::string("fwd2"), std::string("bwd1")));
  EXPECT_EQ(delays[0], 70 * kUs);
  EXPECT_EQ(handoffs[1], std::make_pair(std::string("bwd3"), std::string("opt")));
  EXPECT_EQ(delays[1], 90 * kUs);
  EXPECT_EQ(r.graph.stats.edges_by_kind[static_cast<int>(EdgeKind::kThreadHandoff)], 2u);
  // The gaps the hand-off explains are waits, not work.
  EXPECT_EQ(ThreadOrderDelayInto(r.graph, NodeNamed(r.graph, 0, "opt")), 0);
  EXPECT_EQ(ThreadOrderDelayInto(r.graph, NodeNamed(r.graph, 0, "bwd1")), 0);
  EXPECT_EQ(ThreadOrderDelayInto(r.graph, NodeNamed(r.graph, 0, "bwd2")), 190 * kUs);
  // Replayed as measured, nothing moves.
  for (uint32_t n = 0; n < r.graph.nodes.size(); ++n) {
    EXPECT_EQ(r.sim.start_ns[n], r.graph.nodes[n].start_ns) << r.graph.nodes[n].name;
    EXPECT_EQ(r.sim.end_ns[n], r.graph.nodes[n].end_ns()) << r.graph.nodes[n].name;
  }
  ExecutionGraph graph = r.graph;
  EXPECT_EQ(Validate(&graph), 0u);
}

// Work added on the thread that ran reaches the thread that waited, and work added before the
// fork reaches the forked thread: the optimizer, the sync and the step end move with them.
TEST(ThreadHandoffTest, LongerBackwardDelaysTheOptimizerAndLongerForwardDelaysBackward) {
  const Job job = ForwardBackwardJob();
  const Replayed r = Replay(job);
  const ExecutionGraph& g = r.graph;
  Scenario s = MeasuredScenario(g);
  s.duration_ns[NodeNamed(g, 0, "bwd2")] += 100 * kUs;
  SimResult slower_backward = Simulate(g, s);
  EXPECT_EQ(slower_backward.start_ns[NodeNamed(g, 0, "opt")], 800 * kUs);
  EXPECT_EQ(slower_backward.end_ns[NodeNamed(g, 0, "cudaStreamSynchronize")], 1120 * kUs);

  s = MeasuredScenario(g);
  s.duration_ns[NodeNamed(g, 0, "fwd2")] += 100 * kUs;
  SimResult slower_forward = Simulate(g, s);
  EXPECT_EQ(slower_forward.start_ns[NodeNamed(g, 0, "bwd1")], 200 * kUs);
  EXPECT_EQ(slower_forward.start_ns[NodeNamed(g, 0, "opt")], 800 * kUs);

  // And faster: the autograd thread no longer waits for last step's gap, only for the fork.
  s = MeasuredScenario(g);
  s.duration_ns[NodeNamed(g, 0, "fwd1")] = 0;
  SimResult faster_forward = Simulate(g, s);
  EXPECT_EQ(faster_forward.start_ns[NodeNamed(g, 0, "bwd1")], 90 * kUs);
}

// What the rule leaves alone: short gaps (the framework's own work between launches), and a
// gap the other thread was already busy at the start of (nothing says who waited for whom).
TEST(ThreadHandoffTest, ShortGapsAndBusyThreadsAreNoHandoff) {
  {
    Job job;
    job.job_id = "short";
    RankBuilder(&job, 0, 1)
        .Api(ApiKind::kLaunchKernel, "a", 0, 10, 1, 7, 0, kMain)
        .Api(ApiKind::kLaunchKernel, "u1", 20, 10, 2, 7, 0, kAutograd)
        .Api(ApiKind::kLaunchKernel, "u2", 100, 10, 3, 7, 0, kAutograd)
        .Api(ApiKind::kLaunchKernel, "b", 150, 10, 4, 7, 0, kMain)
        .Kernel("k1", 7, 5, 5, 1)
        .Kernel("k2", 7, 25, 5, 2)
        .Kernel("k3", 7, 105, 5, 3)
        .Kernel("k4", 7, 155, 5, 4);
    EXPECT_TRUE(Handoffs(Replay(job).graph).empty());  // A 140-µs gap.
  }
  {
    // The autograd thread's call before the gap ends after the main thread's call does.
    Job job;
    job.job_id = "busy";
    RankBuilder(&job, 0, 1)
        .Api(ApiKind::kLaunchKernel, "u0", 0, 40, 1, 7, 0, kAutograd)
        .Api(ApiKind::kLaunchKernel, "a", 0, 10, 2, 7, 0, kMain)
        .Api(ApiKind::kLaunchKernel, "u1", 100, 10, 3, 7, 0, kAutograd)
        .Api(ApiKind::kLaunchKernel, "u2", 900, 10, 4, 7, 0, kAutograd)
        .Api(ApiKind::kLaunchKernel, "b", 1000, 10, 5, 7, 0, kMain)
        .Kernel("k0", 7, 45, 5, 1)
        .Kernel("k1", 7, 50, 5, 2)
        .Kernel("k2", 7, 105, 5, 3)
        .Kernel("k3", 7, 905, 5, 4)
        .Kernel("k4", 7, 1005, 5, 5);
    const auto handoffs = Handoffs(Replay(job).graph);
    // No fork from a (u0 was running); the autograd thread's own gap [40, 100) is short.
    for (const auto& [from, to] : handoffs) EXPECT_NE(from, "a");
    EXPECT_TRUE(handoffs.empty());
  }
  {
    // The other thread works only at the start of a long gap: the waiter's resumption is not
    // explained by it.
    Job partly;
    partly.job_id = "partly";
    RankBuilder(&partly, 0, 1)
        .Api(ApiKind::kLaunchKernel, "a", 0, 10, 1, 7, 0, kMain)
        .Api(ApiKind::kLaunchKernel, "u1", 20, 10, 2, 7, 0, kAutograd)
        .Api(ApiKind::kLaunchKernel, "u2", 60, 10, 3, 7, 0, kAutograd)
        .Api(ApiKind::kLaunchKernel, "b", 1000, 10, 4, 7, 0, kMain)
        .Kernel("k1", 7, 5, 5, 1)
        .Kernel("k2", 7, 25, 5, 2)
        .Kernel("k3", 7, 65, 5, 3)
        .Kernel("k4", 7, 1005, 5, 4);
    EXPECT_TRUE(Handoffs(Replay(partly).graph).empty());
  }
}

// The real loop: every step, the main thread's last forward call forks the autograd thread
// (pt_autograd_0) and its last backward call lets the main thread go on to the optimizer.
TEST(ThreadHandoffTest, TheRealPyTorchLoopHandsBackwardToItsAutogradThread) {
  const std::string path =
      std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch/est-base.pb.zst";
  StatusOr<Job> job = LoadJob({path});
  ASSERT_TRUE(job.ok()) << job.status().message();
  const ExecutionGraph g = BuildGraph(*job, {}, {});
  // The main thread opens the NVTX `step` ranges; the one other thread making CUDA calls is
  // PyTorch's autograd thread.
  uint64_t main_thread = 0, autograd_thread = 0;
  for (const schema::NvtxEvent& range : job->ranks[0].nvtx) {
    if (range.name == "step") main_thread = range.thread_id;
  }
  for (const schema::ApiCallEvent& call : job->ranks[0].api_calls) {
    if (call.thread_id != main_thread) autograd_thread = call.thread_id;
  }
  ASSERT_NE(main_thread, 0u);
  ASSERT_NE(autograd_thread, 0u);
  int forks = 0, joins = 0;
  for (const Edge& e : g.edges) {
    if (e.kind != EdgeKind::kThreadHandoff) continue;
    const uint64_t from = g.processors[g.nodes[e.from].processor].id;
    const uint64_t to = g.processors[g.nodes[e.to].processor].id;
    if (from == main_thread && to == autograd_thread) ++forks;
    if (from == autograd_thread && to == main_thread) ++joins;
    EXPECT_LT(e.delay_ns, 2'000'000) << "a hand-off takes far less than the 8-ms wait";
  }
  // 40 steps recorded; the trace's last backward has no step after it.
  EXPECT_EQ(forks, 40);
  EXPECT_EQ(joins, 40);
}

}  // namespace
}  // namespace lumos::modeler::testing
