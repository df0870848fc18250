// Iteration detection on the shared real traces (../shared/data/traces), checked against the
// ProfilerStep#N ranges, which the detection does not look at: the detected period against the
// steps' median length (within 2%), each boundary against the nearest step boundary (within 5%
// of a step), each iteration's length against its step's (within 5%).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "modeler/analysis/iteration_detection.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/import/kineto_import.h"
#include "modeler/replay/replay_cli.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/param_names.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using lumos::testing::TempDir;

std::string SharedTraces() { return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces"; }

struct Step {
  int64_t start_ns, end_ns;
};

int64_t Abs(int64_t x) { return x < 0 ? -x : x; }

int64_t Median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[(v.size() - 1) / 2];
}

struct Case {
  const char* trace;
  size_t steps;  // ProfilerStep ranges of the rank.
};

class RealTraceDetectionTest : public ::testing::TestWithParam<Case> {};

TEST_P(RealTraceDetectionTest, DetectedIterationsMatchTheProfilerSteps) {
  TempDir dir;
  auto imported =
      kineto::ImportKineto({{SharedTraces() + "/" + GetParam().trace}, dir.File("out"), "", 1});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  auto paths = ExpandTracePaths({imported->front().output_path});
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  auto job = LoadJob(*paths);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const ExecutionGraph graph = BuildGraph(*job, AlignClocks(*job).rank_offset_ns);

  std::vector<Step> steps;
  for (const schema::HostRangeEvent& h : job->ranks[0].host_ranges) {
    if (h.category != schema::HostRangeCategory::kStep) continue;
    const int64_t start = h.start_ns + graph.rank_offset_ns[0];
    steps.push_back({start, start + static_cast<int64_t>(h.duration_ns)});
  }
  std::sort(steps.begin(), steps.end(),
            [](const Step& a, const Step& b) { return a.start_ns < b.start_ns; });
  ASSERT_EQ(steps.size(), GetParam().steps);
  std::vector<int64_t> step_ns;
  for (const Step& s : steps) step_ns.push_back(s.end_ns - s.start_ns);

  const DetectedIterations d = DetectIterations(graph, 0);
  // Boundaries as the analysis takes them: the anchors' launch calls, else their GPU starts.
  std::vector<int64_t> boundaries;
  for (size_t k = 0; k < d.anchors.size(); ++k) {
    boundaries.push_back(graph.nodes[d.launches.empty() ? d.anchors[k] : d.launches[k]].start_ns);
  }
  // Step boundaries: each step's start and the last one's end (the next step's start).
  std::vector<int64_t> step_bounds;
  for (const Step& s : steps) step_bounds.push_back(s.start_ns);
  step_bounds.push_back(steps.back().end_ns);
  auto nearest_bound = [&step_bounds](int64_t t) {
    size_t best = 0;
    for (size_t j = 1; j < step_bounds.size(); ++j) {
      if (Abs(step_bounds[j] - t) < Abs(step_bounds[best] - t)) best = j;
    }
    return best;
  };
  std::vector<int64_t> period_ns;
  int64_t max_offset_ns = 0, min_offset_ns = INT64_MAX;
  double max_length_error = 0;
  for (size_t k = 0; k < boundaries.size(); ++k) {
    const size_t j = nearest_bound(boundaries[k]);
    const int64_t offset = boundaries[k] - step_bounds[j];
    max_offset_ns = std::max(max_offset_ns, Abs(offset));
    min_offset_ns = std::min(min_offset_ns, Abs(offset));
    if (k + 1 == boundaries.size()) break;
    period_ns.push_back(boundaries[k + 1] - boundaries[k]);
    if (j < steps.size()) {  // Iteration k against the step it starts near.
      max_length_error = std::max(
          max_length_error, 100.0 * std::fabs(static_cast<double>(period_ns.back() - step_ns[j])) /
                                static_cast<double>(step_ns[j]));
    }
  }
  const int64_t step_median_ns = Median(step_ns);
  const double period_error = 100.0 *
                              std::fabs(static_cast<double>(Median(period_ns) - step_median_ns)) /
                              static_cast<double>(step_median_ns);
  // The numbers docs/validation.md quotes.
  std::printf(
      "%s: %zu steps, median %.3f ms; %zu iterations detected, %s boundaries, period %u kernels "
      "(marker %u kernels in), median %.3f ms (%.2f%% off); boundaries %.3f-%.3f ms from a step "
      "boundary; iteration vs its step: max %.2f%%\n",
      GetParam().trace, steps.size(), step_median_ns / 1e6, d.iterations(),
      d.launches.empty() ? "GPU" : "host", d.period_kernels, d.marker_offset_kernels,
      Median(period_ns) / 1e6, period_error, min_offset_ns / 1e6, max_offset_ns / 1e6,
      max_length_error);
  EXPECT_GE(d.iterations(), steps.size() - 1);
  EXPECT_LE(period_error, 2.0);
  // A step starts on the host; its first kernel is launched after the data is loaded.
  EXPECT_LE(max_offset_ns, step_median_ns / 20);
  EXPECT_LE(max_length_error, 5.0);
}

// End to end: `lumos-model replay --iteration` with a pattern no range matches reports the
// detected iterations (nccl_data: 2700 kernels in 3 steps of 900; the last repetition has no
// following anchor) and replays them as it replays steps.
TEST(RealTraceDetectionCliTest, ReplayReportsDetectedIterations) {
  TempDir dir;
  auto imported = kineto::ImportKineto(
      {{SharedTraces() + "/hta-single-rank/nccl_data.json.gz"}, dir.File("out"), "", 1});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  const int code = RunReplayCommand(
      {imported->front().output_path, "--iteration", "^no such range$", "--json"}, out, err);
  std::fflush(out);
  std::rewind(out);
  std::string report;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), out)) > 0;) report.append(buffer, n);
  std::fclose(out);
  std::fclose(err);
  EXPECT_EQ(code, 0);
  EXPECT_NE(report.find("\"iteration 1 (detected, period 900 kernels)\""), std::string::npos);
  EXPECT_NE(report.find("\"iteration 2 (detected, period 900 kernels)\""), std::string::npos);
  EXPECT_EQ(report.find("\"iteration 3 "), std::string::npos);
  EXPECT_EQ(report.find("\"whole trace\""), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RealTraceDetectionTest,
                         ::testing::Values(Case{"hta-single-rank/control.json.gz", 6},
                                           Case{"hta-single-rank/df_index_resolver.json.gz", 5},
                                           Case{"hta-single-rank/nccl_data.json.gz", 3},
                                           Case{"hta-single-rank/rank0.json.gz", 5}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return ::lumos::testing::TraceParamName(info.param.trace);
                         });

}  // namespace
}  // namespace lumos::modeler
