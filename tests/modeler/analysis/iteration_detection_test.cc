// Iterations found from the repeating kernel stream (no ProfilerStep or NVTX range): hand-built
// kernel sequences whose boundaries are worked out by hand, and the analysis that uses them.
#include "modeler/analysis/iteration_detection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "modeler/analysis/iteration_analysis.h"
#include "tests/testing/job_builder.h"

namespace lumos::modeler::testing {
namespace {

using schema::ApiKind;

struct Kernel {
  std::string name;
  uint64_t stream = 7;
  int64_t start_us = 0;
  int64_t duration_us = 0;
};

// One rank whose kernels are each launched 3 µs before they start (a 1 µs call on thread 1), so
// the graph is complete and the replay reproduces the measurement; or not launched at all (as
// kernels of a CUDA graph, in a Kineto trace).
Job JobOf(std::vector<Kernel> kernels, bool launched = true) {
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const Kernel& a, const Kernel& b) { return a.start_us < b.start_us; });
  Job job;
  job.job_id = "detect";
  RankBuilder rank(&job, 0, 1);
  uint64_t correlation = 1;
  for (const Kernel& k : kernels) {
    if (launched) {
      rank.Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", k.start_us - 3, 1, correlation);
    }
    rank.Kernel(k.name, k.stream, k.start_us, k.duration_us, correlation);
    ++correlation;
  }
  return job;
}

// `repetitions` copies of `pattern`, the r-th shifted by 10 + r * period_us µs; `vary` may
// change a copy's kernels (jitter, an inserted kernel).
using Vary = std::function<void(int repetition, std::vector<Kernel>* kernels)>;
std::vector<Kernel> Repeat(const std::vector<Kernel>& pattern, int repetitions, int64_t period_us,
                           const Vary& vary = nullptr) {
  std::vector<Kernel> out;
  for (int r = 0; r < repetitions; ++r) {
    std::vector<Kernel> copy = pattern;
    if (vary) vary(r, &copy);
    for (Kernel& k : copy) k.start_us += 10 + r * period_us;
    out.insert(out.end(), copy.begin(), copy.end());
  }
  return out;
}

// Measured start (µs) of each anchor.
std::vector<int64_t> AnchorStartsUs(const ExecutionGraph& graph, const DetectedIterations& d) {
  std::vector<int64_t> starts;
  for (uint32_t n : d.anchors) starts.push_back(graph.nodes[n].start_ns / kUs);
  return starts;
}

// A B C D on one stream, 100 µs apart, the GPU idle 54 µs between repetitions.
const std::vector<Kernel> kAbcd = {
    {"A", 7, 0, 10}, {"B", 7, 12, 10}, {"C", 7, 24, 10}, {"D", 7, 36, 10}};

TEST(IterationDetectionTest, RepeatedSequenceGivesOneIterationPerRepetition) {
  const Job job = JobOf(Repeat(kAbcd, 5, 100));
  const Replayed r = Replay(job);
  const DetectedIterations d = DetectIterations(r.graph, 0);
  EXPECT_EQ(d.period_kernels, 4u);
  EXPECT_EQ(d.marker_name, "A");  // The first of the period.
  EXPECT_EQ(d.kernels, 20u);
  EXPECT_EQ(AnchorStartsUs(r.graph, d), (std::vector<int64_t>{10, 110, 210, 310, 410}));
  EXPECT_EQ(d.iterations(), 4u);
}

TEST(IterationDetectionTest, AnalysisUsesDetectedIterationsWhenThereAreNoRanges) {
  const Job job = JobOf(Repeat(kAbcd, 5, 100));
  const Replayed r = Replay(job, {"kernel:^B$=2"});  // B takes 20 µs: C and D start 10 µs later.
  const DetectedIterations d = DetectIterations(r.graph, 0);
  ASSERT_EQ(d.launches.size(), 5u);  // Host boundaries: the launches of A.
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 4u);
  for (size_t k = 0; k < iterations.size(); ++k) {
    const IterationReport& it = iterations[k];
    EXPECT_EQ(it.name, "iteration " + std::to_string(k + 1) + " (detected, period 4 kernels)");
    // From A's launch (3 µs before A) to the next A's.
    EXPECT_EQ(it.measured_start_ns, (7 + 100 * static_cast<int64_t>(k)) * kUs);
    EXPECT_EQ(it.measured_ns(), 100 * kUs);
    // The host is unchanged, so are the launches.
    EXPECT_EQ(it.replayed_start_ns, it.measured_start_ns);
    EXPECT_EQ(it.replayed_ns(), 100 * kUs);
    // Measured: 4 kernels of 10 µs computing; replayed: B's 20 µs pushes C and D back.
    EXPECT_EQ(it.measured.exposed_compute_ns, 40 * kUs);
    EXPECT_EQ(it.replayed.exposed_compute_ns, 50 * kUs);
  }
}

// Without launch calls the boundaries are the anchors' GPU starts, replayed at their simulated
// starts: nothing on the host absorbs B's extra 10 µs, so every iteration grows by it.
TEST(IterationDetectionTest, KernelsWithoutLaunchesGiveGpuBoundaries) {
  const Job job = JobOf(Repeat(kAbcd, 5, 100), /*launched=*/false);
  const Replayed r = Replay(job, {"kernel:^B$=2"});
  const DetectedIterations d = DetectIterations(r.graph, 0);
  EXPECT_TRUE(d.launches.empty());
  EXPECT_EQ(AnchorStartsUs(r.graph, d), (std::vector<int64_t>{10, 110, 210, 310, 410}));
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 4u);
  for (size_t k = 0; k < iterations.size(); ++k) {
    const IterationReport& it = iterations[k];
    EXPECT_EQ(it.measured_start_ns, (10 + 100 * static_cast<int64_t>(k)) * kUs);
    EXPECT_EQ(it.measured_ns(), 100 * kUs);
    EXPECT_EQ(it.replayed_start_ns, (10 + 110 * static_cast<int64_t>(k)) * kUs);
    EXPECT_EQ(it.replayed_ns(), 110 * kUs);
    // The critical path, walked back from the next A's start through the stream: the four
    // kernels (50 µs, B's 20 included) and the gaps between them (2 µs each, and 54 µs before
    // the next A), from the boundary down to this A's start.
    EXPECT_EQ(it.critical_length_ns, 110 * kUs);
    int64_t kernels_ns = 0, gaps_ns = 0;
    for (const CriticalItem& c : it.critical_by_class) {
      (c.what == "GPU queue gap" ? gaps_ns : kernels_ns) += c.ns;
    }
    EXPECT_EQ(kernels_ns, 50 * kUs);
    EXPECT_EQ(gaps_ns, 60 * kUs);
  }
}

// A and B on stream 7 overlap C and D on stream 8; in repetition 2 C starts after B (their
// order in the merged stream swaps), and D's duration drifts by 1 µs per repetition.
TEST(IterationDetectionTest, TwoStreamsWithJitter) {
  const std::vector<Kernel> pattern = {
      {"A", 7, 0, 20}, {"C", 8, 6, 30}, {"B", 7, 22, 10}, {"D", 8, 60, 8}};
  const Job job = JobOf(Repeat(pattern, 5, 100, [](int r, std::vector<Kernel>* kernels) {
    if (r == 2) (*kernels)[1].start_us = 26;
    (*kernels)[3].duration_us += r;
  }));
  const Replayed r = Replay(job);
  const DetectedIterations d = DetectIterations(r.graph, 0);
  EXPECT_EQ(d.period_kernels, 4u);
  EXPECT_EQ(d.marker_name, "A");
  EXPECT_EQ(AnchorStartsUs(r.graph, d), (std::vector<int64_t>{10, 110, 210, 310, 410}));
}

TEST(IterationDetectionTest, AnExtraKernelInOneRepetitionIsTolerated) {
  const std::vector<Kernel> pattern = {
      {"A", 7, 0, 10}, {"B", 7, 15, 10}, {"C", 7, 30, 10}, {"D", 7, 45, 10}};
  const Job job = JobOf(Repeat(pattern, 5, 100, [](int r, std::vector<Kernel>* kernels) {
    if (r == 2) kernels->push_back({"fill", 7, 27, 2});
  }));
  const Replayed r = Replay(job);
  const DetectedIterations d = DetectIterations(r.graph, 0);
  EXPECT_EQ(d.kernels, 21u);
  EXPECT_EQ(d.period_kernels, 4u);
  EXPECT_EQ(d.marker_name, "A");
  EXPECT_EQ(AnchorStartsUs(r.graph, d), (std::vector<int64_t>{10, 110, 210, 310, 410}));
}

// The first repetition runs 3 more kernels (a warm-up): A's first distance is 7, not 4, so
// the regular run of A starts at the second repetition.
TEST(IterationDetectionTest, ADifferentFirstRepetitionIsLeftOut) {
  const std::vector<Kernel> pattern = {
      {"A", 7, 0, 10}, {"B", 7, 15, 10}, {"C", 7, 30, 10}, {"D", 7, 45, 10}};
  const Job job = JobOf(Repeat(pattern, 6, 100, [](int r, std::vector<Kernel>* kernels) {
    if (r != 0) return;
    for (int w = 0; w < 3; ++w)
      kernels->push_back({"warmup" + std::to_string(w), 7, 60 + 10 * w, 5});
  }));
  const Replayed r = Replay(job);
  const DetectedIterations d = DetectIterations(r.graph, 0);
  EXPECT_EQ(d.period_kernels, 4u);
  EXPECT_EQ(AnchorStartsUs(r.graph, d), (std::vector<int64_t>{110, 210, 310, 410, 510}));
}

// A B C A B D: A and B recur every 3 kernels, but the halves differ (C, D): the period is 6.
// Only C and D occur once per period and can be markers; C comes first. The 2 kernels before
// the first C match the 2 before the second: the trace starts with a whole repetition, so
// each starts 2 kernels before its C, at the first A.
TEST(IterationDetectionTest, PeriodIsTheWholePatternNotAHalfThatNearlyRepeats) {
  const std::vector<Kernel> pattern = {{"A", 7, 0, 5},  {"B", 7, 10, 5}, {"C", 7, 20, 5},
                                       {"A", 7, 30, 5}, {"B", 7, 40, 5}, {"D", 7, 60, 5}};
  const Job job = JobOf(Repeat(pattern, 5, 100));
  const Replayed r = Replay(job);
  const DetectedIterations d = DetectIterations(r.graph, 0);
  EXPECT_EQ(d.period_kernels, 6u);
  EXPECT_EQ(d.marker_name, "C");
  EXPECT_EQ(d.marker_offset_kernels, 2u);
  EXPECT_EQ(AnchorStartsUs(r.graph, d), (std::vector<int64_t>{10, 110, 210, 310, 410}));
}

// Two set-up kernels before the first A do not match the two kernels before the second A (C,
// D): the trace does not start with a whole repetition, so repetitions start at the marker.
TEST(IterationDetectionTest, SetUpKernelsBeforeTheFirstMarkerAreLeftOut) {
  std::vector<Kernel> kernels = {{"init0", 7, 0, 5}, {"init1", 7, 10, 5}};
  for (Kernel k : Repeat(kAbcd, 4, 100)) {
    k.start_us += 20;
    kernels.push_back(k);
  }
  const Job job = JobOf(kernels);  // Outlives the graph, whose names view it.
  const Replayed r = Replay(job);
  const DetectedIterations d = DetectIterations(r.graph, 0);
  EXPECT_EQ(d.marker_name, "A");
  EXPECT_EQ(d.marker_offset_kernels, 0u);
  EXPECT_EQ(AnchorStartsUs(r.graph, d), (std::vector<int64_t>{30, 130, 230, 330}));
}

TEST(IterationDetectionTest, NoRepetitionKeepsTheWholeTrace) {
  std::vector<Kernel> kernels;
  for (int i = 0; i < 20; ++i) kernels.push_back({"k" + std::to_string(i), 7, 10 + 20 * i, 10});
  const Job job = JobOf(kernels);
  const Replayed r = Replay(job);
  EXPECT_EQ(DetectIterations(r.graph, 0).iterations(), 0u);
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 1u);
  EXPECT_EQ(iterations[0].name, "whole trace");
}

// One name repeated is periodic with any period: nothing tells where an iteration starts.
TEST(IterationDetectionTest, OneKernelNameRepeatedKeepsTheWholeTrace) {
  std::vector<Kernel> kernels;
  for (int i = 0; i < 20; ++i) kernels.push_back({"gemm", 7, 10 + 20 * i, 10});
  const Job job = JobOf(kernels);
  const Replayed r = Replay(job);
  EXPECT_EQ(DetectIterations(r.graph, 0).iterations(), 0u);
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 1u);
  EXPECT_EQ(iterations[0].name, "whole trace");
}

// Two whole repetitions are the least that is reported; one and a half is not enough.
TEST(IterationDetectionTest, FewerThanTwoRepetitionsFindNothing) {
  std::vector<Kernel> kernels = Repeat(kAbcd, 2, 100);
  const Job half = JobOf(kernels);  // Outlives the graph, whose names view it.
  EXPECT_EQ(DetectIterations(Replay(half).graph, 0).iterations(), 0u);
  kernels.push_back({"A", 7, 210, 10});  // The third A closes the second repetition.
  const Job job = JobOf(kernels);
  EXPECT_EQ(DetectIterations(Replay(job).graph, 0).iterations(), 2u);
}

// Step ranges, where present, win over detection.
TEST(IterationDetectionTest, RangesWinOverDetection) {
  Job job = JobOf(Repeat(kAbcd, 5, 100));
  schema::HostRangeEvent step;
  step.start_ns = 5 * kUs;
  step.duration_ns = 500 * kUs;
  step.thread_id = 1;
  step.name = job.names.Intern("ProfilerStep#7");
  step.category = schema::HostRangeCategory::kStep;
  job.ranks[0].host_ranges.push_back(step);
  const Replayed r = Replay(job);
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 1u);
  EXPECT_EQ(iterations[0].name, "ProfilerStep#7");
}

}  // namespace
}  // namespace lumos::modeler::testing
