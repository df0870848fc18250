#include "modeler/replay/launch_stats.h"

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "modeler/io/json_writer.h"
#include "modeler/replay/replay_report.h"
#include "modeler/replay/sorted_runs.h"

namespace lumos::modeler {
namespace {

double Us(int64_t ns) { return static_cast<double>(ns) / 1e3; }
double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// A launched GPU op on one side: its times and its call's.
struct Launched {
  int64_t start = 0, end = 0;
  int64_t call_start = 0, call_ns = 0;
  uint32_t node = 0, call = 0;
};

// One step of the queue-depth function: from `t` on, the depth is depth[i] (after every change
// at t; changes at one time are applied together).
struct Step {
  int64_t t = 0;
  int64_t depth = 0;
};

struct NameSum {
  std::string_view name;
  uint64_t count = 0;
  int64_t gpu_ns = 0;
};
// By the name's address: node names view the Job's NamePool, one copy per distinct name, so
// equal names share it and a lookup never compares kernel names (hundreds of bytes).
using NameSums = std::unordered_map<const char*, NameSum>;

// A launch call on one side: its times and how many of its ops are queued from its start.
struct Call {
  int64_t start = 0, ns = 0;
  uint32_t node = 0;
  int64_t own = 0;
};

// One rank's launched ops on one side, in start order, and its queue-depth steps.
struct RankSide {
  std::vector<Launched> ops;  // By start.
  std::vector<Step> steps;    // By time.
  std::vector<Call> calls;    // By start, then node.

  void Build(const ExecutionGraph& g, const SimResult* sim,
             const std::vector<const Processor*>& streams) {
    auto ran = [sim](uint32_t n) { return sim == nullptr || sim->ran(n); };
    auto start = [&](uint32_t n) { return sim ? sim->start_ns[n] : g.nodes[n].start_ns; };
    auto end = [&](uint32_t n) { return sim ? sim->end_ns[n] : g.nodes[n].end_ns(); };
    std::vector<int64_t> ups, downs;  // Depth +1 at each queued op's call start, -1 at its end.
    std::vector<Call> by_op;
    size_t nodes = 0;
    for (const Processor* p : streams) nodes += p->nodes.size();
    ops.reserve(nodes);
    by_op.reserve(nodes);
    ups.reserve(nodes);
    downs.reserve(nodes);
    // Stream by stream: each vector is then a run per stream, in order already but for
    // overlapping ops or calls launching out of order.
    std::vector<size_t> op_runs, queued_runs;
    for (const Processor* p : streams) {
      for (uint32_t n : p->nodes) {
        const uint32_t call = g.nodes[n].launch;
        if (call == kNoNode || !ran(n) || !ran(call)) continue;
        const Launched op{start(n), end(n), start(call), end(call) - start(call), n, call};
        ops.push_back(op);
        const bool queued = op.end > op.call_start;
        by_op.push_back({op.call_start, op.call_ns, call, queued ? 1 : 0});
        if (queued) ups.push_back(op.call_start), downs.push_back(op.end);
      }
      op_runs.push_back(ops.size());
      queued_runs.push_back(ups.size());
    }
    internal::SortRuns(&ops, op_runs, [](const Launched& a, const Launched& b) {
      return a.start != b.start ? a.start < b.start : a.node < b.node;
    });
    internal::SortRuns(&ups, queued_runs, std::less<>());
    internal::SortRuns(&downs, queued_runs, std::less<>());
    // One step per distinct time, after every change at it.
    int64_t depth = 0;
    size_t u = 0, d = 0;
    while (u < ups.size() || d < downs.size()) {
      const int64_t t =
          std::min(u < ups.size() ? ups[u] : INT64_MAX, d < downs.size() ? downs[d] : INT64_MAX);
      for (; u < ups.size() && ups[u] == t; ++u) ++depth;
      for (; d < downs.size() && downs[d] == t; ++d) --depth;
      steps.push_back({t, depth});
    }
    internal::SortRuns(&by_op, op_runs, [](const Call& a, const Call& b) {
      return a.start != b.start ? a.start < b.start : a.node < b.node;
    });
    for (const Call& c : by_op) {
      if (calls.empty() || calls.back().node != c.node) {
        calls.push_back(c);
      } else {
        calls.back().own += c.own;
      }
    }
  }

  // The depth at t (the last step at or before t; 0 before the first).
  int64_t DepthAt(int64_t t) const {
    auto it = std::upper_bound(steps.begin(), steps.end(), t,
                               [](int64_t x, const Step& s) { return x < s.t; });
    return it == steps.begin() ? 0 : std::prev(it)->depth;
  }
};

// Queue figures of [begin, end) and its per-bin maxima.
QueueStats Queue(const RankSide& side, int64_t begin, int64_t end, int64_t bin_ns,
                 std::vector<uint32_t>* bins) {
  QueueStats q;
  if (end <= begin) return q;
  q.window_ns = end - begin;
  if (bin_ns > 0) bins->assign(static_cast<size_t>((end - begin + bin_ns - 1) / bin_ns), 0);
  auto segment = [&](int64_t a, int64_t b, int64_t depth) {
    if (b <= a) return;
    q.max = std::max(q.max, depth);
    q.depth_ns += depth * (b - a);
    if (bin_ns <= 0 || depth == 0) return;
    for (int64_t k = (a - begin) / bin_ns; k <= (b - 1 - begin) / bin_ns; ++k) {
      uint32_t& m = (*bins)[static_cast<size_t>(k)];
      m = std::max(m, static_cast<uint32_t>(depth));
    }
  };
  const std::vector<Step>& s = side.steps;
  auto it = std::upper_bound(s.begin(), s.end(), begin,
                             [](int64_t x, const Step& st) { return x < st.t; });
  int64_t depth = it == s.begin() ? 0 : std::prev(it)->depth;
  int64_t t = begin;
  for (; it != s.end() && it->t < end; ++it) {
    segment(t, it->t, depth);
    t = it->t;
    depth = it->depth;
  }
  segment(t, end, depth);
  return q;
}

void AddQueue(const QueueStats& from, QueueStats* to) {
  to->max = std::max(to->max, from.max);
  to->depth_ns += from.depth_ns;
  to->window_ns += from.window_ns;
  to->full_calls += from.full_calls;
  to->full_ns += from.full_ns;
}

// The first ops of `ops` (by start) starting in [begin, end).
std::pair<size_t, size_t> InWindow(const std::vector<Launched>& ops, int64_t begin, int64_t end) {
  auto first = [&ops](int64_t t) {
    return static_cast<size_t>(
        std::lower_bound(ops.begin(), ops.end(), t,
                         [](const Launched& o, int64_t x) { return o.start < x; }) -
        ops.begin());
  };
  return {first(begin), end > begin ? first(end) : first(begin)};
}

std::vector<ShortKernelName> Top(const NameSums& sums, size_t n) {
  std::vector<const NameSum*> v;
  v.reserve(sums.size());
  for (const auto& [key, s] : sums) v.push_back(&s);
  // Most first; ties by name, so the order does not depend on the hash map's.
  auto before = [](const NameSum* a, const NameSum* b) {
    if (a->count != b->count) return a->count > b->count;
    if (a->gpu_ns != b->gpu_ns) return a->gpu_ns > b->gpu_ns;
    return a->name < b->name;
  };
  const size_t kept = std::min(n, v.size());
  std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(kept), v.end(), before);
  std::vector<ShortKernelName> top;
  top.reserve(kept);
  for (size_t i = 0; i < kept; ++i)
    top.push_back({std::string(v[i]->name), v[i]->count, v[i]->gpu_ns});
  return top;
}

// Everything of one rank or the job on one side while it is summed.
struct Accumulator {
  std::vector<int64_t> delays;
  ShortKernels short_kernels;
  NameSums names;
  QueueStats queue;

  void AddShort(const Accumulator& from) {
    short_kernels.kernels += from.short_kernels.kernels;
    short_kernels.count += from.short_kernels.count;
    short_kernels.gpu_ns += from.short_kernels.gpu_ns;
    for (const auto& [name, s] : from.names) {
      NameSum& to = names[name];
      to.name = s.name;
      to.count += s.count;
      to.gpu_ns += s.gpu_ns;
    }
  }
  LaunchSide Finish(size_t top) {
    LaunchSide side;
    side.delay = Distribution(&delays);
    side.short_kernels = short_kernels;
    side.short_kernels.top = Top(names, top);
    side.queue = queue;
    return side;
  }
};

// One window of one side of a rank into `acc`; returns the window's queue figures.
QueueStats Window(const ExecutionGraph& g, const RankSide& side, int64_t begin, int64_t end,
                  const LaunchOptions& options, Accumulator* acc, std::vector<uint32_t>* bins) {
  const auto [first, last] = InWindow(side.ops, begin, end);
  for (size_t i = first; i < last; ++i) {
    const Launched& op = side.ops[i];
    acc->delays.push_back(op.start - op.call_start);
    const Node& node = g.nodes[op.node];
    if (node.kind != NodeKind::kKernel) continue;
    ++acc->short_kernels.kernels;
    const int64_t ns = op.end - op.start;
    if (ns < op.call_ns) {
      ++acc->short_kernels.count;
      acc->short_kernels.gpu_ns += ns;
      NameSum& s = acc->names[node.name.data()];
      s.name = node.name;
      ++s.count;
      s.gpu_ns += ns;
    }
  }
  QueueStats q = Queue(side, begin, end, options.bin_ns, bins);
  // Launch calls starting in the window while the queue was full without their own ops.
  auto c = std::lower_bound(side.calls.begin(), side.calls.end(), begin,
                            [](const Call& x, int64_t t) { return x.start < t; });
  // The depth at each call's start: the last step at or before it (calls come in time order).
  auto step = std::upper_bound(side.steps.begin(), side.steps.end(), begin,
                               [](int64_t x, const Step& st) { return x < st.t; });
  int64_t depth = side.DepthAt(begin);
  for (; c != side.calls.end() && c->start < end; ++c) {
    for (; step != side.steps.end() && step->t <= c->start; ++step) depth = step->depth;
    if (depth - c->own >= options.queue_limit) {
      ++q.full_calls;
      q.full_ns += c->ns;
    }
  }
  AddQueue(q, &acc->queue);
  return q;
}

}  // namespace

DelayStats Distribution(std::vector<int64_t>* delays_ns) {
  DelayStats d;
  std::vector<int64_t>& v = *delays_ns;
  if (v.empty()) return d;
  d.count = v.size();
  for (int64_t x : v) d.sum_ns += x;
  const auto n = static_cast<int64_t>(v.size());
  d.mean_ns = d.sum_ns / n - (d.sum_ns % n < 0 ? 1 : 0);  // Floor, also below 0.
  // Nearest rank: the smallest value with at least p% of the values at or below it, the
  // ceil(p n / 100)-th smallest. Each selection leaves the larger values after it, so the next
  // one looks only there.
  auto begin = v.begin();
  auto rank = [&v, &begin](int p) {
    const size_t k = std::max<size_t>((static_cast<size_t>(p) * v.size() + 99) / 100, 1) - 1;
    const auto at = v.begin() + static_cast<std::ptrdiff_t>(k);
    std::nth_element(begin, at, v.end());
    begin = at;
    return *at;
  };
  d.p50_ns = rank(50);
  d.p90_ns = rank(90);
  d.p99_ns = rank(99);
  d.max_ns = *std::max_element(begin, v.end());
  return d;
}

LaunchReport AnalyzeLaunches(const ExecutionGraph& g, const SimResult& sim,
                             const std::vector<IterationReport>& iterations,
                             const LaunchOptions& options) {
  LaunchReport report;
  report.queue_limit = options.queue_limit;
  report.bin_ns = options.bin_ns;
  report.iterations.resize(iterations.size());
  std::vector<std::vector<const Processor*>> streams(g.ranks.size());
  for (const Processor& p : g.processors) {
    if (p.gpu && p.rank_index < streams.size()) streams[p.rank_index].push_back(&p);
  }
  Accumulator job_m, job_r;
  for (const IterationsOfRank& of_rank : IterationsPerRank(g, iterations)) {
    const uint32_t r = of_rank.rank_index;
    RankSide measured, replayed;
    measured.Build(g, nullptr, streams[r]);
    replayed.Build(g, &sim, streams[r]);
    Accumulator m, rp;
    for (size_t i : of_rank.iterations) {
      const IterationReport& it = iterations[i];
      IterationLaunch& x = report.iterations[i];
      x.measured_queue = Window(g, measured, it.measured_start_ns, it.measured_end_ns, options, &m,
                                &x.measured_depth);
      x.replayed_queue = Window(g, replayed, it.replayed_start_ns, it.replayed_end_ns, options, &rp,
                                &x.replayed_depth);
    }
    job_m.delays.insert(job_m.delays.end(), m.delays.begin(), m.delays.end());
    job_r.delays.insert(job_r.delays.end(), rp.delays.begin(), rp.delays.end());
    job_m.AddShort(m);
    job_r.AddShort(rp);
    AddQueue(m.queue, &job_m.queue);
    AddQueue(rp.queue, &job_r.queue);
    report.ranks.push_back({g.ranks[r], m.Finish(options.top), rp.Finish(options.top)});
  }
  report.job_measured = job_m.Finish(options.top);
  report.job_replayed = job_r.Finish(options.top);
  return report;
}

namespace {

constexpr size_t kTextRanks = 5;

void QueueJson(const QueueStats& q, io::JsonWriter* w) {
  w->KeyInt("max", q.max);
  w->Key("mean");
  w->Fixed(q.mean(), 4);
  w->KeyUint("full_calls", q.full_calls);
  w->KeyInt("full_ns", q.full_ns);
}

void SideJson(const char* key, const LaunchSide& s, io::JsonWriter* w) {
  w->Key(key);
  w->BeginObject();
  w->Key("delay");
  w->BeginObject();
  w->KeyUint("count", s.delay.count);
  w->KeyInt("mean_ns", s.delay.mean_ns);
  w->KeyInt("p50_ns", s.delay.p50_ns);
  w->KeyInt("p90_ns", s.delay.p90_ns);
  w->KeyInt("p99_ns", s.delay.p99_ns);
  w->KeyInt("max_ns", s.delay.max_ns);
  w->EndObject();
  const ShortKernels& k = s.short_kernels;
  w->Key("short_kernels");
  w->BeginObject();
  w->KeyUint("kernels", k.kernels);
  w->KeyUint("count", k.count);
  w->Key("share_percent");
  w->Fixed(k.share_percent(), 4);
  w->KeyInt("gpu_ns", k.gpu_ns);
  w->Key("top");
  w->BeginArray();
  for (const ShortKernelName& n : k.top) {
    w->BeginObject();
    w->KeyString("name", n.name);
    w->KeyUint("count", n.count);
    w->KeyInt("gpu_ns", n.gpu_ns);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
  w->Key("queue");
  w->BeginObject();
  QueueJson(s.queue, w);
  w->EndObject();
  w->EndObject();
}

}  // namespace

void WriteLaunchText(const ReplayReport& r, const std::string& over, std::FILE* out) {
  const LaunchReport& l = r.launch;
  if (l.ranks.empty()) return;
  const LaunchSide& m = l.job_measured;
  const LaunchSide& rp = l.job_replayed;
  std::fprintf(out, "\nlaunches (sum over %s)\n  %-44s %10s %10s\n", over.c_str(), "", "measured",
               "replayed");
  std::fprintf(out, "  %-44s %10" PRIu64 " %10" PRIu64 "\n", "launched GPU ops", m.delay.count,
               rp.delay.count);
  auto us_row = [out](const char* what, int64_t a, int64_t b) {
    std::fprintf(out, "  %-44s %10.1f %10.1f\n", what, Us(a), Us(b));
  };
  us_row("launch delay us (op start - call start): mean", m.delay.mean_ns, rp.delay.mean_ns);
  us_row("  p50", m.delay.p50_ns, rp.delay.p50_ns);
  us_row("  p90", m.delay.p90_ns, rp.delay.p90_ns);
  us_row("  p99", m.delay.p99_ns, rp.delay.p99_ns);
  us_row("  max", m.delay.max_ns, rp.delay.max_ns);
  std::fprintf(out, "  %-44s %10" PRIu64 " %10" PRIu64 "\n",
               "kernels shorter than their launch call", m.short_kernels.count,
               rp.short_kernels.count);
  std::fprintf(out, "  %-44s %9.1f%% %9.1f%%\n", "  share of launched kernels",
               m.short_kernels.share_percent(), rp.short_kernels.share_percent());
  std::fprintf(out, "  %-44s %10.3f %10.3f\n", "  their GPU time ms", Ms(m.short_kernels.gpu_ns),
               Ms(rp.short_kernels.gpu_ns));
  std::fprintf(out, "  %-44s %10" PRId64 " %10" PRId64 "\n",
               "queue depth (launched, not finished): max", m.queue.max, rp.queue.max);
  std::fprintf(out, "  %-44s %10.1f %10.1f\n", "  time-weighted mean", m.queue.mean(),
               rp.queue.mean());
  char full[64];
  std::snprintf(full, sizeof(full), "launches into a full queue (>= %" PRId64 ")", l.queue_limit);
  std::fprintf(out, "  %-44s %10" PRIu64 " %10" PRIu64 "\n", full, m.queue.full_calls,
               rp.queue.full_calls);
  std::fprintf(out, "  %-44s %10.3f %10.3f\n", "  their host time ms", Ms(m.queue.full_ns),
               Ms(rp.queue.full_ns));
  if (!m.short_kernels.top.empty()) {
    std::fprintf(out, "  short kernels, most frequent (measured):\n");
    for (const ShortKernelName& n : m.short_kernels.top) {
      std::fprintf(out, "    %8" PRIu64 " %10.3f ms  %.80s\n", n.count, Ms(n.gpu_ns),
                   n.name.c_str());
    }
  }
  std::vector<const RankLaunch*> worst;
  worst.reserve(l.ranks.size());
  for (const RankLaunch& x : l.ranks) worst.push_back(&x);
  std::stable_sort(worst.begin(), worst.end(), [](const RankLaunch* a, const RankLaunch* b) {
    return a->measured.delay.p99_ns > b->measured.delay.p99_ns;
  });
  const size_t shown = std::min(kTextRanks, worst.size());
  std::fprintf(out,
               "  ranks with the largest p99 launch delay (measured)\n"
               "    %6s %10s %10s %8s %10s %14s\n",
               "rank", "p99 us", "max us", "short %", "max depth", "full-queue ms");
  for (size_t i = 0; i < shown; ++i) {
    const LaunchSide& s = worst[i]->measured;
    std::fprintf(out, "    %6d %10.1f %10.1f %8.1f %10" PRId64 " %14.3f\n", worst[i]->rank,
                 Us(s.delay.p99_ns), Us(s.delay.max_ns), s.short_kernels.share_percent(),
                 s.queue.max, Ms(s.queue.full_ns));
  }
  if (worst.size() > shown) {
    std::fprintf(out, "    ... %zu more rank(s) (all in --json)\n", worst.size() - shown);
  }
}

void WriteLaunchJson(const ReplayReport& r, io::JsonWriter* w) {
  const LaunchReport& l = r.launch;
  w->Key("launch");
  w->BeginObject();
  w->KeyInt("queue_limit", l.queue_limit);
  w->KeyInt("bin_ns", l.bin_ns);
  w->Key("job");
  w->BeginObject();
  SideJson("measured", l.job_measured, w);
  SideJson("replayed", l.job_replayed, w);
  w->EndObject();
  w->Key("per_rank");
  w->BeginArray(true);
  for (const RankLaunch& rank : l.ranks) {
    w->BeginObject();
    w->KeyInt("rank", rank.rank);
    SideJson("measured", rank.measured, w);
    SideJson("replayed", rank.replayed, w);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteIterationLaunchJson(const ReplayReport& r, size_t index, io::JsonWriter* w) {
  if (index >= r.launch.iterations.size()) return;
  const IterationLaunch& x = r.launch.iterations[index];
  auto side = [w](const char* key, const QueueStats& q, const std::vector<uint32_t>& bins) {
    w->Key(key);
    w->BeginObject();
    QueueJson(q, w);
    w->Key("depth_max_1ms");
    w->BeginArray();
    for (uint32_t b : bins) w->Uint(b);
    w->EndArray();
    w->EndObject();
  };
  w->Key("launch_queue");
  w->BeginObject();
  side("measured", x.measured_queue, x.measured_depth);
  side("replayed", x.replayed_queue, x.replayed_depth);
  w->EndObject();
}

}  // namespace lumos::modeler
