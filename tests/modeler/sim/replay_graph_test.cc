// Hand-built jobs whose replay is worked out by hand: the graph's edges and delays, the
// simulator's runtime syncs and collective coupling, and the what-if primitives.
#include <gtest/gtest.h>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/job_builder.h"

namespace lumos::modeler::testing {
namespace {

using schema::ApiKind;

// Thread 1 launches k1 and k2 on stream 7, synchronises the stream, then launches k3.
//   API  launch1 [0,10)  launch2 [20,30)  sync [40,240)  launch3 [250,260)      (µs)
//   GPU  k1 [15,115)  k2 [115,215)  k3 [270,320)
// The sync waited for k2 (the last op launched on stream 7 when it was called) and woke 25 µs
// after it ended; k1 and k3 started 15 and 20 µs after their launches (the launch binds), k2
// right after k1 (the stream binds). Typical launch latency: the median of {15, 20} = 20.
Job LaunchSyncJob() {
  Job job;
  job.job_id = "toy";
  RankBuilder(&job, 0, 1)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 0, 10, 1)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 20, 10, 2)
      .Api(ApiKind::kStreamSynchronize, "cudaStreamSynchronize", 40, 200, 0, 7)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 250, 10, 3)
      .Kernel("k1", 7, 15, 100, 1)
      .Kernel("k2", 7, 115, 100, 2)
      .Kernel("k3", 7, 270, 50, 3)
      .Step("ProfilerStep#1", 0, 330);
  return job;
}

void ExpectTimes(const Replayed& r, std::string_view name, int64_t start_us, int64_t end_us) {
  const uint32_t n = NodeNamed(r.graph, 0, name);
  EXPECT_EQ(r.sim.start_ns[n], start_us * kUs) << name;
  EXPECT_EQ(r.sim.end_ns[n], end_us * kUs) << name;
}

TEST(ReplayGraphTest, MeasuredDurationsReproduceTheMeasurement) {
  const Job job = LaunchSyncJob();
  const Replayed r = Replay(job);
  const GraphStats& s = r.graph.stats;
  EXPECT_EQ(s.edges_by_kind[static_cast<int>(EdgeKind::kThreadOrder)], 3u);
  EXPECT_EQ(s.edges_by_kind[static_cast<int>(EdgeKind::kLaunch)], 3u);
  EXPECT_EQ(s.edges_by_kind[static_cast<int>(EdgeKind::kStreamOrder)], 2u);
  ASSERT_EQ(r.graph.syncs.size(), 1u);
  EXPECT_EQ(r.graph.syncs[0].target, SyncSpec::Target::kStream);
  EXPECT_EQ(r.graph.syncs[0].wake_ns, 25 * kUs);
  EXPECT_FALSE(r.graph.syncs[0].inferred);
  EXPECT_EQ(r.sim.not_run, 0u);
  for (uint32_t n = 0; n < r.graph.nodes.size(); ++n) {
    EXPECT_EQ(r.sim.start_ns[n], r.graph.nodes[n].start_ns) << r.graph.nodes[n].name;
    EXPECT_EQ(r.sim.end_ns[n], r.graph.nodes[n].end_ns()) << r.graph.nodes[n].name;
  }
  ExecutionGraph graph = r.graph;
  EXPECT_EQ(Validate(&graph), 0u);
}

TEST(ReplayGraphTest, SlowerKernelDelaysTheSyncAndEverythingAfterIt) {
  const Job job = LaunchSyncJob();
  const Replayed r = Replay(job, {"kernel:^k2$=2"});
  ExpectTimes(r, "k2", 115, 315);
  ExpectTimes(r, "cudaStreamSynchronize", 40, 340);  // k2's end + 25 µs wake-up.
  ExpectTimes(r, "k3", 370, 420);                    // Launch at 350 + 20 µs latency.
}

TEST(ReplayGraphTest, FasterKernelsShortenTheSyncAndKeepLaunchLatency) {
  const Job job = LaunchSyncJob();
  const Replayed r = Replay(job, {"kernel:.=0.5"});
  ExpectTimes(r, "k1", 15, 65);
  ExpectTimes(r, "k2", 65, 115);  // Stream-bound: right after k1.
  ExpectTimes(r, "cudaStreamSynchronize", 40, 140);
  ExpectTimes(r, "k3", 170, 195);  // Launch at 150 + 20 µs.
}

TEST(ReplayGraphTest, DroppingHostGapsKeepsLaunchAndStreamOrder) {
  const Job job = LaunchSyncJob();
  const Replayed r = Replay(job, {}, /*drop_gaps=*/true);
  ExpectTimes(r, "k1", 15, 115);
  ExpectTimes(r, "k2", 115, 215);
  ExpectTimes(r, "cudaStreamSynchronize", 20, 240);
  ExpectTimes(r, "k3", 260, 310);
}

TEST(ReplayGraphTest, IterationAndBreakdownFollowTheReplay) {
  const Job job = LaunchSyncJob();
  const Replayed r = Replay(job, {"kernel:^k2$=2"});
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 1u);
  const IterationReport& it = iterations[0];
  EXPECT_EQ(it.name, "ProfilerStep#1");
  EXPECT_EQ(it.measured_ns(), 330 * kUs);
  // The step ended 70 µs after its last API call (launch3 ends at 260); launch3 now ends 360.
  EXPECT_EQ(it.replayed_ns(), 430 * kUs);
  // Measured: compute in [15,215) and [270,320): 250 µs of 330; no communication.
  EXPECT_EQ(it.measured.exposed_compute_ns, 250 * kUs);
  EXPECT_EQ(it.measured.other_ns, 80 * kUs);
  EXPECT_EQ(it.replayed.exposed_compute_ns, 350 * kUs);
  EXPECT_EQ(it.replayed.exposed_comm_ns + it.replayed.overlapped_ns, 0);
  // Critical path ends at launch3, which waited for the sync, which waited for k2.
  EXPECT_EQ(it.critical_length_ns, 430 * kUs);
  bool has_sync_wake = false;
  for (const CriticalItem& c : it.critical_by_class) has_sync_wake |= c.what == "sync wake-up";
  EXPECT_TRUE(has_sync_wake);
}

TEST(ReplayGraphTest, DependenciesOnlyDropsUnexplainedQueueing) {
  Job job = LaunchSyncJob();
  // k2 (launched at 20, after k1 which ends at 115) starts only at 300: nothing recorded
  // explains the wait, so it is reported and dropped by the dependencies-only replay.
  job.ranks[0].kernels[1].start_ns = 300 * kUs;
  job.ranks[0].api_calls[2].duration_ns = 400 * kUs;  // The sync now ends at 440 ...
  job.ranks[0].api_calls[3].start_ns = 450 * kUs;     // ... and launch3 follows.
  job.ranks[0].kernels[2].start_ns = 470 * kUs;
  ExecutionGraph graph = BuildGraph(job, {0});
  EXPECT_EQ(graph.stats.unexplained_gpu_waits, 1u);
  EXPECT_EQ(graph.stats.unexplained_gpu_wait_ns, 185 * kUs);
  const SimResult measured = Simulate(graph, MeasuredScenario(graph));
  const uint32_t k2 = NodeNamed(graph, 0, "k2");
  EXPECT_EQ(measured.start_ns[k2], 300 * kUs);
  const SimResult explained = Simulate(graph, DependenciesOnlyScenario(graph));
  EXPECT_EQ(explained.start_ns[k2], 115 * kUs);
  // The sync returns its measured 40 µs (440 - 400) after k2's earlier end (215).
  EXPECT_EQ(explained.end_ns[NodeNamed(graph, 0, "cudaStreamSynchronize")], 255 * kUs);
}

// Thread 1 launches k1 on stream 1, records event 99 on stream 1, makes stream 2 wait for it
// and launches k2 on stream 2. The agent records the handles, so the edge is exact.
Job EventWaitJob() {
  Job job;
  job.job_id = "toy";
  RankBuilder(&job, 0, 1)
      .Api(ApiKind::kLaunchKernel, "launch1", 0, 5, 1)
      .Api(ApiKind::kEventRecord, "cudaEventRecord", 10, 5, 0, 1, 99)
      .Api(ApiKind::kStreamWaitEvent, "cudaStreamWaitEvent", 20, 5, 0, 2, 99)
      .Api(ApiKind::kLaunchKernel, "launch2", 30, 5, 2)
      .Kernel("k1", 1, 10, 100, 1)
      .Kernel("k2", 2, 112, 10, 2);
  return job;
}

TEST(ReplayGraphTest, EventWaitEdgeComesFromRecordedHandles) {
  const Job job = EventWaitJob();
  const Replayed r = Replay(job);
  EXPECT_EQ(r.graph.stats.edges_by_kind[static_cast<int>(EdgeKind::kEventWait)], 1u);
  EXPECT_EQ(r.graph.stats.inferred_event_waits, 0u);
  ExpectTimes(r, "k2", 112, 122);
  const Replayed slower = Replay(job, {"kernel:^k1$=2"});
  ExpectTimes(slower, "k2", 212, 222);  // Waits for k1 (+2 µs residual), not for its launch.
}

// The agent records the application's stream handles in API calls (0xA1, 0xB2) and CUPTI's
// stream ids in GPU ops (7, 8); launches join the two, so syncs and waits stay exact.
TEST(ReplayGraphTest, ApiStreamHandlesMapToGpuStreamsThroughLaunches) {
  Job job;
  job.job_id = "toy";
  RankBuilder(&job, 0, 1)
      .Api(ApiKind::kLaunchKernel, "launch1", 0, 5, 1, 0xA1)
      .Api(ApiKind::kEventRecord, "cudaEventRecord", 10, 5, 0, 0xA1, 99)
      .Api(ApiKind::kStreamWaitEvent, "cudaStreamWaitEvent", 20, 5, 0, 0xB2, 99)
      .Api(ApiKind::kLaunchKernel, "launch2", 30, 5, 2, 0xB2)
      .Api(ApiKind::kStreamSynchronize, "cudaStreamSynchronize", 40, 90, 0, 0xB2)
      .Kernel("k1", 7, 10, 100, 1)
      .Kernel("k2", 8, 112, 10, 2);
  const Replayed r = Replay(job);
  EXPECT_EQ(r.graph.stats.edges_by_kind[static_cast<int>(EdgeKind::kEventWait)], 1u);
  EXPECT_EQ(r.graph.stats.inferred_event_waits, 0u);
  ASSERT_EQ(r.graph.syncs.size(), 1u);
  EXPECT_EQ(r.graph.syncs[0].target, SyncSpec::Target::kStream);
  EXPECT_FALSE(r.graph.syncs[0].inferred);
  EXPECT_EQ(r.graph.processors[r.graph.syncs[0].stream_processor].id, 8u);
  // k1 twice as long: k2 waits for it, and the sync waits for k2.
  const Replayed slower = Replay(job, {"kernel:^k1$=2"});
  ExpectTimes(slower, "k2", 212, 222);
  ExpectTimes(slower, "cudaStreamSynchronize", 40, 230);
}

// Two ranks, one allreduce (comm 42, seq 0). Rank 1 computes first, so its NCCL kernel starts
// at 60 and rank 0's, started at 10, waits for it: both end at 110; transfer = 110 - 60 = 50.
Job CollectiveJob() {
  Job job;
  job.job_id = "toy";
  RankBuilder(&job, 0, 2)
      .Api(ApiKind::kLaunchKernel, "launch_nccl", 0, 5, 1)
      .Kernel("ncclKernel_AllReduce", 5, 10, 100, 1)
      .Collective(42, 0, 1, 5, 10, 100, 2);
  RankBuilder(&job, 1, 2)
      .Api(ApiKind::kLaunchKernel, "launch_k", 0, 1, 1)
      .Api(ApiKind::kLaunchKernel, "launch_nccl", 1, 1, 2)
      .Kernel("k", 5, 5, 55, 1)
      .Kernel("ncclKernel_AllReduce", 5, 60, 50, 2)
      .Collective(42, 0, 2, 5, 60, 50, 2);
  return job;
}

TEST(ReplayGraphTest, CollectiveInstancesEndTogetherAndWaitingEmerges) {
  const Job job = CollectiveJob();
  const Replayed r = Replay(job, {}, false, /*align=*/true);
  ASSERT_EQ(r.graph.collectives.size(), 1u);
  EXPECT_EQ(r.graph.collectives[0].transfer_ns, 50 * kUs);
  EXPECT_TRUE(r.graph.collectives[0].complete);
  const uint32_t nccl0 = NodeNamed(r.graph, 0, "ncclKernel_AllReduce");
  const uint32_t nccl1 = NodeNamed(r.graph, 1, "ncclKernel_AllReduce");
  EXPECT_EQ(r.sim.end_ns[nccl0], 110 * kUs);
  EXPECT_EQ(r.sim.end_ns[nccl1], 110 * kUs);

  // Rank 1's compute twice as long: rank 0 waits 55 µs more for its peer.
  const Replayed slower = Replay(job, {"kernel:^k$=2"}, false, true);
  EXPECT_EQ(slower.sim.start_ns[nccl0], 10 * kUs);
  EXPECT_EQ(slower.sim.end_ns[nccl0], 165 * kUs);
  EXPECT_EQ(slower.sim.end_ns[nccl1], 165 * kUs);
  EXPECT_EQ(slower.sim.end_cause[nccl0], Cause::kCollective);
  EXPECT_EQ(slower.sim.end_cause_node[nccl0], nccl1);

  // Half the transfer time: both end 25 µs earlier.
  const Replayed faster = Replay(job, {"comm=0.5"}, false, true);
  EXPECT_EQ(faster.sim.end_ns[nccl0], 85 * kUs);
  EXPECT_EQ(faster.sim.end_ns[nccl1], 85 * kUs);
}

TEST(ReplayGraphTest, ClockAlignmentRemovesAHostOffset) {
  Job job = CollectiveJob();
  // Rank 1 on another host whose clock runs 1 ms ahead.
  MoveToHost(&job, 1, "other", 1000);
  const ClockAlignment alignment = AlignClocks(job);
  EXPECT_EQ(alignment.rank_offset_ns[0], 0);
  EXPECT_EQ(alignment.rank_offset_ns[1], -1000 * kUs);
  const Replayed r = Replay(job, {}, false, true);
  EXPECT_EQ(r.graph.collectives[0].transfer_ns, 50 * kUs);
  EXPECT_EQ(r.sim.end_ns[NodeNamed(r.graph, 0, "ncclKernel_AllReduce")], 110 * kUs);
}

TEST(ReplayGraphTest, InferredWaitForImportedTracesIsCountedAndConsistent) {
  // No handles (as Kineto's runtime events): the wait pairs by rule 3, k1's stream.
  Job job;
  job.job_id = "toy";
  RankBuilder(&job, 0, 1)
      .Api(ApiKind::kLaunchKernel, "launch1", 0, 5, 1)
      .Api(ApiKind::kStreamWaitEvent, "cudaStreamWaitEvent", 20, 5, 0)
      .Api(ApiKind::kLaunchKernel, "launch2", 30, 5, 2)
      .Kernel("k1", 1, 10, 100, 1)
      .Kernel("k2", 2, 112, 10, 2);
  const Replayed r = Replay(job);
  EXPECT_EQ(r.graph.stats.inferred_event_waits, 1u);
  EXPECT_EQ(r.graph.stats.unmatched_waits, 0u);
  ExpectTimes(r, "k2", 112, 122);
  // A source that ended after the target started cannot be the one waited for.
  job.ranks[0].kernels[1].start_ns = 50 * kUs;
  const Replayed contradicted = Replay(job);
  EXPECT_EQ(contradicted.graph.stats.inferred_event_waits, 0u);
  EXPECT_EQ(contradicted.graph.stats.unmatched_waits, 1u);
}

TEST(ReplayGraphTest, CycleIsDiagnosedAndNeverHangs) {
  ExecutionGraph g;
  g.ranks = {0};
  g.rank_offset_ns = {0};
  g.processors.resize(2);
  g.processors[1].gpu = true;
  Node a, b;
  a.name = "a";
  b.name = "b";
  b.kind = NodeKind::kKernel;
  b.processor = 1;
  g.nodes = {a, b};
  g.processors[0].nodes = {0};
  g.processors[1].nodes = {1};
  g.edges = {{0, 1, 0, EdgeKind::kLaunch}, {1, 0, 0, EdgeKind::kStreamOrder}};
  g.out_begin = {0, 1, 2};
  EXPECT_GE(Validate(&g), 1u);
  ASSERT_FALSE(g.diagnostics.empty());
  EXPECT_NE(g.diagnostics[0].what.find("cycle"), std::string::npos);
  const SimResult sim = Simulate(g, MeasuredScenario(g));
  EXPECT_EQ(sim.not_run, 2u);
  EXPECT_FALSE(sim.diagnostics.empty());
}

TEST(ReplayGraphTest, CollectiveDeadlockIsReportedNotWaitedFor) {
  // Rank 1's member made to wait for rank 0's member to end: neither can end before the
  // other starts (what a wrongly paired collective would do).
  Job job = CollectiveJob();
  Replayed r = Replay(job);
  const uint32_t nccl0 = NodeNamed(r.graph, 0, "ncclKernel_AllReduce");
  const uint32_t nccl1 = NodeNamed(r.graph, 1, "ncclKernel_AllReduce");
  ExecutionGraph g = r.graph;
  g.edges.push_back({nccl0, nccl1, 0, EdgeKind::kEventWait});
  std::stable_sort(g.edges.begin(), g.edges.end(),
                   [](const Edge& x, const Edge& y) { return x.from < y.from; });
  g.out_begin.assign(g.nodes.size() + 1, 0);
  for (const Edge& e : g.edges) ++g.out_begin[e.from + 1];
  for (size_t i = 1; i < g.out_begin.size(); ++i) g.out_begin[i] += g.out_begin[i - 1];
  const SimResult sim = Simulate(g, MeasuredScenario(g));
  EXPECT_GE(sim.not_run, 2u);
  EXPECT_FALSE(sim.ran(nccl0));
  EXPECT_FALSE(sim.ran(nccl1));
}

TEST(ReplayGraphTest, ParseScaleRejectsBadSpecs) {
  EXPECT_TRUE(ParseScale("kernel:gemm=0.5").ok());
  EXPECT_TRUE(ParseScale("comm=2").ok());
  EXPECT_TRUE(ParseScale("host=0").ok());
  EXPECT_FALSE(ParseScale("kernel:gemm").ok());
  EXPECT_FALSE(ParseScale("kernel:(=2").ok());
  EXPECT_FALSE(ParseScale("comm=-1").ok());
  EXPECT_FALSE(ParseScale("comm=nan").ok());
  EXPECT_FALSE(ParseScale("disk=2").ok());
  EXPECT_FALSE(ParseScale("comm=2x").ok());
}

// GraphOptions::record_sources: every node names the event it was built from, after the
// renumbering in time order (the bundled real example, 8 ranks).
TEST(GraphSourcesTest, EveryNodeNamesItsEvent) {
  auto paths = ExpandTracePaths({std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"});
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  auto job = LoadJob(*paths);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const std::vector<int64_t> offsets(job->ranks.size(), 0);
  EXPECT_TRUE(BuildGraph(*job, offsets).node_source.empty());
  GraphOptions options;
  options.record_sources = true;
  const ExecutionGraph graph = BuildGraph(*job, offsets, options);
  ASSERT_EQ(graph.node_source.size(), graph.nodes.size());
  size_t kernels = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    const RankTrace& rank = job->ranks[node.rank_index];
    const uint32_t source = graph.node_source[n];
    int64_t start = 0;
    std::string_view name = node.name;
    switch (node.kind) {
      case NodeKind::kApiCall:
        ASSERT_LT(source, rank.api_calls.size());
        start = rank.api_calls[source].start_ns;
        EXPECT_EQ(rank.api_calls[source].name, name);
        break;
      case NodeKind::kKernel:
        ASSERT_LT(source, rank.kernels.size());
        start = rank.kernels[source].start_ns;
        EXPECT_EQ(rank.kernels[source].name, name);
        ++kernels;
        break;
      case NodeKind::kMemcpy:
        ASSERT_LT(source, rank.memcpys.size());
        start = rank.memcpys[source].start_ns;
        break;
      case NodeKind::kMemset:
        ASSERT_LT(source, rank.memsets.size());
        start = rank.memsets[source].start_ns;
        break;
    }
    EXPECT_EQ(start, node.start_ns) << "node " << n;
  }
  size_t expected_kernels = 0;
  for (const RankTrace& rank : job->ranks) expected_kernels += rank.kernels.size();
  EXPECT_EQ(kernels, expected_kernels);
}

}  // namespace
}  // namespace lumos::modeler::testing
