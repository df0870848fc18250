// The critical path on every shared real trace (../shared/data/traces) and the bundled
// example: for every iteration of every rank its length is the replayed iteration time
// (within 0.1 %) and its classes add up to its length exactly, for the ProfilerStep iterations
// for the iterations detected from the kernel stream, and in the dependencies-only replay. It
// prints, per trace, the steps' mean iteration and path lengths and the largest difference
// (docs/validation.md quotes them). The rank's own path (IterationBound) tiles the iteration
// too, and its wait for peers is the sum of its waits for each peer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/import/kineto_import.h"
#include "modeler/sim/simulator.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/param_names.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using lumos::testing::TempDir;

std::string SharedTraces() { return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces"; }

// `trace`: a Kineto trace under ../shared/data/traces (imported first), or a folder of Lumos
// traces under the source tree.
struct Case {
  const char* trace;
  bool kineto;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.trace; }

// Every iteration's critical path is as long as the iteration (within 0.1 %) and its classes
// add up to its length exactly; with `print`, the numbers docs/validation.md quotes.
void ExpectPathsTile(const std::vector<IterationReport>& iterations, const char* trace,
                     bool print) {
  double iteration_sum = 0, path_sum = 0, max_off_percent = 0;
  int64_t min_iteration = INT64_MAX, max_iteration = 0, min_path = INT64_MAX, max_path = 0;
  for (const IterationReport& it : iterations) {
    const std::string where = "rank " + std::to_string(it.rank) + " " + it.name;
    const int64_t iteration_ns = it.replayed_ns();
    ASSERT_GT(iteration_ns, 0) << where;
    EXPECT_NEAR(static_cast<double>(it.critical_length_ns), static_cast<double>(iteration_ns),
                0.001 * static_cast<double>(iteration_ns))
        << where;
    int64_t classes = 0;
    for (const CriticalItem& c : it.critical_by_class) {
      EXPECT_GT(c.ns, 0) << where << ": " << c.what;
      classes += c.ns;
    }
    EXPECT_EQ(classes, it.critical_length_ns) << where;
    // The rank's own path (what bounds it) tiles the same interval; its wait for peers is the
    // sum of its waits for each of them.
    EXPECT_EQ(it.bound.total_ns(), it.critical_length_ns) << where;
    int64_t waited = 0;
    for (const auto& [rank, ns] : it.bound.waited_for) {
      EXPECT_NE(rank, it.rank) << where;
      EXPECT_GT(ns, 0) << where;
      waited += ns;
    }
    EXPECT_EQ(waited, it.bound.ns[static_cast<int>(BoundKind::kPeers)]) << where;
    min_iteration = std::min(min_iteration, iteration_ns);
    max_iteration = std::max(max_iteration, iteration_ns);
    min_path = std::min(min_path, it.critical_length_ns);
    max_path = std::max(max_path, it.critical_length_ns);
    iteration_sum += static_cast<double>(iteration_ns);
    path_sum += static_cast<double>(it.critical_length_ns);
    max_off_percent =
        std::max(max_off_percent, 100.0 *
                                      std::fabs(static_cast<double>(it.critical_length_ns) -
                                                static_cast<double>(iteration_ns)) /
                                      static_cast<double>(iteration_ns));
  }
  if (!print || iterations.empty()) return;
  const double n = static_cast<double>(iterations.size());
  std::printf(
      "critical path %s: %zu iterations, replayed iteration %.3f ms (%.3f-%.3f), critical path "
      "%.3f ms (%.3f-%.3f), max |path - iteration| %.2f %%\n",
      trace, iterations.size(), iteration_sum / n / 1e6, min_iteration / 1e6, max_iteration / 1e6,
      path_sum / n / 1e6, min_path / 1e6, max_path / 1e6, max_off_percent);
}

class RealTraceCriticalPathTest : public ::testing::TestWithParam<Case> {};

TEST_P(RealTraceCriticalPathTest, PathTilesEveryIteration) {
  TempDir dir;
  std::string input;
  if (GetParam().kineto) {
    auto imported =
        kineto::ImportKineto({{SharedTraces() + "/" + GetParam().trace}, dir.File("out"), "", 1});
    ASSERT_TRUE(imported.ok()) << imported.status().message();
    input = imported->size() == 1 ? imported->front().output_path : dir.File("out");
  } else {
    input = std::string(LUMOS_SOURCE_DIR) + "/" + GetParam().trace;
  }
  auto paths = ExpandTracePaths({input});
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  auto job = LoadJob(*paths);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const ExecutionGraph graph = BuildGraph(*job, AlignClocks(*job).rank_offset_ns);
  const SimResult sim = Simulate(graph, MeasuredScenario(graph));
  const auto iterations = AnalyzeIterations(*job, graph, sim, {});
  ASSERT_FALSE(iterations.empty());
  ExpectPathsTile(iterations, GetParam().trace, /*print=*/true);
  // Iterations detected from the kernel stream (no range matches), with GPU boundaries where
  // kernels have no launch call (rank0's CUDA graphs).
  AnalysisOptions detected;
  ASSERT_TRUE(SetIterationPattern("^no such range$", &detected).ok());
  ExpectPathsTile(AnalyzeIterations(*job, graph, sim, detected), GetParam().trace, false);
  // A replay that differs from the measurement (the measured GPU queueing dropped).
  const SimResult explained = Simulate(graph, DependenciesOnlyScenario(graph));
  ExpectPathsTile(AnalyzeIterations(*job, graph, explained, {}), GetParam().trace, false);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RealTraceCriticalPathTest,
                         ::testing::Values(Case{"dlrm-8rank-v100/dlrm_kineto.tar.gz", true},
                                           Case{"hta-single-rank/control.json.gz", true},
                                           Case{"hta-single-rank/df_index_resolver.json.gz", true},
                                           Case{"hta-single-rank/event_sync_trace.json.gz", true},
                                           Case{"hta-single-rank/nccl_data.json.gz", true},
                                           Case{"hta-single-rank/rank0.json.gz", true},
                                           Case{"examples/dlrm-8rank", false}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return ::lumos::testing::TraceParamName(info.param.trace);
                         });

}  // namespace
}  // namespace lumos::modeler
