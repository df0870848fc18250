// The iterations of a job analysed; see iteration_analysis.h.
#include "modeler/analysis/iteration_analysis.h"

#include <algorithm>
#include <map>

#include "modeler/analysis/breakdown.h"
#include "modeler/analysis/critical_path.h"
#include "modeler/analysis/gpu_time.h"
#include "modeler/analysis/iteration_ranges.h"
#include "modeler/models/kernels/kernel_class.h"

namespace lumos::modeler {
namespace {

// Host nodes of rank r, per thread id.
std::map<uint64_t, const Processor*> ThreadsOf(const ExecutionGraph& g, uint32_t r) {
  std::map<uint64_t, const Processor*> threads;
  for (const Processor& p : g.processors) {
    if (!p.gpu && p.rank_index == r) threads[p.id] = &p;
  }
  return threads;
}

// A rank's GPU ops as intervals sorted by start, with the longest duration, so the ops that
// overlap a window are found by binary search (the ops starting in [begin - longest, end)).
struct IntervalIndex {
  struct Interval {
    int64_t start, end;
    uint32_t node;
  };
  std::vector<Interval> intervals;
  int64_t longest = 0;

  void Add(int64_t start, int64_t end, uint32_t node) {
    intervals.push_back({start, end, node});
    longest = std::max(longest, end - start);
  }
  void Sort() {
    std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
      return a.start != b.start ? a.start < b.start : a.node < b.node;
    });
  }
  template <typename Visit>
  void ForOverlapping(int64_t begin, int64_t end, const Visit& visit) const {
    auto it = std::lower_bound(intervals.begin(), intervals.end(), begin - longest,
                               [](const Interval& x, int64_t t) { return x.start < t; });
    for (; it != intervals.end() && it->start < end; ++it) {
      if (it->end > begin) visit(*it);
    }
  }
};

// The iterations of the measured graph `g` (ranges, boundary calls: chosen by the measured
// times and `base`, the simulation of g), analysed on `rg` simulated as `sim`: for replay rg is
// g and `map` empty; for a rewritten graph `map` takes a boundary node of g to its instance in
// rg (first or last copy), and the replayed side (breakdown, busy, critical path, top lists)
// is rg's over the mapped window.
// Without a simulation (`base` and `sim` null: AnalyzeMeasured) only the measured side.
std::vector<IterationReport> Analyze(const Job& job, const ExecutionGraph& g, const SimResult* base,
                                     const ExecutionGraph& rg, const SimResult* sim,
                                     const AnalysisOptions& options,
                                     const std::function<uint32_t(uint32_t, bool)>& map,
                                     std::string* choice) {
  std::vector<IterationReport> out;
  JobIterations iterations = FindJobIterations(job, g, options);
  if (choice != nullptr) *choice = std::move(iterations.choice);
  CriticalPathLabels labels;
  models::KernelClassCache kernel_classes;
  auto to = [&map](uint32_t node, bool last) {
    return !map || node == kNoNode ? node : map(node, last);
  };
  for (uint32_t r = 0; r < job.ranks.size(); ++r) {
    const std::vector<IterationRange>& ranges = iterations.ranks[r].ranges;
    std::vector<uint32_t> host_nodes;
    IntervalIndex measured, replayed;
    for (const Processor& p : g.processors) {
      if (p.rank_index != r) continue;
      if (!p.gpu) {
        // Boundary calls are chosen among them: only with a simulation.
        if (sim != nullptr) host_nodes.insert(host_nodes.end(), p.nodes.begin(), p.nodes.end());
        continue;
      }
      for (uint32_t n : p.nodes) measured.Add(g.nodes[n].start_ns, g.nodes[n].end_ns(), n);
    }
    for (const Processor& p : rg.processors) {
      if (sim == nullptr || p.rank_index != r || !p.gpu) continue;
      for (uint32_t n : p.nodes) {
        if (sim->ran(n)) replayed.Add(sim->start_ns[n], sim->end_ns[n], n);
      }
    }
    measured.Sort();
    replayed.Sort();
    std::sort(host_nodes.begin(), host_nodes.end(), [&g](uint32_t a, uint32_t b) {
      return g.nodes[a].start_ns != g.nodes[b].start_ns ? g.nodes[a].start_ns < g.nodes[b].start_ns
                                                        : a < b;
    });
    const auto threads = ThreadsOf(g, r);
    for (const IterationRange& range : ranges) {
      IterationReport it;
      it.rank = job.ranks[r].rank;
      it.name = range.name;
      it.measured_start_ns = range.start_ns;
      it.measured_end_ns = range.end_ns;
      if (sim == nullptr) {
        std::vector<std::pair<int64_t, int64_t>> compute, comm;
        measured.ForOverlapping(range.start_ns, range.end_ns, [&](const auto& x) {
          (g.nodes[x.node].work == WorkClass::kCommunication ? comm : compute)
              .push_back({x.start, x.end});
        });
        it.measured = SweepBreakdown(compute, comm, it.measured_start_ns, it.measured_end_ns);
        out.push_back(std::move(it));
        continue;
      }
      // Boundary nodes: on the range's thread (its nodes are in start order), else any host
      // node of the rank.
      const std::vector<uint32_t>* candidates = &host_nodes;
      if (auto t = threads.find(range.thread_id); t != threads.end()) {
        candidates = &t->second->nodes;
      }
      uint32_t first = kNoNode, last = kNoNode;
      auto from = std::lower_bound(candidates->begin(), candidates->end(), range.start_ns,
                                   [&g](uint32_t n, int64_t t) { return g.nodes[n].start_ns < t; });
      for (; from != candidates->end() && g.nodes[*from].start_ns < range.end_ns; ++from) {
        const uint32_t n = *from;
        const Node& x = g.nodes[n];
        if (x.end_ns() > range.end_ns || !base->ran(n)) continue;
        if (first == kNoNode) first = n;
        if (last == kNoNode || x.end_ns() > g.nodes[last].end_ns()) last = n;
      }
      const uint32_t rfirst = to(first, false), rlast = to(last, true);
      const uint32_t anchor_begin = to(range.anchor_begin, false);
      const uint32_t anchor_end = to(range.anchor_end, false);
      if (first == kNoNode || rfirst == kNoNode || rlast == kNoNode || !sim->ran(rfirst) ||
          !sim->ran(rlast)) {
        it.replayed_start_ns = range.start_ns;
        it.replayed_end_ns = range.end_ns;
      } else {
        it.replayed_start_ns = sim->start_ns[rfirst] - (g.nodes[first].start_ns - range.start_ns);
        it.replayed_end_ns = sim->end_ns[rlast] + (range.end_ns - g.nodes[last].end_ns());
      }
      const bool gpu_bounds = anchor_begin != kNoNode && anchor_end != kNoNode &&
                              sim->ran(anchor_begin) && sim->ran(anchor_end);
      if (gpu_bounds) {
        it.replayed_start_ns = sim->start_ns[anchor_begin];
        it.replayed_end_ns = sim->start_ns[anchor_end];
      }
      std::vector<std::pair<int64_t, int64_t>> mc, mm, rc, rm, m_all, r_all;
      std::vector<uint32_t> in_iteration;
      measured.ForOverlapping(range.start_ns, range.end_ns, [&](const auto& x) {
        const bool comm = g.nodes[x.node].work == WorkClass::kCommunication;
        (comm ? mm : mc).push_back({x.start, x.end});
        m_all.push_back({x.start, x.end});
        if (!map && x.start >= range.start_ns) in_iteration.push_back(x.node);
      });
      replayed.ForOverlapping(it.replayed_start_ns, it.replayed_end_ns, [&](const auto& x) {
        const bool comm = rg.nodes[x.node].work == WorkClass::kCommunication;
        (comm ? rm : rc).push_back({x.start, x.end});
        r_all.push_back({x.start, x.end});
        if (map && x.start >= it.replayed_start_ns) in_iteration.push_back(x.node);
      });
      it.measured = SweepBreakdown(mc, mm, it.measured_start_ns, it.measured_end_ns);
      it.replayed = SweepBreakdown(rc, rm, it.replayed_start_ns, it.replayed_end_ns);
      if (options.summary_only) {
        out.push_back(std::move(it));
        continue;
      }
      it.measured_busy = BusyBins(m_all, it.measured_start_ns, it.measured_end_ns, options.bin_ns);
      it.replayed_busy = BusyBins(r_all, it.replayed_start_ns, it.replayed_end_ns, options.bin_ns);
      it.path_last = rlast;
      it.path_end_anchor = gpu_bounds ? anchor_end : kNoNode;
      WalkCriticalPath(rg, *sim, rlast, it.path_end_anchor, it.replayed_start_ns,
                       it.replayed_end_ns, options.top, &labels, CriticalWalkMode{}, &it);
      CriticalWalkMode own;
      own.own_rank = r;
      WalkCriticalPath(rg, *sim, rlast, it.path_end_anchor, it.replayed_start_ns,
                       it.replayed_end_ns, options.top, &labels, own, &it);
      AddGpuTime(rg, *sim, in_iteration, options.top, &kernel_classes, &it);
      out.push_back(std::move(it));
    }
  }
  return out;
}

}  // namespace

std::vector<IterationReport> AnalyzeIterations(const Job& job, const ExecutionGraph& g,
                                               const SimResult& sim, const AnalysisOptions& options,
                                               std::string* choice) {
  return Analyze(job, g, &sim, g, &sim, options, nullptr, choice);
}

std::vector<IterationReport> AnalyzeMeasured(const Job& job, const ExecutionGraph& graph,
                                             const AnalysisOptions& options, std::string* choice) {
  return Analyze(job, graph, nullptr, graph, nullptr, options, nullptr, choice);
}

std::vector<IterationReport> AnalyzeRewritten(const Job& job, const ExecutionGraph& measured,
                                              const SimResult& measured_sim,
                                              const ExecutionGraph& rewritten, const SimResult& sim,
                                              const AnalysisOptions& options,
                                              const std::function<uint32_t(uint32_t, bool)>& map,
                                              std::string* choice) {
  return Analyze(job, measured, &measured_sim, rewritten, &sim, options, map, choice);
}

std::vector<IterationsOfRank> IterationsPerRank(const ExecutionGraph& graph,
                                                const std::vector<IterationReport>& iterations) {
  std::map<int32_t, uint32_t> index_of;  // Global rank -> rank index, in rank order.
  for (uint32_t r = 0; r < graph.ranks.size(); ++r) index_of.emplace(graph.ranks[r], r);
  std::vector<std::vector<size_t>> of_rank(graph.ranks.size());
  for (size_t i = 0; i < iterations.size(); ++i) {
    if (auto it = index_of.find(iterations[i].rank); it != index_of.end()) {
      of_rank[it->second].push_back(i);
    }
  }
  std::vector<IterationsOfRank> out;
  for (const auto& [rank, r] : index_of) {
    if (!of_rank[r].empty()) out.push_back({r, std::move(of_rank[r])});
  }
  return out;
}

}  // namespace lumos::modeler
