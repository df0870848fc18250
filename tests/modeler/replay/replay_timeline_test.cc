// `replay --timeline` on the bundled DLRM example (8 ranks), read back with simdjson: the
// critical path track of each rank tiles its replayed iteration (the slices add up to the
// iteration the JSON report gives, to the ns), and the counter tracks are well formed: GPU busy
// shares in [0, 1], a launch queue that never goes below 0 and ends empty, and on the measured
// side each rank's largest "arrival late by" equals the largest lateness recomputed here from
// the graph's collective groups (their members' measured starts).
#include "modeler/replay/replay_timeline.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/replay/replay_cli.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/job_builder.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using lumos::testing::TempDir;

std::string Example() { return std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"; }

// "12.345" µs as printed by the JSON writer -> ns.
int64_t Ns(simdjson::dom::element e) {
  double us = 0;
  EXPECT_EQ(e.get_double().get(us), simdjson::SUCCESS);
  return static_cast<int64_t>(us * 1000.0 + (us >= 0 ? 0.5 : -0.5));
}

TEST(ReplayTimelineTest, CriticalPathTilesIterationsAndCountersAreWellFormed) {
  TempDir dir;
  const std::string timeline = dir.File("timeline.json");
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  ASSERT_EQ(RunReplayCommand({Example(), "--json", "--timeline", timeline}, out, err), 0);
  const std::string report_text = testing::ReadAll(out);
  std::fclose(out);
  std::fclose(err);

  simdjson::dom::parser report_parser, timeline_parser;
  simdjson::dom::element report, trace;
  ASSERT_EQ(report_parser.parse(report_text).get(report), simdjson::SUCCESS);
  ASSERT_EQ(timeline_parser.load(timeline).get(trace), simdjson::SUCCESS);
  std::map<int64_t, int64_t> replayed_ns;  // rank -> its (only) iteration's replayed time.
  for (simdjson::dom::element it : report["iterations"].get_array()) {
    replayed_ns[int64_t(it["rank"])] += int64_t(it["replayed_ns"]);
  }
  ASSERT_EQ(replayed_ns.size(), 8u);

  int64_t critical_pid = -1;
  std::map<int64_t, int64_t> path_ns;  // tid (rank) -> sum of slice durations.
  std::map<std::pair<int64_t, std::string>, std::vector<double>> counters;  // (pid, name)
  for (simdjson::dom::element e : trace["traceEvents"].get_array()) {
    const std::string_view ph = e["ph"].get_string();
    if (ph == "M" && std::string_view(e["name"]) == "process_name" &&
        std::string_view(e["args"]["name"]) == "critical path replayed") {
      critical_pid = int64_t(e["pid"]);
    }
    if (ph == "C") {
      for (auto field : simdjson::dom::object(e["args"])) {
        counters[{int64_t(e["pid"]), std::string(std::string_view(e["name"]))}].push_back(
            double(field.value));
      }
    }
  }
  ASSERT_EQ(critical_pid, 2 * 8 + 1);  // After the 8 ranks' two processes.
  for (simdjson::dom::element e : trace["traceEvents"].get_array()) {
    if (std::string_view(e["ph"]) == "X" && int64_t(e["pid"]) == critical_pid) {
      path_ns[int64_t(e["tid"])] += Ns(e["dur"]);
    }
  }
  EXPECT_EQ(path_ns, replayed_ns);

  // The measured side's lateness, recomputed from the graph.
  auto paths = ExpandTracePaths({Example()});
  ASSERT_TRUE(paths.ok());
  auto job = LoadJob(*paths);
  ASSERT_TRUE(job.ok());
  const testing::Replayed r = testing::Replay(*job, {}, false, /*align=*/true);
  std::map<int64_t, double> max_late_us;  // measured pid -> largest lateness
  for (const CollectiveGroup& c : r.graph.collectives) {
    if (c.nodes.size() < 2) continue;
    int64_t first = INT64_MAX;
    for (uint32_t n : c.nodes) first = std::min(first, r.graph.nodes[n].start_ns);
    for (uint32_t n : c.nodes) {
      const int64_t pid = 2 * static_cast<int64_t>(r.graph.nodes[n].rank_index);
      const double late = static_cast<double>(r.graph.nodes[n].start_ns - first) / 1e3;
      max_late_us[pid] = std::max(max_late_us[pid], late);
    }
  }
  ASSERT_EQ(max_late_us.size(), 8u);
  for (const auto& [pid, late] : max_late_us) {
    const std::vector<double>& points = counters[{pid, "arrival late by"}];
    ASSERT_FALSE(points.empty()) << pid;
    EXPECT_NEAR(*std::max_element(points.begin(), points.end()), late, 5e-4) << pid;
    EXPECT_GE(*std::min_element(points.begin(), points.end()), 0.0) << pid;
  }
  for (int64_t pid = 0; pid < 16; ++pid) {
    const std::vector<double>& busy = counters[{pid, "GPU busy"}];
    ASSERT_FALSE(busy.empty()) << pid;
    for (double share : busy) {
      EXPECT_GE(share, 0.0) << pid;
      EXPECT_LE(share, 1.0) << pid;
    }
    const std::vector<double>& queue = counters[{pid, "launch queue"}];
    ASSERT_FALSE(queue.empty()) << pid;
    for (double depth : queue) EXPECT_GE(depth, 0.0) << pid;
    EXPECT_EQ(queue.back(), 0.0) << pid;
  }
}

// An iteration (ProfilerStep#1 [0,150) µs) that starts 10 µs before the trace's first API call
// (launch [10,15), gemm [20,120), sync [16,125)): its critical path begins at 0, before every
// node. The track's slices must still tile [0, 150) on the timeline: the first one drawn from
// 0 to the second's start, not moved to the origin with its full length (which overlapped the
// next slice by 10 µs and ended the path 10 µs late).
TEST(ReplayTimelineTest, CriticalPathBeforeTheFirstNodeTilesOnTheTimeline) {
  Job job;
  job.job_id = "early-step";
  testing::RankBuilder(&job, 0, 1)
      .Api(schema::ApiKind::kLaunchKernel, "cudaLaunchKernel", 10, 5, 1, 7)
      .Api(schema::ApiKind::kStreamSynchronize, "cudaStreamSynchronize", 16, 109, 0, 7)
      .Kernel("gemm_kernel", 7, 20, 100, 1)
      .Step("ProfilerStep#1", 0, 150);
  const testing::Replayed r = testing::Replay(job);
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 1u);
  ASSERT_EQ(iterations[0].replayed_start_ns, 0);
  ASSERT_EQ(iterations[0].replayed_end_ns, 150 * testing::kUs);
  TempDir dir;
  const std::string timeline = dir.File("timeline.json");
  ASSERT_TRUE(WriteReplayTimeline(r.graph, r.sim, &iterations, timeline).ok());
  simdjson::dom::parser parser;
  simdjson::dom::element trace;
  ASSERT_EQ(parser.load(timeline).get(trace), simdjson::SUCCESS);
  int64_t critical_pid = -1;
  for (simdjson::dom::element e : trace["traceEvents"].get_array()) {
    if (std::string_view(e["ph"]) == "M" && std::string_view(e["name"]) == "process_name" &&
        std::string_view(e["args"]["name"]) == "critical path replayed") {
      critical_pid = int64_t(e["pid"]);
    }
  }
  std::vector<std::pair<int64_t, int64_t>> slices;  // (ts, end), ns from the origin
  int64_t first_node_ts = INT64_MAX;
  for (simdjson::dom::element e : trace["traceEvents"].get_array()) {
    if (std::string_view(e["ph"]) != "X") continue;
    if (int64_t(e["pid"]) == critical_pid) {
      slices.emplace_back(Ns(e["ts"]), Ns(e["ts"]) + Ns(e["dur"]));
    } else if (std::string_view(e["name"]) == "cudaLaunchKernel") {
      first_node_ts = std::min(first_node_ts, Ns(e["ts"]));
    }
  }
  ASSERT_GE(slices.size(), 2u);
  std::sort(slices.begin(), slices.end());
  for (size_t i = 1; i < slices.size(); ++i) {
    EXPECT_EQ(slices[i - 1].second, slices[i].first) << i;
  }
  // The path spans the iteration: [0, 150) µs, 10 µs before the first call.
  EXPECT_EQ(first_node_ts - slices.front().first, 10 * testing::kUs);
  EXPECT_EQ(slices.back().second - slices.front().first, 150 * testing::kUs);
}

}  // namespace
}  // namespace lumos::modeler
