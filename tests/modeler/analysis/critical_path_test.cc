// The critical path on hand-built jobs whose walk is worked out by hand: it tiles the
// iteration (its length is the replayed iteration, its classes add up to it), a host call that
// blocked on its own copy is not counted again beside the GPU work it waited for, and a
// dependency the measurement violates (negative slack) adds nothing.
#include <gtest/gtest.h>

#include <string>

#include "modeler/analysis/iteration_analysis.h"
#include "tests/testing/job_builder.h"

namespace lumos::modeler::testing {
namespace {

using schema::ApiKind;

// The time of one class on the iteration's critical path (0 when it is not on it).
int64_t ClassNs(const IterationReport& it, std::string_view what) {
  for (const CriticalItem& c : it.critical_by_class) {
    if (c.what == what) return c.ns;
  }
  return 0;
}

int64_t SumOfClasses(const IterationReport& it) {
  int64_t sum = 0;
  for (const CriticalItem& c : it.critical_by_class) sum += c.ns;
  return sum;
}

IterationReport OnlyIteration(const Job& job) {
  const Replayed r = Replay(job);
  EXPECT_EQ(r.sim.not_run, 0u);
  auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  EXPECT_EQ(iterations.size(), 1u);
  return iterations.empty() ? IterationReport{} : iterations[0];
}

// Thread 1, stream 7 (µs):
//   API  launch1 [0,5)  cudaMemcpyAsync [10,110)  launch2 [112,116)  sync [117,125)
//   GPU  gemm [10,100)  memcpy (to pageable memory) [100,108)  elementwise [118,124)
// The copy to pageable memory is synchronous: the call returns 2 µs after its copy, which
// waited for the gemm. The sync waits for the elementwise kernel; the step ends at 127. The
// typical launch latency is 10 µs (the upper median of 10 and 6).
TEST(CriticalPathTest, BlockedCopyCallIsCountedOnceThroughTheGpuChain) {
  const Job job = BlockedCopyJob();
  const IterationReport it = OnlyIteration(job);
  ASSERT_EQ(it.replayed_ns(), 127 * kUs);
  EXPECT_EQ(it.critical_length_ns, 127 * kUs);
  EXPECT_EQ(SumOfClasses(it), it.critical_length_ns);
  // Walked back from 127: the host after the sync [125,127), the sync's wake-up [124,125),
  // elementwise [118,124), its launch latency [112,118), the host gap before launch2
  // [110,112), the copy call's wake-up after its copy [108,110), the copy [100,108), the gemm
  // it waited for [10,100) and the gemm's launch latency [0,10). The 100 µs the copy call
  // blocked are the GPU's (gemm, copy), not host API time as well.
  EXPECT_EQ(ClassNs(it, "host work after the last API call"), 2 * kUs);
  EXPECT_EQ(ClassNs(it, "sync wake-up"), 3 * kUs);
  EXPECT_EQ(ClassNs(it, "kernel elementwise"), 6 * kUs);
  EXPECT_EQ(ClassNs(it, "launch latency"), 16 * kUs);
  EXPECT_EQ(ClassNs(it, "host gap"), 2 * kUs);
  EXPECT_EQ(ClassNs(it, "memcpy/memset"), 8 * kUs);
  EXPECT_EQ(ClassNs(it, "kernel gemm"), 90 * kUs);
  EXPECT_EQ(ClassNs(it, "host API calls"), 0);
}

// Thread 1 launches on streams 7, 8 and 9 and synchronises the device (µs):
//   API  launch1 [0,5)  launch2 [20,25)  launch3 [40,45)  cudaDeviceSynchronize [46,112)
//   GPU  gemm [10,20) on 7  elementwise [30,35) on 8  reduce [100,110) on 9
// The rank's typical launch latency is 10 µs (the median of 10, 10, 60): the reduce kernel
// waited 50 µs beyond it, for nothing the trace shows. The step ends at 115.
TEST(CriticalPathTest, LaunchWaitBeyondTheTypicalLatencyIsAGpuQueueGap) {
  Job job;
  job.job_id = "late-kernel";
  RankBuilder(&job, 0, 1)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 0, 5, 1)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 20, 5, 2)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 40, 5, 3)
      .Api(ApiKind::kDeviceSynchronize, "cudaDeviceSynchronize", 46, 66, 0)
      .Kernel("gemm_kernel", 7, 10, 10, 1)
      .Kernel("elementwise_kernel", 8, 30, 5, 2)
      .Kernel("reduce_kernel", 9, 100, 10, 3)
      .Step("ProfilerStep#1", 0, 115);
  const IterationReport it = OnlyIteration(job);
  ASSERT_EQ(it.replayed_ns(), 115 * kUs);
  EXPECT_EQ(it.critical_length_ns, 115 * kUs);
  EXPECT_EQ(SumOfClasses(it), it.critical_length_ns);
  // [112,115) host, [110,112) wake-up, reduce [100,110), its wait after launch3: [50,100) in
  // the queue, [40,50) launch latency; then the host: gaps [25,40) and [5,20), launch2
  // [20,25) and launch1 [0,5).
  EXPECT_EQ(ClassNs(it, "host work after the last API call"), 3 * kUs);
  EXPECT_EQ(ClassNs(it, "sync wake-up"), 2 * kUs);
  EXPECT_EQ(ClassNs(it, "kernel reduction"), 10 * kUs);
  EXPECT_EQ(ClassNs(it, "GPU queue gap"), 50 * kUs);
  EXPECT_EQ(ClassNs(it, "launch latency"), 10 * kUs);
  EXPECT_EQ(ClassNs(it, "host gap"), 30 * kUs);
  EXPECT_EQ(ClassNs(it, "host API calls"), 10 * kUs);
}

// Thread 1, stream 7 (µs):
//   API  launch1 [0,5)  launch2 [6,10)  sync [11,79)
//   GPU  gemm [10,60)  elementwise [58,78): it starts 2 µs before the gemm, its stream
//        predecessor, ends (clock skew), so the stream-order edge has negative slack.
TEST(CriticalPathTest, NegativeSlackDependencyAddsNothing) {
  Job job;
  job.job_id = "negative-slack";
  RankBuilder(&job, 0, 1)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 0, 5, 1)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 6, 4, 2)
      .Api(ApiKind::kStreamSynchronize, "cudaStreamSynchronize", 11, 68, 0, 7)
      .Kernel("gemm_kernel", 7, 10, 50, 1)
      .Kernel("elementwise_kernel", 7, 58, 20, 2)
      .Step("ProfilerStep#1", 0, 80);
  const IterationReport it = OnlyIteration(job);
  ASSERT_EQ(it.replayed_ns(), 80 * kUs);
  EXPECT_EQ(it.critical_length_ns, 80 * kUs);
  EXPECT_EQ(SumOfClasses(it), it.critical_length_ns);
  // [79,80) host, [78,79) wake-up, elementwise [58,78); the gemm counts only up to 58, where
  // the walk already is, not again over [58,60); its launch latency [0,10).
  EXPECT_EQ(ClassNs(it, "host work after the last API call"), 1 * kUs);
  EXPECT_EQ(ClassNs(it, "sync wake-up"), 1 * kUs);
  EXPECT_EQ(ClassNs(it, "kernel elementwise"), 20 * kUs);
  EXPECT_EQ(ClassNs(it, "kernel gemm"), 48 * kUs);
  EXPECT_EQ(ClassNs(it, "launch latency"), 10 * kUs);
}

// Thread 1, stream 7 (µs):
//   API  launch1 [0,5)  cudaDeviceSynchronize [20,26)  launch2 [30,34)
//   GPU  gemm [10,100)
// The sync returned at 26, long before the gemm it is taken to wait for ended (100): its
// measured wake-up is negative (-74 µs). The step ends at 40.
TEST(CriticalPathTest, SyncThatReturnedBeforeItsTargetEndedAddsNothing) {
  Job job;
  job.job_id = "early-sync";
  RankBuilder(&job, 0, 1)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 0, 5, 1)
      .Api(ApiKind::kDeviceSynchronize, "cudaDeviceSynchronize", 20, 6, 0)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 30, 4, 2)
      .Kernel("gemm_kernel", 7, 10, 90, 1)
      .Step("ProfilerStep#1", 0, 40)
      .Step("ProfilerStep#2", 40, 60);  // Ends the first at 40, before the gemm does.
  const Replayed r = Replay(job);
  AnalysisOptions first;
  ASSERT_TRUE(SetIterationChoice("1", &first).ok());
  const std::vector<IterationReport> iterations = AnalyzeIterations(job, r.graph, r.sim, first);
  ASSERT_EQ(iterations.size(), 1u);
  const IterationReport& it = iterations[0];
  ASSERT_EQ(it.replayed_ns(), 40 * kUs);
  EXPECT_EQ(it.critical_length_ns, 40 * kUs);
  EXPECT_EQ(SumOfClasses(it), it.critical_length_ns);
  // [34,40) host, launch2 [30,34), the host gap [26,30); the sync ended when the replay says
  // its target did (minus the measured negative wake-up), so the walk follows the gemm, but
  // only below 26: [10,26); then its launch latency [0,10).
  EXPECT_EQ(ClassNs(it, "host work after the last API call"), 6 * kUs);
  EXPECT_EQ(ClassNs(it, "host API calls"), 4 * kUs);
  EXPECT_EQ(ClassNs(it, "host gap"), 4 * kUs);
  EXPECT_EQ(ClassNs(it, "kernel gemm"), 16 * kUs);
  EXPECT_EQ(ClassNs(it, "launch latency"), 10 * kUs);
}

}  // namespace
}  // namespace lumos::modeler::testing
