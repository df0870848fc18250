#include "modeler/report/replay_analysis.h"

#include <algorithm>
#include <map>

namespace lumos::modeler {
namespace {

struct Range {
  std::string name;
  int64_t start_ns, end_ns;
  uint32_t thread_id;
};

bool IsStepName(std::string_view name) { return name.rfind("ProfilerStep#", 0) == 0; }

std::vector<Range> IterationRanges(const RankTrace& rank, int64_t offset,
                                   const AnalysisOptions& options) {
  std::vector<Range> out;
  auto add = [&](std::string_view name, int64_t start, uint64_t duration, uint32_t thread) {
    out.push_back({std::string(name), start + offset,
                   start + offset + static_cast<int64_t>(duration), thread});
  };
  for (const agent::HostRangeEvent& h : rank.host_ranges) {
    const bool match = options.iteration
                           ? std::regex_search(h.name.begin(), h.name.end(), *options.iteration)
                           : (h.category == schema::HostRangeCategory::kStep || IsStepName(h.name));
    if (match) add(h.name, h.start_ns, h.duration_ns, h.thread_id);
  }
  for (const agent::NvtxEvent& n : rank.nvtx) {
    const bool match = options.iteration
                           ? std::regex_search(n.name.begin(), n.name.end(), *options.iteration)
                           : IsStepName(n.name);
    if (match && n.duration_ns > 0) add(n.name, n.start_ns, n.duration_ns, n.thread_id);
  }
  std::sort(out.begin(), out.end(), [](const Range& a, const Range& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.name < b.name;
  });
  return out;
}

// Host nodes of rank r, per thread id.
std::map<uint64_t, const Processor*> ThreadsOf(const ExecutionGraph& g, uint32_t r) {
  std::map<uint64_t, const Processor*> threads;
  for (const Processor& p : g.processors) {
    if (!p.gpu && p.rank_index == r) threads[p.id] = &p;
  }
  return threads;
}

// Sweep over intervals of two classes inside [begin, end).
Breakdown Sweep(const std::vector<std::pair<int64_t, int64_t>>& compute,
                const std::vector<std::pair<int64_t, int64_t>>& comm, int64_t begin, int64_t end) {
  struct Point {
    int64_t t;
    int compute, comm;
  };
  std::vector<Point> points;
  for (auto [a, b] : compute) {
    a = std::max(a, begin), b = std::min(b, end);
    if (a < b) points.push_back({a, 1, 0}), points.push_back({b, -1, 0});
  }
  for (auto [a, b] : comm) {
    a = std::max(a, begin), b = std::min(b, end);
    if (a < b) points.push_back({a, 0, 1}), points.push_back({b, 0, -1});
  }
  std::sort(points.begin(), points.end(), [](const Point& x, const Point& y) { return x.t < y.t; });
  Breakdown out;
  int compute_open = 0, comm_open = 0;
  int64_t t = begin;
  for (const Point& p : points) {
    const int64_t span = p.t - t;
    if (span > 0) {
      if (compute_open > 0 && comm_open > 0)
        out.overlapped_ns += span;
      else if (compute_open > 0)
        out.exposed_compute_ns += span;
      else if (comm_open > 0)
        out.exposed_comm_ns += span;
      else
        out.other_ns += span;
    }
    t = p.t;
    compute_open += p.compute;
    comm_open += p.comm;
  }
  if (end > t) out.other_ns += end - t;
  return out;
}

std::vector<double> BusyBins(std::vector<std::pair<int64_t, int64_t>> intervals, int64_t begin,
                             int64_t end, int64_t bin) {
  std::vector<double> bins;
  if (end <= begin || bin <= 0) return bins;
  const size_t count = static_cast<size_t>((end - begin + bin - 1) / bin);
  std::vector<int64_t> busy(count, 0);
  std::sort(intervals.begin(), intervals.end());
  int64_t covered_to = begin;
  for (auto [a, b] : intervals) {
    a = std::max({a, begin, covered_to});
    b = std::min(b, end);
    if (a >= b) continue;
    covered_to = b;
    for (int64_t t = a; t < b;) {
      const size_t i = static_cast<size_t>((t - begin) / bin);
      const int64_t bin_end = begin + static_cast<int64_t>(i + 1) * bin;
      const int64_t stop = std::min(b, bin_end);
      busy[i] += stop - t;
      t = stop;
    }
  }
  for (size_t i = 0; i < count; ++i) {
    const int64_t width = std::min(bin, end - (begin + static_cast<int64_t>(i) * bin));
    bins.push_back(width > 0 ? static_cast<double>(busy[i]) / static_cast<double>(width) : 0.0);
  }
  return bins;
}

std::string NodeLabel(const Node& n) {
  switch (n.work) {
    case WorkClass::kHost:
      return "host API calls";
    case WorkClass::kCompute:
      return "kernel " + KernelClass(n.name);
    case WorkClass::kCommunication:
      return "collective";
    case WorkClass::kMemory:
      return "memcpy/memset";
  }
  return "?";
}

const char* GapLabel(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kThreadOrder:
      return "host gap";
    case EdgeKind::kLaunch:
      return "launch latency";
    case EdgeKind::kStreamOrder:
      return "GPU queue gap";
    case EdgeKind::kEventWait:
      return "event wait gap";
  }
  return "?";
}

// Walks the chain that decided `last`'s end back to `begin`; the host time from `last` to the
// iteration's `end` comes first, so the path covers the whole iteration.
void CriticalPath(const ExecutionGraph& g, const SimResult& sim, uint32_t last, int64_t begin,
                  int64_t end, size_t top, IterationReport* report) {
  std::map<std::string, int64_t> by_class, by_item;
  auto add = [&](const std::string& label, const std::string& item, int64_t a, int64_t b) {
    a = std::max(a, begin);
    if (b <= a) return;
    by_class[label] += b - a;
    by_item[item.empty() ? label : label + ": " + item] += b - a;
  };
  if (sim.ran(last)) add("host work after the last API call", "", sim.end_ns[last], end);
  uint32_t cur = last;
  bool from_start = false;  // Continue from cur's start (collective's last member).
  for (size_t guard = 0; cur != kNoNode && guard < g.nodes.size() + 1; ++guard) {
    const Node& n = g.nodes[cur];
    if (!sim.ran(cur) || sim.end_ns[cur] <= begin) break;
    if (!from_start) {
      const Cause cause = sim.end_cause[cur];
      const uint32_t other = sim.end_cause_node[cur];
      if (cause == Cause::kSyncTarget && other != kNoNode) {
        add("sync wake-up", "", sim.end_ns[other], sim.end_ns[cur]);
        cur = other;
        continue;
      }
      if (cause == Cause::kCollective && other != kNoNode) {
        add("collective", std::string(g.nodes[other].name), sim.start_ns[other], sim.end_ns[cur]);
        cur = other;
        from_start = true;
        continue;
      }
      add(NodeLabel(n), std::string(n.name), sim.start_ns[cur], sim.end_ns[cur]);
    }
    from_start = false;
    const uint32_t edge = sim.start_cause_edge[cur];
    if (edge == kNoNode) {
      add("host work before the first API call", "", begin, sim.start_ns[cur]);
      break;
    }
    const Edge& e = g.edges[edge];
    const int64_t ready = e.from_start() ? sim.start_ns[e.from] : sim.end_ns[e.from];
    add(GapLabel(e.kind), "", ready, sim.start_ns[cur]);
    if (e.from_start()) {
      // The launch: continue from the API call's start.
      cur = e.from;
      from_start = true;
      continue;
    }
    cur = e.from;
  }
  auto sorted = [](const std::map<std::string, int64_t>& m, size_t limit) {
    std::vector<CriticalItem> v;
    v.reserve(m.size());
    for (const auto& [what, ns] : m) v.push_back({what, ns});
    std::stable_sort(v.begin(), v.end(),
                     [](const CriticalItem& a, const CriticalItem& b) { return a.ns > b.ns; });
    if (v.size() > limit) v.resize(limit);
    return v;
  };
  report->critical_length_ns = 0;
  for (const auto& [what, ns] : by_class) report->critical_length_ns += ns;
  report->critical_by_class = sorted(by_class, SIZE_MAX);
  report->critical_top = sorted(by_item, top);
}

std::vector<NamedTime> TopBy(const ExecutionGraph& g, const SimResult& sim,
                             const std::vector<uint32_t>& nodes, WorkClass work, size_t top) {
  std::map<std::string_view, NamedTime> by_name;
  for (uint32_t node : nodes) {
    const Node& n = g.nodes[node];
    if (n.work != work) continue;
    NamedTime& t = by_name[n.name];
    t.name = std::string(n.name);
    t.measured_ns += n.duration_ns;
    if (sim.ran(node)) t.replayed_ns += sim.end_ns[node] - sim.start_ns[node];
    ++t.count;
  }
  std::vector<NamedTime> v;
  v.reserve(by_name.size());
  for (auto& [name, t] : by_name) v.push_back(std::move(t));
  std::stable_sort(v.begin(), v.end(), [](const NamedTime& a, const NamedTime& b) {
    return a.measured_ns > b.measured_ns;
  });
  if (v.size() > top) v.resize(top);
  return v;
}

}  // namespace

std::string KernelClass(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto has = [&](std::string_view s) { return lower.find(s) != std::string::npos; };
  if (has("nccl")) return "nccl";
  if (has("flash") || has("fmha") || has("attention") || has("attn")) return "attention";
  if (has("gemm") || has("matmul") || has("cutlass") || has("cublas") || has("xmma") ||
      has("wgmma")) {
    return "gemm";
  }
  if (has("conv")) return "convolution";
  if (has("norm")) return "normalization";
  if (has("softmax")) return "softmax";
  if (has("embedding")) return "embedding";
  if (has("reduce") || has("reduction")) return "reduction";
  if (has("elementwise") || has("vectorized") || has("unrolled")) return "elementwise";
  if (has("adam") || has("optimizer") || has("adagrad") || has("sgd")) return "optimizer";
  return "other";
}

std::vector<IterationReport> AnalyzeIterations(const Job& job, const ExecutionGraph& g,
                                               const SimResult& sim,
                                               const AnalysisOptions& options) {
  std::vector<IterationReport> out;
  for (uint32_t r = 0; r < job.ranks.size(); ++r) {
    const int64_t offset = g.rank_offset_ns[r];
    std::vector<Range> ranges = IterationRanges(job.ranks[r], offset, options);
    std::vector<uint32_t> host_nodes, gpu_nodes;
    for (const Processor& p : g.processors) {
      if (p.rank_index != r) continue;
      auto& list = p.gpu ? gpu_nodes : host_nodes;
      list.insert(list.end(), p.nodes.begin(), p.nodes.end());
    }
    if (ranges.empty()) {
      int64_t begin = INT64_MAX, end = INT64_MIN;
      for (uint32_t n : host_nodes) {
        begin = std::min(begin, g.nodes[n].start_ns);
        end = std::max(end, g.nodes[n].end_ns());
      }
      for (uint32_t n : gpu_nodes) {
        begin = std::min(begin, g.nodes[n].start_ns);
        end = std::max(end, g.nodes[n].end_ns());
      }
      if (begin < end) ranges.push_back({"whole trace", begin, end, 0});
    }
    const auto threads = ThreadsOf(g, r);
    for (const Range& range : ranges) {
      IterationReport it;
      it.rank = job.ranks[r].rank;
      it.name = range.name;
      it.measured_start_ns = range.start_ns;
      it.measured_end_ns = range.end_ns;
      // Boundary nodes: on the range's thread, else any host node of the rank.
      const std::vector<uint32_t>* candidates = &host_nodes;
      if (auto t = threads.find(range.thread_id); t != threads.end()) {
        candidates = &t->second->nodes;
      }
      uint32_t first = kNoNode, last = kNoNode;
      for (uint32_t n : *candidates) {
        const Node& x = g.nodes[n];
        if (x.start_ns < range.start_ns || x.end_ns() > range.end_ns || !sim.ran(n)) continue;
        if (first == kNoNode || x.start_ns < g.nodes[first].start_ns) first = n;
        if (last == kNoNode || x.end_ns() > g.nodes[last].end_ns()) last = n;
      }
      if (first == kNoNode) {
        it.replayed_start_ns = range.start_ns;
        it.replayed_end_ns = range.end_ns;
      } else {
        it.replayed_start_ns = sim.start_ns[first] - (g.nodes[first].start_ns - range.start_ns);
        it.replayed_end_ns = sim.end_ns[last] + (range.end_ns - g.nodes[last].end_ns());
      }
      std::vector<std::pair<int64_t, int64_t>> mc, mm, rc, rm, m_all, r_all;
      std::vector<uint32_t> in_iteration;
      for (uint32_t n : gpu_nodes) {
        const Node& x = g.nodes[n];
        const bool comm = x.work == WorkClass::kCommunication;
        (comm ? mm : mc).push_back({x.start_ns, x.end_ns()});
        m_all.push_back({x.start_ns, x.end_ns()});
        if (sim.ran(n)) {
          (comm ? rm : rc).push_back({sim.start_ns[n], sim.end_ns[n]});
          r_all.push_back({sim.start_ns[n], sim.end_ns[n]});
        }
        if (x.start_ns >= range.start_ns && x.start_ns < range.end_ns) in_iteration.push_back(n);
      }
      it.measured = Sweep(mc, mm, it.measured_start_ns, it.measured_end_ns);
      it.replayed = Sweep(rc, rm, it.replayed_start_ns, it.replayed_end_ns);
      it.measured_busy = BusyBins(m_all, it.measured_start_ns, it.measured_end_ns, options.bin_ns);
      it.replayed_busy = BusyBins(r_all, it.replayed_start_ns, it.replayed_end_ns, options.bin_ns);
      if (last != kNoNode)
        CriticalPath(g, sim, last, it.replayed_start_ns, it.replayed_end_ns, options.top, &it);
      it.top_kernels = TopBy(g, sim, in_iteration, WorkClass::kCompute, options.top);
      it.top_collectives = TopBy(g, sim, in_iteration, WorkClass::kCommunication, options.top);
      out.push_back(std::move(it));
    }
  }
  return out;
}

}  // namespace lumos::modeler
