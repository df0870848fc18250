// Stragglers on every shared trace (kSharedTraces), recomputed the slow way from the raw
// events of the loaded job (keep_events), not from the graph's groups: every CollectiveEvent
// record of every rank, matched across ranks by (comm id, seq, op; sends and receives as one
// class), its arrival the start of the kernel with its correlation id plus the rank's clock
// offset; a match with as many ranks as its communicator (send/recv: 2) is one group. Each
// group's skew, last rank and waited-for time, each rank's waited-for sum, last count and
// per-iteration sums must equal the analysis' exactly (integer ns).
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/collective_key.h"
#include "modeler/replay/stragglers.h"
#include "modeler/sim/simulator.h"
#include "tests/testing/job_builder.h"
#include "tests/testing/param_names.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using lumos::testing::TempDir;

struct SlowGroup {
  int64_t skew_ns = 0;
  int32_t last_rank = -1;
  int64_t waited_ns = 0;
};

class RealTraceStragglersTest : public ::testing::TestWithParam<const char*> {};

TEST_P(RealTraceStragglersTest, EveryGroupAndRankMatchesTheSlowWay) {
  TempDir dir;
  const auto replayed = testing::ReplaySharedTrace(GetParam(), dir.path());
  ASSERT_NE(replayed, nullptr);
  const Job* job = &replayed->job;  // With its raw events.
  const ExecutionGraph& graph = replayed->graph;
  const SimResult& sim = replayed->sim;
  const std::vector<IterationReport>& iterations = replayed->iterations;
  const Stragglers s = AnalyzeStragglers(graph, sim, iterations);
  constexpr int64_t kTie = 1000;

  // The slow way: arrivals per (comm, seq, op class), by rank.
  using Key = std::tuple<uint64_t, uint64_t, uint32_t>;
  std::map<Key, std::map<int32_t, int64_t>> arrivals;
  std::map<Key, uint32_t> sizes;
  for (size_t r = 0; r < job->ranks.size(); ++r) {
    const RankTrace& rank = job->ranks[r];
    std::map<uint64_t, int64_t> kernel_start;  // By correlation id: the first kernel's.
    for (const schema::KernelEvent& k : rank.kernels) {
      kernel_start.try_emplace(k.correlation_id, k.start_ns);
    }
    std::map<uint64_t, uint32_t> comm_size;
    for (const CommunicatorInfo& c : rank.communicators) comm_size[c.comm_id] = c.comm_size;
    for (const schema::CollectiveEvent& c : rank.collectives) {
      auto k = kernel_start.find(c.correlation_id);
      if (k == kernel_start.end()) continue;
      const bool p2p = IsPointToPoint(c.op);
      const Key key{c.comm_id, c.seq_number, p2p ? 99u : static_cast<uint32_t>(c.op)};
      arrivals[key][rank.rank] = k->second + graph.rank_offset_ns[r];
      uint32_t size = p2p ? 2 : (c.comm_size != 0 ? c.comm_size : comm_size[c.comm_id]);
      sizes[key] = std::max(sizes[key], size);
    }
  }
  std::map<std::pair<uint64_t, uint64_t>, SlowGroup> slow;  // By (comm, seq).
  std::map<int32_t, int64_t> waited;
  std::map<int32_t, uint64_t> last;
  for (const auto& [key, by_rank] : arrivals) {
    if (by_rank.size() < 2 || by_rank.size() < sizes[key]) continue;
    int64_t first = INT64_MAX, latest = INT64_MIN;
    int32_t latest_rank = -1;
    for (const auto& [rank, a] : by_rank) {
      first = std::min(first, a);
      if (a > latest) latest = a, latest_rank = rank;
    }
    SlowGroup g;
    g.skew_ns = latest - first;
    int near = 0;
    int64_t sum = 0;
    for (const auto& [rank, a] : by_rank) {
      near += a >= latest - kTie ? 1 : 0;
      sum += latest - a;
    }
    if (near == 1) {
      g.last_rank = latest_rank;
      g.waited_ns = sum;
      waited[latest_rank] += sum;
      ++last[latest_rank];
    }
    const bool added = slow.emplace(std::make_pair(std::get<0>(key), std::get<1>(key)), g).second;
    ASSERT_TRUE(added) << "two operations with comm " << std::get<0>(key) << " seq "
                       << std::get<1>(key);
  }

  // The analysis' groups, one by one.
  const std::vector<GroupSkew> skews = GroupSkews(graph, nullptr, kTie);
  ASSERT_EQ(skews.size(), slow.size());
  for (const GroupSkew& x : skews) {
    const CollectiveGroup& c = graph.collectives[x.group];
    const std::string where =
        "comm " + std::to_string(c.comm_id) + " seq " + std::to_string(c.seq_number);
    auto it = slow.find({c.comm_id, c.seq_number});
    ASSERT_NE(it, slow.end()) << where;
    EXPECT_EQ(x.skew_ns, it->second.skew_ns) << where;
    EXPECT_EQ(x.last_rank, it->second.last_rank) << where;
    EXPECT_EQ(x.waited_ns, it->second.waited_ns) << where;
  }
  // Each rank's sums; per iteration, each group in its last rank's window holding the arrival.
  std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> windows;
  for (const IterationReport& it : iterations) {
    windows[it.rank].emplace_back(it.measured_start_ns, it.measured_end_ns);
  }
  for (auto& [rank, w] : windows) std::sort(w.begin(), w.end());
  std::map<int32_t, std::vector<int64_t>> per_iteration;
  for (const auto& [rank, w] : windows) per_iteration[rank].assign(w.size(), 0);
  for (const GroupSkew& x : skews) {
    if (x.last_rank < 0) continue;
    const auto& w = windows[x.last_rank];
    for (size_t k = w.size(); k-- > 0;) {
      if (w[k].first <= x.last_arrival_ns) {
        if (x.last_arrival_ns < w[k].second) per_iteration[x.last_rank][k] += x.waited_ns;
        break;
      }
    }
  }
  uint64_t untied = 0;
  for (const RankStraggling& r : s.measured.ranks) {
    EXPECT_EQ(r.waited_for_ns, waited[r.rank]) << "rank " << r.rank;
    EXPECT_EQ(r.last, last[r.rank]) << "rank " << r.rank;
    EXPECT_EQ(r.waited_per_iteration_ns, per_iteration[r.rank]) << "rank " << r.rank;
    untied += r.last;
  }
  // The replayed side: with measured durations the replay reproduces the arrivals here, so the
  // group count is the same.
  uint64_t replayed_groups = 0;
  for (const OpSkew& o : s.replayed.by_op)
    replayed_groups += o.op == std::string("all") ? o.count : 0;
  EXPECT_EQ(replayed_groups, skews.size());
  // What was checked (docs/validation.md quotes it).
  std::printf("stragglers %s: %zu ranks, %zu groups (%" PRIu64
              " with a last rank), measured straggler %d, replayed %d\n",
              GetParam(), job->ranks.size(), skews.size(), untied, s.measured.straggler,
              s.replayed.straggler);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RealTraceStragglersTest,
                         ::testing::ValuesIn(lumos::testing::kSharedTraces),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return ::lumos::testing::TraceParamName(info.param);
                         });

}  // namespace
}  // namespace lumos::modeler
