// Idle time and launch statistics on hand-built jobs whose every number is worked out by hand
// below: a gap waiting for the host, a gap waiting on an event from another stream, a host
// blocked in a sync, a kernel shorter than its launch call, a queue that builds up and a launch
// into a full queue; per stream, per GPU, per thread, per rank and for the job; the text
// section's top-5 cut and the JSON fields.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/replay/idle_breakdown.h"
#include "modeler/replay/launch_stats.h"
#include "modeler/replay/replay_report.h"
#include "modeler/replay/sorted_runs.h"
#include "tests/testing/job_builder.h"

namespace lumos::modeler::testing {
namespace {

using schema::ApiKind;

// One rank, one step [0,200) µs, thread 1:
//   L1 [0,5)     launches k1 on stream 1 [10,30)
//   L2 [50,60)   launches k2 on stream 1 [62,64)    (2 µs of GPU for a 10 µs launch: short)
//   L3 [65,67)   launches k3 on stream 1 [70,120)
//   cudaEventRecord [68,69) on stream 1 (after k3), cudaStreamWaitEvent [69,70) on stream 2
//   L4 [71,73)   launches k4 on stream 2 [125,135)  (waits for k3's end, 120, by the event)
//   L5 [136,138) launches k5 on stream 1 [150,180)
//   cudaStreamSynchronize [140,185) on stream 1      (blocked until k5 ends, 180, +5 wake-up)
void AddEventJob(Job* job, int32_t rank, int32_t world) {
  RankBuilder(job, rank, world)
      .Api(ApiKind::kLaunchKernel, "L1", 0, 5, 1, 1)
      .Api(ApiKind::kLaunchKernel, "L2", 50, 10, 2, 1)
      .Api(ApiKind::kLaunchKernel, "L3", 65, 2, 3, 1)
      .Api(ApiKind::kEventRecord, "cudaEventRecord", 68, 1, 0, 1, 99)
      .Api(ApiKind::kStreamWaitEvent, "cudaStreamWaitEvent", 69, 1, 0, 2, 99)
      .Api(ApiKind::kLaunchKernel, "L4", 71, 2, 4, 2)
      .Api(ApiKind::kLaunchKernel, "L5", 136, 2, 5, 1)
      .Api(ApiKind::kStreamSynchronize, "cudaStreamSynchronize", 140, 45, 0, 1)
      .Kernel("k1", 1, 10, 20, 1)
      .Kernel("k2", 1, 62, 2, 2)
      .Kernel("k3", 1, 70, 50, 3)
      .Kernel("k4", 2, 125, 10, 4)
      .Kernel("k5", 1, 150, 30, 5)
      .Step("ProfilerStep#1", 0, 200);
}

Job EventJob() {
  Job job;
  job.job_id = "idle";
  AddEventJob(&job, 0, 1);
  return job;
}

const StreamIdle& StreamOf(const IdleTimes& t, uint64_t id) {
  for (const StreamIdle& s : t.streams) {
    if (s.stream == id) return s;
  }
  ADD_FAILURE() << "no stream " << id;
  return t.streams.front();
}

void ExpectSplit(const IdleSplit& s, int64_t host_us, int64_t dependency_us, int64_t other_us,
                 const char* what) {
  EXPECT_EQ(s.host_wait_ns, host_us * kUs) << what;
  EXPECT_EQ(s.dependency_wait_ns, dependency_us * kUs) << what;
  EXPECT_EQ(s.other_ns, other_us * kUs) << what;
}

TEST(IdleBreakdownTest, GapsSplitIntoHostWaitDependencyWaitAndOther) {
  const Job job = EventJob();
  const Replayed r = Replay(job);
  ASSERT_EQ(r.sim.not_run, 0u);
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 1u);
  ASSERT_EQ(iterations[0].measured_start_ns, 0);
  ASSERT_EQ(iterations[0].measured_end_ns, 200 * kUs);
  const IdleReport idle = AnalyzeIdle(r.graph, r.sim, iterations);
  ASSERT_EQ(idle.iterations.size(), 1u);
  const IdleTimes& it = idle.iterations[0];
  EXPECT_EQ(it.measured_window_ns, 200 * kUs);
  ASSERT_EQ(it.streams.size(), 2u);
  // Stream 1 (ops k1 k2 k3 k5): gaps
  //   [0,10)    before k1, launched at 0:       other 10
  //   [30,62)   before k2, launched at 50:      host wait 20, other 12
  //   [64,70)   before k3, launched at 65:      host wait 1, other 5
  //   [120,150) before k5, launched at 136:     host wait 16, other 14
  //   [180,200) no next op:                     other 20
  // = host wait 37, dependency 0, other 61 (idle 98).
  ExpectSplit(StreamOf(it, 1).measured, 37, 0, 61, "stream 1");
  // Stream 2 (op k4): [0,125) before k4, launched at 71, its event's op k3 ends at 120: host
  // wait [0,71) 71, dependency wait [71,120) 49, other [120,125) 5; [135,200) other 65.
  ExpectSplit(StreamOf(it, 2).measured, 71, 49, 70, "stream 2");
  // The GPU (no op on either stream): [0,10) other 10; [30,62) 20 + 12; [64,70) 1 + 5;
  // [120,125) before k4 (launched at 71, k3 ended at 120): other 5; [135,150) before k5
  // (launched at 136): host wait 1, other 14; [180,200) other 20.
  ExpectSplit(it.measured_gpu, 22, 0, 66, "GPU");
  // Thread 1: sync [140,185) 45; other calls 5+10+2+1+1+2+2 = 23; between calls
  // [5,50) 45 + [60,65) 5 + [67,68) 1 + [70,71) 1 + [73,136) 63 + [138,140) 2 = 117; after the
  // sync no call follows, so [185,200) counts nowhere.
  ASSERT_EQ(it.threads.size(), 1u);
  EXPECT_EQ(it.measured_host.sync_ns, 45 * kUs);
  EXPECT_EQ(it.measured_host.api_ns, 23 * kUs);
  EXPECT_EQ(it.measured_host.between_ns, 117 * kUs);
  EXPECT_NEAR(it.measured_host.blocked_percent(), 100.0 * 45 / 185, 1e-9);
  // Replayed with measured durations the replay reproduces the measurement.
  EXPECT_EQ(it.replayed_window_ns, 200 * kUs);
  ExpectSplit(StreamOf(it, 1).replayed, 37, 0, 61, "stream 1 replayed");
  ExpectSplit(StreamOf(it, 2).replayed, 71, 49, 70, "stream 2 replayed");
  ExpectSplit(it.replayed_gpu, 22, 0, 66, "GPU replayed");
  EXPECT_EQ(it.replayed_host.sync_ns, 45 * kUs);
  // One iteration: the rank and the job are that iteration.
  ASSERT_EQ(idle.ranks.size(), 1u);
  ExpectSplit(idle.ranks[0].times.measured_gpu, 22, 0, 66, "rank");
  ExpectSplit(StreamOf(idle.ranks[0].times, 2).measured, 71, 49, 70, "rank's stream 2");
  ExpectSplit(idle.job.measured_gpu, 22, 0, 66, "job");
  EXPECT_EQ(idle.job.measured_host.between_ns, 117 * kUs);
}

TEST(IdleBreakdownTest, ReplayedSideFollowsTheSimulation) {
  // k3 twice as long (100 µs, ends at 170): k4 waits for it, so stream 2's dependency wait
  // grows to [71,170) 99 and its op runs [175,185) (the 5 µs residual on the event edge stays).
  const Job job = EventJob();
  const Replayed r = Replay(job, {"kernel:^k3$=2"});
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 1u);
  const IdleReport idle = AnalyzeIdle(r.graph, r.sim, iterations);
  const IdleTimes& it = idle.iterations[0];
  ExpectSplit(StreamOf(it, 2).measured, 71, 49, 70, "stream 2 measured");
  const IdleSplit& replayed = StreamOf(it, 2).replayed;
  EXPECT_EQ(replayed.host_wait_ns, 71 * kUs);
  EXPECT_EQ(replayed.dependency_wait_ns, 99 * kUs);
  EXPECT_EQ(replayed.idle_ns(), it.replayed_window_ns - 10 * kUs);
}

TEST(LaunchStatsTest, DelaysShortKernelsAndQueueDepth) {
  const Job job = EventJob();
  const Replayed r = Replay(job);
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 1u);
  LaunchOptions options;
  options.bin_ns = 50 * kUs;
  options.queue_limit = 1;
  const LaunchReport launch = AnalyzeLaunches(r.graph, r.sim, iterations, options);
  ASSERT_EQ(launch.ranks.size(), 1u);
  const LaunchSide& m = launch.ranks[0].measured;
  // Delays (op start - call start): k1 10, k2 12, k3 5, k4 54, k5 14 -> sorted 5 10 12 14 54:
  // mean 95/5 = 19, nearest-rank p50 the 3rd (12), p90 and p99 the 5th (54).
  EXPECT_EQ(m.delay.count, 5u);
  EXPECT_EQ(m.delay.mean_ns, 19 * kUs);
  EXPECT_EQ(m.delay.p50_ns, 12 * kUs);
  EXPECT_EQ(m.delay.p90_ns, 54 * kUs);
  EXPECT_EQ(m.delay.p99_ns, 54 * kUs);
  EXPECT_EQ(m.delay.max_ns, 54 * kUs);
  // Short: k2 only (2 µs < its 10 µs call); k1 20 > 5, k3 50 > 2, k4 10 > 2, k5 30 > 2.
  EXPECT_EQ(m.short_kernels.kernels, 5u);
  EXPECT_EQ(m.short_kernels.count, 1u);
  EXPECT_EQ(m.short_kernels.gpu_ns, 2 * kUs);
  EXPECT_DOUBLE_EQ(m.short_kernels.share_percent(), 20.0);
  ASSERT_EQ(m.short_kernels.top.size(), 1u);
  EXPECT_EQ(m.short_kernels.top[0].name, "k2");
  // Outstanding [call start, op end): k1 [0,30) k2 [50,64) k3 [65,120) k4 [71,135)
  // k5 [136,180). Depth: [0,30) 1, [30,50) 0, [50,64) 1, [64,65) 0, [65,71) 1, [71,120) 2,
  // [120,135) 1, [135,136) 0, [136,180) 1, [180,200) 0: max 2, integral
  // 30 + 14 + 6 + 98 + 15 + 44 = 207 depth-µs, mean 1.035.
  EXPECT_EQ(m.queue.max, 2);
  EXPECT_EQ(m.queue.depth_ns, 207 * kUs);
  EXPECT_DOUBLE_EQ(m.queue.mean(), 1.035);
  // 50 µs bins: [0,50) 1, [50,100) 2, [100,150) 2, [150,200) 1.
  ASSERT_EQ(launch.iterations.size(), 1u);
  EXPECT_EQ(launch.iterations[0].measured_depth, (std::vector<uint32_t>{1, 2, 2, 1}));
  EXPECT_EQ(launch.iterations[0].replayed_depth, (std::vector<uint32_t>{1, 2, 2, 1}));
  // Limit 1: at L4's start (71) k3 is outstanding (depth 2 minus L4's own k4 = 1): full, 2 µs.
  // L1, L2, L3 and L5 find nothing else outstanding.
  EXPECT_EQ(m.queue.full_calls, 1u);
  EXPECT_EQ(m.queue.full_ns, 2 * kUs);
  // The replay reproduces the measurement; the job is its one rank.
  const LaunchSide& rp = launch.ranks[0].replayed;
  EXPECT_EQ(rp.delay.count, 5u);
  EXPECT_EQ(rp.delay.max_ns, 54 * kUs);
  EXPECT_EQ(rp.short_kernels.count, 1u);
  EXPECT_EQ(rp.queue.depth_ns, 207 * kUs);
  EXPECT_EQ(launch.job_measured.delay.p50_ns, 12 * kUs);
  EXPECT_EQ(launch.job_measured.queue.full_calls, 1u);
}

// Five launches back to back at 0,1,2,3,4 µs (1 µs each) of 10 µs kernels that run one after
// another on stream 1 from 10 µs: [10,20) [20,30) [30,40) [40,50) [50,60); step [0,100).
TEST(LaunchStatsTest, QueueBuildsUpAndFillsAtTheLimit) {
  Job job;
  job.job_id = "queue";
  RankBuilder b(&job, 0, 1);
  for (int i = 0; i < 5; ++i) {
    b.Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", i, 1, 1 + i, 1);
    b.Kernel("k", 1, 10 + 10 * i, 10, 1 + i);
  }
  b.Step("ProfilerStep#1", 0, 100);
  const Replayed r = Replay(job);
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 1u);
  LaunchOptions options;
  options.queue_limit = 3;
  const LaunchReport launch = AnalyzeLaunches(r.graph, r.sim, iterations, options);
  const LaunchSide& m = launch.ranks[0].measured;
  // Depth: [0,1) 1, [1,2) 2, [2,3) 3, [3,4) 4, [4,20) 5, [20,30) 4, [30,40) 3, [40,50) 2,
  // [50,60) 1, [60,100) 0: max 5, integral 1+2+3+4+80+40+30+20+10 = 190 depth-µs.
  EXPECT_EQ(m.queue.max, 5);
  EXPECT_EQ(m.queue.depth_ns, 190 * kUs);
  EXPECT_EQ(launch.iterations[0].measured_depth, std::vector<uint32_t>{5});  // One 1 ms bin.
  // Limit 3: the calls at 3 (3 others outstanding) and 4 (4 others) launch into a full queue.
  EXPECT_EQ(m.queue.full_calls, 2u);
  EXPECT_EQ(m.queue.full_ns, 2 * kUs);
  // Delays 10 19 28 37 46: mean 28, p50 28, p90 46.
  EXPECT_EQ(m.delay.mean_ns, 28 * kUs);
  EXPECT_EQ(m.delay.p50_ns, 28 * kUs);
  EXPECT_EQ(m.delay.p90_ns, 46 * kUs);
  // The stream waits for nothing the host does: [0,10) other (k1 launched at 0), [60,100)
  // other (no next op).
  const IdleReport idle = AnalyzeIdle(r.graph, r.sim, iterations);
  ExpectSplit(idle.iterations[0].measured_gpu, 0, 0, 50, "GPU");
}

// Runs in order and out of order, empty ones, an odd count: one sorted whole.
TEST(SortRunsTest, MergesRunsSortingOnlyThoseOutOfOrder) {
  std::vector<int> v{1, 4, 9, /**/ 8, 2, 5, /**/ /**/ 0, 3, 7};
  internal::SortRuns(&v, {3, 6, 6, 9}, std::less<>());
  EXPECT_EQ(v, (std::vector<int>{0, 1, 2, 3, 4, 5, 7, 8, 9}));
  std::vector<int> one{3, 1, 2};
  internal::SortRuns(&one, {3}, std::less<>());
  EXPECT_EQ(one, (std::vector<int>{1, 2, 3}));
}

TEST(LaunchStatsTest, NearestRankPercentiles) {
  std::vector<int64_t> none;
  EXPECT_EQ(Distribution(&none).count, 0u);
  std::vector<int64_t> hundred;
  for (int64_t i = 100; i >= 1; --i) hundred.push_back(i);
  const DelayStats d = Distribution(&hundred);
  EXPECT_EQ(d.count, 100u);
  EXPECT_EQ(d.sum_ns, 5050);
  EXPECT_EQ(d.mean_ns, 50);
  EXPECT_EQ(d.p50_ns, 50);
  EXPECT_EQ(d.p90_ns, 90);
  EXPECT_EQ(d.p99_ns, 99);
  EXPECT_EQ(d.max_ns, 100);
  std::vector<int64_t> one{7};
  EXPECT_EQ(Distribution(&one).p99_ns, 7);
  // The mean is the floor (launch_stats.h), also below 0 (a measured op that starts before its
  // launch call: clocks of host and GPU disagree): -3 / 2 = -1.5 -> -2, not -1.
  std::vector<int64_t> skewed{-3, 0};
  EXPECT_EQ(Distribution(&skewed).mean_ns, -2);
}

// Seven ranks: the text shows five of them and says how many more; the JSON has all seven.
TEST(IdleLaunchReportTest, TextKeepsToFiveRanksAndJsonHasThemAll) {
  Job job;
  job.job_id = "seven";
  for (int32_t rank = 0; rank < 7; ++rank) AddEventJob(&job, rank, 7);
  const Replayed r = Replay(job);
  ReplayReport report;
  report.job_id = job.job_id;
  for (const RankTrace& t : job.ranks) report.ranks.push_back(t.rank);
  report.devices.resize(7);
  report.graph = &r.graph;
  report.iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  report.idle = AnalyzeIdle(r.graph, r.sim, report.iterations);
  report.launch = AnalyzeLaunches(r.graph, r.sim, report.iterations);
  std::FILE* text = std::tmpfile();
  WriteTextReport(report, text);
  const std::string out = ReadAll(text);
  std::fclose(text);
  for (const char* part :
       {"\nidle time (sum over 7 iterations of 7 ranks)", "ranks with the most GPU idle",
        "... 2 more rank(s)", "\nlaunches (sum over 7 iterations of 7 ranks)",
        "ranks with the largest p99 launch delay", "launches into a full queue"}) {
    EXPECT_NE(out.find(part), std::string::npos) << part;
  }
  std::FILE* json = std::tmpfile();
  ASSERT_TRUE(WriteJsonReport(report, json).ok());
  const std::string j = ReadAll(json);
  std::fclose(json);
  for (const char* field :
       {"\"idle\":", "\"host_wait_ns\":", "\"dependency_wait_ns\":", "\"blocked_percent\":",
        "\"streams\":", "\"threads\":", "\"launch\":", "\"queue_limit\":1024", "\"p99_ns\":",
        "\"short_kernels\":", "\"full_calls\":", "\"launch_queue\":", "\"depth_max_1ms\":"}) {
    EXPECT_NE(j.find(field), std::string::npos) << field;
  }
  // One "threads" list per rank of the idle section, one "short_kernels" per side of the job
  // and of each rank of the launch section.
  auto count = [&j](const std::string& what) {
    size_t n = 0;
    for (size_t at = j.find(what); at != std::string::npos; at = j.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("\"threads\":"), 7u);
  EXPECT_EQ(count("\"short_kernels\":"), 2u * (1 + 7));
}

}  // namespace
}  // namespace lumos::modeler::testing
