#include "modeler/replay/idle_breakdown.h"

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <map>
#include <utility>

#include "modeler/io/json_writer.h"
#include "modeler/replay/replay_report.h"
#include "modeler/replay/sorted_runs.h"

namespace lumos::modeler {
namespace {

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

double Percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// One side's times: the graph's measured ones, or a simulation's.
class Side {
 public:
  Side(const ExecutionGraph& g, const SimResult* sim) : g_(g), sim_(sim) {}
  bool ran(uint32_t n) const { return sim_ == nullptr || sim_->ran(n); }
  int64_t start(uint32_t n) const { return sim_ ? sim_->start_ns[n] : g_.nodes[n].start_ns; }
  int64_t end(uint32_t n) const { return sim_ ? sim_->end_ns[n] : g_.nodes[n].end_ns(); }

 private:
  const ExecutionGraph& g_;
  const SimResult* sim_;
};

struct Span {
  int64_t start = 0, end = 0;
  uint32_t node = 0;
};

// Nodes in start order (ties: graph order) with the running latest end, so a window's gaps
// are found from its first node on.
struct Timeline {
  std::vector<Span> spans;
  std::vector<int64_t> cover;  // cover[i]: the latest end of spans[0..i].

  void Add(const Side& side, uint32_t n) {
    if (side.ran(n)) spans.push_back({side.start(n), side.end(n), n});
  }
  static bool Before(const Span& a, const Span& b) {
    return a.start != b.start ? a.start < b.start : a.node < b.node;
  }
  void Finish() {
    // A stream's or thread's nodes come in order already (measured order; a replay keeps it).
    if (!std::is_sorted(spans.begin(), spans.end(), Before)) {
      std::sort(spans.begin(), spans.end(), Before);
    }
    cover.resize(spans.size());
    int64_t latest = INT64_MIN;
    for (size_t i = 0; i < spans.size(); ++i) cover[i] = latest = std::max(latest, spans[i].end);
  }
  // The first span starting at or after t.
  size_t FirstFrom(int64_t t) const {
    return static_cast<size_t>(
        std::lower_bound(spans.begin(), spans.end(), t,
                         [](const Span& s, int64_t x) { return s.start < x; }) -
        spans.begin());
  }
};

// The event-wait in-edges' sources of each node that has some, and for the rank at hand, where
// each of its nodes' sources start in that list (a gap's look-up is then one array read: most
// GPU ops wait for no event).
class EventWaits {
 public:
  explicit EventWaits(const ExecutionGraph& g) {
    for (const Edge& e : g.edges) {
      if (e.kind == EdgeKind::kEventWait) waits_.emplace_back(e.to, e.from);
    }
    std::sort(waits_.begin(), waits_.end());
  }
  // Index the nodes [first, last) (one rank's).
  void Select(uint32_t first, uint32_t last) {
    first_ = first;
    begin_.assign(last - first, kNone);
    auto it = std::lower_bound(waits_.begin(), waits_.end(), std::make_pair(first, uint32_t{0}));
    for (; it != waits_.end() && it->first < last; ++it) {
      uint32_t& b = begin_[it->first - first];
      if (b == kNone) b = static_cast<uint32_t>(it - waits_.begin());
    }
  }
  // Calls f(source) for each event-wait source of node n.
  template <typename F>
  void ForEach(uint32_t n, F f) const {
    size_t i = 0;
    if (n >= first_ && n - first_ < begin_.size()) {
      if (begin_[n - first_] == kNone) return;
      i = begin_[n - first_];
    } else {
      i = static_cast<size_t>(
          std::lower_bound(waits_.begin(), waits_.end(), std::make_pair(n, uint32_t{0})) -
          waits_.begin());
    }
    for (; i < waits_.size() && waits_[i].first == n; ++i) f(waits_[i].second);
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<std::pair<uint32_t, uint32_t>> waits_;  // (to, from), sorted.
  uint32_t first_ = 0;
  std::vector<uint32_t> begin_;
};

class Classifier {
 public:
  Classifier(const ExecutionGraph& g, const EventWaits& waits, const Side& side)
      : g_(g), waits_(waits), side_(side) {}

  // Gap [a, b) before `next` (kNoNode: none), split in time order.
  void Gap(int64_t a, int64_t b, uint32_t next, IdleSplit* split) const {
    if (b <= a) return;
    if (next == kNoNode) {
      split->other_ns += b - a;
      return;
    }
    int64_t t = a;
    const uint32_t launch = g_.nodes[next].launch;
    if (launch != kNoNode && side_.ran(launch)) {
      t = std::clamp(side_.start(launch), a, b);
      split->host_wait_ns += t - a;
    }
    const int64_t ready = DependencyEnd(next);
    if (ready > t) {
      const int64_t until = std::min(ready, b);
      split->dependency_wait_ns += until - t;
      t = until;
    }
    split->other_ns += b - t;
  }

  // The idle time of `timeline` in [begin, end).
  IdleSplit Idle(const Timeline& timeline, int64_t begin, int64_t end) const {
    IdleSplit split;
    if (end <= begin) return split;
    const std::vector<Span>& s = timeline.spans;
    size_t j = timeline.FirstFrom(begin);
    int64_t cursor = j > 0 ? std::max(begin, timeline.cover[j - 1]) : begin;
    for (; j < s.size() && s[j].start < end; ++j) {
      if (s[j].start > cursor) Gap(cursor, s[j].start, s[j].node, &split);
      cursor = std::max(cursor, s[j].end);
    }
    if (cursor < end) Gap(cursor, end, j < s.size() ? s[j].node : kNoNode, &split);
    return split;
  }

 private:
  // The latest end of the node's event-wait sources (INT64_MIN: none).
  int64_t DependencyEnd(uint32_t n) const {
    int64_t latest = INT64_MIN;
    waits_.ForEach(n, [&](uint32_t from) {
      if (side_.ran(from)) latest = std::max(latest, side_.end(from));
    });
    return latest;
  }

  const ExecutionGraph& g_;
  const EventWaits& waits_;
  const Side& side_;
};

// A thread's time in [begin, end).
HostSplit Host(const ExecutionGraph& g, const Timeline& calls, int64_t begin, int64_t end) {
  HostSplit h;
  if (end <= begin) return h;
  auto add_call = [&](const Span& c) {
    const int64_t ns = std::min(c.end, end) - std::max(c.start, begin);
    if (ns <= 0) return;
    (g.nodes[c.node].sync != kNoNode ? h.sync_ns : h.api_ns) += ns;
  };
  const std::vector<Span>& s = calls.spans;
  size_t j = calls.FirstFrom(begin);
  const bool any_before = j > 0;
  if (any_before) add_call(s[j - 1]);  // The call running at `begin`, if any.
  int64_t cursor = any_before ? std::max(begin, calls.cover[j - 1]) : begin;
  bool before = any_before;
  for (; j < s.size() && s[j].start < end; ++j) {
    if (before && s[j].start > cursor) h.between_ns += s[j].start - cursor;
    add_call(s[j]);
    cursor = std::max(cursor, s[j].end);
    before = true;
  }
  if (before && j < s.size() && cursor < end) h.between_ns += end - cursor;
  return h;
}

void Add(const IdleSplit& from, IdleSplit* to) {
  to->host_wait_ns += from.host_wait_ns;
  to->dependency_wait_ns += from.dependency_wait_ns;
  to->other_ns += from.other_ns;
}

void Add(const HostSplit& from, HostSplit* to) {
  to->sync_ns += from.sync_ns;
  to->api_ns += from.api_ns;
  to->between_ns += from.between_ns;
}

// Adds the totals (not the streams and threads).
void AddTotals(const IdleTimes& from, IdleTimes* to) {
  to->measured_window_ns += from.measured_window_ns;
  to->replayed_window_ns += from.replayed_window_ns;
  Add(from.measured_gpu, &to->measured_gpu);
  Add(from.replayed_gpu, &to->replayed_gpu);
  Add(from.measured_host, &to->measured_host);
  Add(from.replayed_host, &to->replayed_host);
}

// One rank's processors and timelines, both sides.
struct RankTimelines {
  std::vector<const Processor*> streams, threads;  // By id.
  std::vector<Timeline> measured_streams, replayed_streams, measured_threads, replayed_threads;
  Timeline measured_gpu, replayed_gpu;  // All streams.
};

RankTimelines Build(const ExecutionGraph& g, const Side& measured, const Side& replayed,
                    std::vector<const Processor*> processors) {
  std::sort(processors.begin(), processors.end(),
            [](const Processor* a, const Processor* b) { return a->id < b->id; });
  RankTimelines t;
  for (const Processor* p : processors) (p->gpu ? t.streams : t.threads).push_back(p);
  auto fill = [&](const std::vector<const Processor*>& ps, std::vector<Timeline>* m,
                  std::vector<Timeline>* r) {
    m->resize(ps.size());
    r->resize(ps.size());
    for (size_t i = 0; i < ps.size(); ++i) {
      for (uint32_t n : ps[i]->nodes) {
        (*m)[i].Add(measured, n);
        (*r)[i].Add(replayed, n);
      }
      (*m)[i].Finish();
      (*r)[i].Finish();
    }
  };
  fill(t.streams, &t.measured_streams, &t.replayed_streams);
  fill(t.threads, &t.measured_threads, &t.replayed_threads);
  // All streams, stream by stream: runs in order already (a stream runs its ops in order).
  std::vector<size_t> m_runs, r_runs;
  for (size_t i = 0; i < t.streams.size(); ++i) {
    const auto& m = t.measured_streams[i].spans;
    const auto& r = t.replayed_streams[i].spans;
    t.measured_gpu.spans.insert(t.measured_gpu.spans.end(), m.begin(), m.end());
    t.replayed_gpu.spans.insert(t.replayed_gpu.spans.end(), r.begin(), r.end());
    m_runs.push_back(t.measured_gpu.spans.size());
    r_runs.push_back(t.replayed_gpu.spans.size());
  }
  internal::SortRuns(&t.measured_gpu.spans, m_runs, Timeline::Before);
  internal::SortRuns(&t.replayed_gpu.spans, r_runs, Timeline::Before);
  t.measured_gpu.Finish();
  t.replayed_gpu.Finish();
  return t;
}

void SplitJson(const char* key, const IdleSplit& s, io::JsonWriter* w) {
  w->Key(key);
  w->BeginObject();
  w->KeyInt("host_wait_ns", s.host_wait_ns);
  w->KeyInt("dependency_wait_ns", s.dependency_wait_ns);
  w->KeyInt("other_ns", s.other_ns);
  w->KeyInt("idle_ns", s.idle_ns());
  w->EndObject();
}

void HostJson(const char* key, const HostSplit& h, io::JsonWriter* w) {
  w->Key(key);
  w->BeginObject();
  w->KeyInt("sync_ns", h.sync_ns);
  w->KeyInt("api_ns", h.api_ns);
  w->KeyInt("between_ns", h.between_ns);
  w->Key("blocked_percent");
  w->Fixed(h.blocked_percent(), 4);
  w->EndObject();
}

// "gpu" and "host", measured and replayed.
void TotalsJson(const IdleTimes& t, io::JsonWriter* w) {
  w->Key("gpu");
  w->BeginObject();
  SplitJson("measured", t.measured_gpu, w);
  SplitJson("replayed", t.replayed_gpu, w);
  w->EndObject();
  w->Key("host");
  w->BeginObject();
  HostJson("measured", t.measured_host, w);
  HostJson("replayed", t.replayed_host, w);
  w->EndObject();
}

constexpr size_t kTextRanks = 5;

}  // namespace

IdleReport AnalyzeIdle(const ExecutionGraph& g, const SimResult& sim,
                       const std::vector<IterationReport>& iterations) {
  IdleReport report;
  report.iterations.resize(iterations.size());
  std::vector<std::vector<const Processor*>> processors(g.ranks.size());
  for (const Processor& p : g.processors) {
    if (p.rank_index < processors.size()) processors[p.rank_index].push_back(&p);
  }
  EventWaits waits(g);
  const Side measured(g, nullptr), replayed(g, &sim);
  const Classifier measured_gaps(g, waits, measured), replayed_gaps(g, waits, replayed);
  // In rank order, as the report lists them.
  for (const IterationsOfRank& of_rank : IterationsPerRank(g, iterations)) {
    const uint32_t r = of_rank.rank_index;
    const RankTimelines t = Build(g, measured, replayed, processors[r]);
    uint32_t first = UINT32_MAX, last = 0;  // The rank's node ids.
    for (const Processor* p : processors[r]) {
      for (uint32_t n : p->nodes) first = std::min(first, n), last = std::max(last, n + 1);
    }
    if (first < last) waits.Select(first, last);
    RankIdle sum;
    sum.rank = g.ranks[r];
    for (const Processor* p : t.streams) sum.times.streams.push_back({p->id, {}, {}});
    for (const Processor* p : t.threads) sum.times.threads.push_back({p->id, {}, {}});
    for (size_t i : of_rank.iterations) {
      const IterationReport& it = iterations[i];
      const int64_t m0 = it.measured_start_ns, m1 = it.measured_end_ns;
      const int64_t r0 = it.replayed_start_ns, r1 = it.replayed_end_ns;
      IdleTimes& x = report.iterations[i];
      x.measured_window_ns = std::max<int64_t>(0, m1 - m0);
      x.replayed_window_ns = std::max<int64_t>(0, r1 - r0);
      x.measured_gpu = measured_gaps.Idle(t.measured_gpu, m0, m1);
      x.replayed_gpu = replayed_gaps.Idle(t.replayed_gpu, r0, r1);
      for (size_t s = 0; s < t.streams.size(); ++s) {
        StreamIdle stream{t.streams[s]->id, measured_gaps.Idle(t.measured_streams[s], m0, m1),
                          replayed_gaps.Idle(t.replayed_streams[s], r0, r1)};
        Add(stream.measured, &sum.times.streams[s].measured);
        Add(stream.replayed, &sum.times.streams[s].replayed);
        x.streams.push_back(stream);
      }
      for (size_t h = 0; h < t.threads.size(); ++h) {
        ThreadHost thread{t.threads[h]->id, Host(g, t.measured_threads[h], m0, m1),
                          Host(g, t.replayed_threads[h], r0, r1)};
        Add(thread.measured, &x.measured_host);
        Add(thread.replayed, &x.replayed_host);
        Add(thread.measured, &sum.times.threads[h].measured);
        Add(thread.replayed, &sum.times.threads[h].replayed);
        x.threads.push_back(thread);
      }
      AddTotals(x, &sum.times);
    }
    AddTotals(sum.times, &report.job);
    report.ranks.push_back(std::move(sum));
  }
  return report;
}

void WriteIdleText(const ReplayReport& r, const std::string& over, std::FILE* out) {
  const IdleReport& idle = r.idle;
  if (idle.ranks.empty()) return;
  const IdleTimes& j = idle.job;
  std::fprintf(out, "\nidle time (sum over %s)\n  %-45s %12s %12s %10s %10s\n", over.c_str(), "",
               "measured ms", "replayed ms", "measured %", "replayed %");
  auto row = [out](const char* what, int64_t m, int64_t rp, int64_t m_whole, int64_t r_whole) {
    std::fprintf(out, "  %-45s %12.3f %12.3f %10.1f %10.1f\n", what, Ms(m), Ms(rp),
                 Percent(m, m_whole), Percent(rp, r_whole));
  };
  const int64_t mw = j.measured_window_ns, rw = j.replayed_window_ns;
  row("GPU idle (no op on any stream; % of window)", j.measured_gpu.idle_ns(),
      j.replayed_gpu.idle_ns(), mw, rw);
  row("  host wait (next op not launched yet)", j.measured_gpu.host_wait_ns,
      j.replayed_gpu.host_wait_ns, mw, rw);
  row("  dependency wait (event on another stream)", j.measured_gpu.dependency_wait_ns,
      j.replayed_gpu.dependency_wait_ns, mw, rw);
  row("  other (launch latency, queueing)", j.measured_gpu.other_ns, j.replayed_gpu.other_ns, mw,
      rw);
  const int64_t mh = j.measured_host.total_ns(), rh = j.replayed_host.total_ns();
  row("host threads: blocked in syncs (% of host)", j.measured_host.sync_ns,
      j.replayed_host.sync_ns, mh, rh);
  row("  in other API calls", j.measured_host.api_ns, j.replayed_host.api_ns, mh, rh);
  row("  between calls (framework, Python)", j.measured_host.between_ns, j.replayed_host.between_ns,
      mh, rh);
  // The ranks whose GPU idled most (measured), as a share of their windows.
  std::vector<const RankIdle*> worst;
  worst.reserve(idle.ranks.size());
  for (const RankIdle& x : idle.ranks) worst.push_back(&x);
  std::stable_sort(worst.begin(), worst.end(), [](const RankIdle* a, const RankIdle* b) {
    return Percent(a->times.measured_gpu.idle_ns(), a->times.measured_window_ns) >
           Percent(b->times.measured_gpu.idle_ns(), b->times.measured_window_ns);
  });
  const size_t shown = std::min(kTextRanks, worst.size());
  std::fprintf(out,
               "  ranks with the most GPU idle (measured, %% of window)\n"
               "    %6s %8s %10s %11s %8s %14s\n",
               "rank", "idle", "host wait", "dependency", "other", "host blocked %");
  for (size_t i = 0; i < shown; ++i) {
    const IdleTimes& t = worst[i]->times;
    const int64_t w = t.measured_window_ns;
    std::fprintf(out, "    %6d %8.1f %10.1f %11.1f %8.1f %14.1f\n", worst[i]->rank,
                 Percent(t.measured_gpu.idle_ns(), w), Percent(t.measured_gpu.host_wait_ns, w),
                 Percent(t.measured_gpu.dependency_wait_ns, w), Percent(t.measured_gpu.other_ns, w),
                 t.measured_host.blocked_percent());
  }
  if (worst.size() > shown) {
    std::fprintf(out, "    ... %zu more rank(s) (all, with streams and threads, in --json)\n",
                 worst.size() - shown);
  }
}

void WriteIdleJson(const ReplayReport& r, io::JsonWriter* w) {
  const IdleReport& idle = r.idle;
  w->Key("idle");
  w->BeginObject();
  w->Key("job");
  w->BeginObject();
  w->KeyInt("measured_window_ns", idle.job.measured_window_ns);
  w->KeyInt("replayed_window_ns", idle.job.replayed_window_ns);
  TotalsJson(idle.job, w);
  w->EndObject();
  w->Key("per_rank");
  w->BeginArray(true);
  for (const RankIdle& rank : idle.ranks) {
    const IdleTimes& t = rank.times;
    w->BeginObject();
    w->KeyInt("rank", rank.rank);
    w->KeyInt("measured_window_ns", t.measured_window_ns);
    w->KeyInt("replayed_window_ns", t.replayed_window_ns);
    TotalsJson(t, w);
    w->Key("streams");
    w->BeginArray();
    for (const StreamIdle& s : t.streams) {
      w->BeginObject();
      w->KeyUint("stream", s.stream);
      SplitJson("measured", s.measured, w);
      SplitJson("replayed", s.replayed, w);
      w->EndObject();
    }
    w->EndArray();
    w->Key("threads");
    w->BeginArray();
    for (const ThreadHost& h : t.threads) {
      w->BeginObject();
      w->KeyUint("thread", h.thread);
      HostJson("measured", h.measured, w);
      HostJson("replayed", h.replayed, w);
      w->EndObject();
    }
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteIterationIdleJson(const ReplayReport& r, size_t index, io::JsonWriter* w) {
  if (index >= r.idle.iterations.size()) return;
  w->Key("idle");
  w->BeginObject();
  TotalsJson(r.idle.iterations[index], w);
  w->EndObject();
}

}  // namespace lumos::modeler
