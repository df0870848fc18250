// Idle time and launch statistics on every shared trace (kSharedTraces), the measured side
// recomputed the slow way from the raw events of the job loaded with keep_events (not from the
// graph): each kernel, copy and memset with its correlation id matched to the API call that
// launched it (the outermost call around it on its thread, as the graph's node is), on the
// aligned timeline (the rank's clock offset added). Per iteration window: each stream's idle
// time and host wait, the GPU's idle time (no op on any stream), the launch delays (pooled per
// rank and for the job: count, mean, nearest-rank p50/p90/p99, max), the kernels shorter than
// their launch call, and the queue depth's max and integral from a map of +1/-1 changes; each
// stream's dependency wait from the graph's event-wait edges by the same slow loop. Integer
// results must be equal. Then the CLI on one shared trace: both sections, every JSON field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/import/kineto_import.h"
#include "modeler/replay/idle_breakdown.h"
#include "modeler/replay/launch_stats.h"
#include "modeler/replay/replay_cli.h"
#include "modeler/sim/simulator.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/job_builder.h"
#include "tests/testing/param_names.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using lumos::testing::TempDir;

std::string SharedTraces() { return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces"; }

struct Call {
  int64_t start = 0, end = 0;
};

// A GPU op on the aligned timeline, with its launch call if any.
struct Op {
  uint64_t stream = 0;
  int64_t start = 0, end = 0;
  std::optional<Call> launch;
  bool kernel = false;
  int64_t ready = INT64_MIN;  // Graph ops only: the latest end of its event-wait sources.
};

// Correlation id -> the outermost call around the call carrying it: calls sorted by thread and
// start; a call lying inside the previous outermost call of its thread belongs to it (the first
// such id wins, an outermost call's own id replaces an earlier one).
std::map<uint64_t, Call> LaunchCalls(const RankTrace& rank, int64_t offset) {
  std::vector<const schema::ApiCallEvent*> calls;
  for (const schema::ApiCallEvent& c : rank.api_calls) calls.push_back(&c);
  std::stable_sort(calls.begin(), calls.end(), [](const auto* a, const auto* b) {
    return a->thread_id != b->thread_id ? a->thread_id < b->thread_id : a->start_ns < b->start_ns;
  });
  std::map<uint64_t, Call> by_correlation;
  const schema::ApiCallEvent* outer = nullptr;
  for (const schema::ApiCallEvent* c : calls) {
    const int64_t end = c->start_ns + static_cast<int64_t>(c->duration_ns);
    if (outer != nullptr && outer->thread_id == c->thread_id && c->start_ns >= outer->start_ns &&
        end <= outer->start_ns + static_cast<int64_t>(outer->duration_ns)) {
      const Call call{outer->start_ns + offset,
                      outer->start_ns + static_cast<int64_t>(outer->duration_ns) + offset};
      by_correlation.emplace(c->correlation_id, call);
      continue;
    }
    outer = c;
    by_correlation[c->correlation_id] = {c->start_ns + offset, end + offset};
  }
  return by_correlation;
}

std::vector<Op> Ops(const RankTrace& rank, int64_t offset) {
  const std::map<uint64_t, Call> calls = LaunchCalls(rank, offset);
  std::vector<Op> ops;
  auto add = [&](uint64_t stream, int64_t start, uint64_t duration, uint64_t correlation,
                 bool kernel) {
    Op op{stream, start + offset, start + offset + static_cast<int64_t>(duration), {}, kernel};
    if (auto it = calls.find(correlation); it != calls.end()) op.launch = it->second;
    ops.push_back(op);
  };
  for (const auto& k : rank.kernels)
    add(k.stream_id, k.start_ns, k.duration_ns, k.correlation_id, true);
  for (const auto& m : rank.memcpys)
    add(m.stream_id, m.start_ns, m.duration_ns, m.correlation_id, false);
  for (const auto& m : rank.memsets)
    add(m.stream_id, m.start_ns, m.duration_ns, m.correlation_id, false);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const Op& a, const Op& b) { return a.start < b.start; });
  return ops;
}

struct Idle {
  int64_t idle = 0, host_wait = 0, dependency_wait = 0;
};

// Idle time of `ops` (by start) in [begin, end): the time no op runs; host wait: the part of
// each gap before its next op's launch call started; dependency wait: the part after that
// before the op's event-wait sources ended.
Idle IdleOf(const std::vector<const Op*>& ops, int64_t begin, int64_t end) {
  Idle out;
  int64_t busy_until = begin;  // Every op before the cursor has ended by here.
  for (const Op* op : ops) {
    if (op->end <= busy_until) continue;
    if (op->start > busy_until) {
      const int64_t gap_end = std::min(op->start, end);
      if (gap_end > busy_until) {
        out.idle += gap_end - busy_until;
        int64_t t = busy_until;
        if (op->launch) t = std::clamp(op->launch->start, busy_until, gap_end);
        out.host_wait += t - busy_until;
        out.dependency_wait += std::clamp(op->ready, t, gap_end) - t;
      }
      if (op->start >= end) return out;
    }
    busy_until = std::max(busy_until, op->end);
    if (busy_until >= end) return out;
  }
  if (end > busy_until) out.idle += end - busy_until;
  return out;
}

int64_t NearestRank(const std::vector<int64_t>& sorted, double p) {
  const auto k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::max<size_t>(k, 1) - 1];
}

void ExpectDelays(std::vector<int64_t> delays, const DelayStats& d, const std::string& where) {
  std::sort(delays.begin(), delays.end());
  ASSERT_EQ(d.count, delays.size()) << where;
  if (delays.empty()) return;
  int64_t sum = 0;
  for (int64_t x : delays) sum += x;
  EXPECT_EQ(d.sum_ns, sum) << where;
  EXPECT_EQ(d.mean_ns, sum / static_cast<int64_t>(delays.size())) << where;
  EXPECT_EQ(d.p50_ns, NearestRank(delays, 50)) << where;
  EXPECT_EQ(d.p90_ns, NearestRank(delays, 90)) << where;
  EXPECT_EQ(d.p99_ns, NearestRank(delays, 99)) << where;
  EXPECT_EQ(d.max_ns, delays.back()) << where;
}

class RealTraceIdleLaunchTest : public ::testing::TestWithParam<const char*> {};

TEST_P(RealTraceIdleLaunchTest, MeasuredSideMatchesTheSlowWay) {
  TempDir dir;
  const auto replayed = testing::ReplaySharedTrace(GetParam(), dir.path());
  ASSERT_NE(replayed, nullptr);
  const Job* job = &replayed->job;  // With its raw events.
  const ExecutionGraph& graph = replayed->graph;
  const SimResult& sim = replayed->sim;
  const std::vector<IterationReport>& iterations = replayed->iterations;
  ASSERT_FALSE(iterations.empty());
  const IdleReport idle = AnalyzeIdle(graph, sim, iterations);
  const LaunchReport launch = AnalyzeLaunches(graph, sim, iterations);
  ASSERT_EQ(idle.iterations.size(), iterations.size());
  ASSERT_EQ(launch.iterations.size(), iterations.size());
  uint64_t gaps_checked = 0, launched = 0, short_kernels = 0;
  int64_t host_wait = 0, dependency_wait = 0;
  // Dependency wait from the graph: each stream's nodes with their launch call's start and the
  // latest end of their event-wait edges' sources.
  std::map<uint32_t, int64_t> ready;
  for (const Edge& e : graph.edges) {
    if (e.kind != EdgeKind::kEventWait) continue;
    auto at = ready.try_emplace(e.to, graph.nodes[e.from].end_ns()).first;
    at->second = std::max(at->second, graph.nodes[e.from].end_ns());
  }
  std::map<std::pair<uint32_t, uint64_t>, std::vector<Op>> graph_streams;
  for (const Processor& p : graph.processors) {
    if (!p.gpu) continue;
    std::vector<Op>& v = graph_streams[{p.rank_index, p.id}];
    for (uint32_t n : p.nodes) {
      const Node& node = graph.nodes[n];
      Op op{p.id, node.start_ns, node.end_ns(), {}, false};
      if (node.launch != kNoNode) op.launch = Call{graph.nodes[node.launch].start_ns, 0};
      if (auto it = ready.find(n); it != ready.end()) op.ready = it->second;
      v.push_back(op);
    }
    std::stable_sort(v.begin(), v.end(),
                     [](const Op& a, const Op& b) { return a.start < b.start; });
  }
  std::vector<int64_t> job_delays;
  for (size_t r = 0; r < job->ranks.size(); ++r) {
    const RankTrace& rank = job->ranks[r];
    const std::vector<Op> ops = Ops(rank, graph.rank_offset_ns[r]);
    std::map<uint64_t, std::vector<const Op*>> by_stream;
    std::vector<const Op*> all;
    for (const Op& op : ops) by_stream[op.stream].push_back(&op), all.push_back(&op);
    // Queue depth changes: +1 at each launched op's call start, -1 at its end.
    std::map<int64_t, int64_t> changes;
    for (const Op& op : ops) {
      if (op.launch && op.end > op.launch->start) ++changes[op.launch->start], --changes[op.end];
    }
    std::vector<int64_t> delays;
    uint64_t kernels = 0, short_count = 0;
    int64_t short_ns = 0;
    for (size_t i = 0; i < iterations.size(); ++i) {
      const IterationReport& it = iterations[i];
      if (it.rank != rank.rank) continue;
      const std::string where = "rank " + std::to_string(it.rank) + " " + it.name;
      const int64_t begin = it.measured_start_ns, end = it.measured_end_ns;
      const IdleTimes& x = idle.iterations[i];
      ASSERT_EQ(x.streams.size(), by_stream.size()) << where;
      for (const StreamIdle& s : x.streams) {
        const Idle slow = IdleOf(by_stream[s.stream], begin, end);
        EXPECT_EQ(s.measured.idle_ns(), slow.idle) << where << " stream " << s.stream;
        EXPECT_EQ(s.measured.host_wait_ns, slow.host_wait) << where << " stream " << s.stream;
        host_wait += slow.host_wait;
        ++gaps_checked;
        std::vector<const Op*> nodes;
        for (const Op& op : graph_streams[{static_cast<uint32_t>(r), s.stream}]) {
          nodes.push_back(&op);
        }
        const Idle from_graph = IdleOf(nodes, begin, end);
        EXPECT_EQ(s.measured.dependency_wait_ns, from_graph.dependency_wait)
            << where << " stream " << s.stream;
        dependency_wait += from_graph.dependency_wait;
      }
      EXPECT_EQ(x.measured_gpu.idle_ns(), IdleOf(all, begin, end).idle) << where;
      for (const Op& op : ops) {
        if (!op.launch || op.start < begin || op.start >= end) continue;
        delays.push_back(op.start - op.launch->start);
        if (!op.kernel) continue;
        ++kernels;
        if (op.end - op.start < op.launch->end - op.launch->start) {
          ++short_count;
          short_ns += op.end - op.start;
        }
      }
      // The depth at `begin` (every change up to it), then each change inside the window.
      int64_t depth = 0, max = 0, integral = 0, t = begin;
      auto c = changes.begin();
      for (; c != changes.end() && c->first <= begin; ++c) depth += c->second;
      for (; c != changes.end() && c->first < end; ++c) {
        if (c->first > t) max = std::max(max, depth), integral += depth * (c->first - t);
        depth += c->second;
        t = c->first;
      }
      if (end > t) max = std::max(max, depth), integral += depth * (end - t);
      const QueueStats& q = launch.iterations[i].measured_queue;
      EXPECT_EQ(q.max, max) << where;
      EXPECT_EQ(q.depth_ns, integral) << where;
      EXPECT_EQ(q.window_ns, end - begin) << where;
    }
    const auto found = std::find_if(launch.ranks.begin(), launch.ranks.end(),
                                    [&](const RankLaunch& l) { return l.rank == rank.rank; });
    if (found == launch.ranks.end()) {
      EXPECT_TRUE(delays.empty()) << "rank " << rank.rank;
      continue;
    }
    const std::string where = "rank " + std::to_string(rank.rank);
    ExpectDelays(delays, found->measured.delay, where);
    EXPECT_EQ(found->measured.short_kernels.kernels, kernels) << where;
    EXPECT_EQ(found->measured.short_kernels.count, short_count) << where;
    EXPECT_EQ(found->measured.short_kernels.gpu_ns, short_ns) << where;
    launched += delays.size();
    short_kernels += short_count;
    job_delays.insert(job_delays.end(), delays.begin(), delays.end());
  }
  ExpectDelays(job_delays, launch.job_measured.delay, "job");
  EXPECT_GT(launched, 0u);
  // What was checked (docs/validation.md quotes it).
  std::printf("idle/launch %s: %zu iterations, %" PRIu64
              " stream windows, host wait %.3f ms, dependency wait %.3f ms, %" PRIu64
              " launched ops, %" PRIu64 " short kernels\n",
              GetParam(), iterations.size(), gaps_checked, static_cast<double>(host_wait) / 1e6,
              static_cast<double>(dependency_wait) / 1e6, launched, short_kernels);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RealTraceIdleLaunchTest,
                         ::testing::ValuesIn(lumos::testing::kSharedTraces),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return ::lumos::testing::TraceParamName(info.param);
                         });

// `lumos-model replay` as a user runs it on a shared trace: the text has both sections, the
// JSON every field (README: "idle", "launch", per iteration "idle" and "launch_queue").
TEST(IdleLaunchCliTest, ReplayReportsBothSectionsOnARealTrace) {
  TempDir dir;
  auto imported = kineto::ImportKineto(
      {{SharedTraces() + "/hta-single-rank/rank0.json.gz"}, dir.File("rank0.pb.zst"), "", 1});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  auto run = [&dir](std::vector<std::string> args) {
    std::FILE* out = std::tmpfile();
    std::FILE* err = std::tmpfile();
    args.insert(args.begin(), dir.File("rank0.pb.zst"));
    EXPECT_EQ(RunReplayCommand(args, out, err), 0) << testing::ReadAll(err);
    std::string text = testing::ReadAll(out);
    std::fclose(out);
    std::fclose(err);
    return text;
  };
  const std::string text = run({});
  for (const char* part :
       {"\nidle time (sum over 5 iterations of 1 rank)", "host wait (next op not launched yet)",
        "\nlaunches (sum over", "launch delay us (op start - call start)",
        "kernels shorter than their launch call", "launches into a full queue"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part;
  }
  const std::string json = run({"--json"});
  for (const char* field :
       {"\"idle\":{\"job\":{\"measured_window_ns\":", "\"dependency_wait_ns\":", "\"between_ns\":",
        "\"streams\":[{\"stream\":", "\"threads\":[{\"thread\":",
        "\"launch\":{\"queue_limit\":1024,\"bin_ns\":1000000,", "\"delay\":{\"count\":6875,",
        "\"p90_ns\":", "\"short_kernels\":{\"kernels\":", "\"top\":[{\"name\":",
        "\"queue\":{\"max\":", "\"launch_queue\":{\"measured\":{\"max\":", "\"depth_max_1ms\":[",
        "\"full_ns\":"}) {
    EXPECT_NE(json.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace lumos::modeler
