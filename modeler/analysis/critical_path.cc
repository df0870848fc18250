// The critical path walk; see critical_path.h.
#include "modeler/analysis/critical_path.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "modeler/models/kernels/kernel_class.h"
#include "schema/enums.h"

namespace lumos::modeler {
namespace {

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
    case EdgeKind::kThreadHandoff:
      return "thread handoff";
  }
  return "?";
}

// A copy call (cudaMemcpy*, cuMemcpy*) that was still running when a copy it launched ended on
// the GPU waited for it (a copy to or from pageable memory is synchronous whatever the call's
// name): that copy, the latest one ending inside the call; kNoNode when there is none.
uint32_t CopyWaitedFor(const ExecutionGraph& g, const SimResult& sim, uint32_t call) {
  const Node& n = g.nodes[call];
  if (n.gpu() ||
      (n.api_kind != schema::ApiKind::kMemcpy && n.api_kind != schema::ApiKind::kMemcpyAsync)) {
    return kNoNode;
  }
  uint32_t copy = kNoNode;
  for (uint32_t e = g.out_begin[call]; e < g.out_begin[call + 1]; ++e) {
    const Edge& edge = g.edges[e];
    if (edge.kind != EdgeKind::kLaunch || !sim.ran(edge.to)) continue;
    const int64_t copy_end = sim.end_ns[edge.to];
    if (copy_end <= sim.start_ns[call] || copy_end > sim.end_ns[call]) continue;
    if (copy == kNoNode || copy_end > sim.end_ns[copy]) copy = edge.to;
  }
  return copy;
}

// What a node's own time counts as in a rank's bound (iteration_report.h, BoundKind).
BoundKind OwnTimeKind(const Node& n) {
  switch (n.work) {
    case WorkClass::kHost:
      switch (n.api_kind) {
        case schema::ApiKind::kLaunchKernel:
        case schema::ApiKind::kLaunchGraph:
        case schema::ApiKind::kMemcpy:
        case schema::ApiKind::kMemcpyAsync:
        case schema::ApiKind::kMemset:
        case schema::ApiKind::kMemsetAsync:
          return BoundKind::kLaunch;
        default:
          return BoundKind::kHost;
      }
    case WorkClass::kCommunication:
      return BoundKind::kCommunication;
    case WorkClass::kCompute:
    case WorkClass::kMemory:
      return BoundKind::kCompute;
  }
  return BoundKind::kUnexplained;
}

BoundKind GapKind(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kThreadOrder:
    case EdgeKind::kThreadHandoff:
      return BoundKind::kHost;
    case EdgeKind::kLaunch:
      return BoundKind::kLaunch;
    case EdgeKind::kStreamOrder:
    case EdgeKind::kEventWait:
      return BoundKind::kUnexplained;
  }
  return BoundKind::kUnexplained;
}

}  // namespace

const std::string& CriticalPathLabels::Of(const Node& n) {
  if (n.work != WorkClass::kCompute) return Fixed(n.work);
  auto [it, added] = kernel_.try_emplace(n.name.data(), std::string());
  if (added) it->second = NodeLabel(n);
  return it->second;
}

const std::string& CriticalPathLabels::Fixed(WorkClass work) {
  std::string& label = fixed_[static_cast<int>(work)];
  if (label.empty()) {
    Node n;
    n.work = work;
    label = NodeLabel(n);
  }
  return label;
}

void WalkCriticalPath(const ExecutionGraph& g, const SimResult& sim, uint32_t last,
                      uint32_t end_anchor, int64_t begin, int64_t end, size_t top,
                      CriticalPathLabels* labels, const CriticalWalkMode& mode,
                      IterationReport* report) {
  // Labels (short) are keyed by text; items are node names interned in the job's pool, so
  // equal names share a pointer and are keyed by it (no compares of long kernel names).
  struct Sum {
    std::string_view label, item;
    int64_t ns = 0;
  };
  struct PairHash {
    size_t operator()(const std::pair<std::string_view, const char*>& p) const {
      return std::hash<std::string_view>()(p.first) * 31 + std::hash<const char*>()(p.second);
    }
  };
  const bool bound_walk = mode.own_rank != kNoNode;
  std::unordered_map<std::string_view, Sum> by_class;
  std::unordered_map<std::pair<std::string_view, const char*>, Sum, PairHash> by_item;
  std::unordered_map<uint32_t, int64_t> waited_for;  // Rank index -> ns (bound walk).
  IterationBound bound;
  int64_t t = std::max(end, begin);  // The walk time: [t, end) is attributed.
  uint32_t cur = end_anchor != kNoNode ? end_anchor : last;
  // Attributes [from, t), clamped to [begin, t), to (label, item) and kind, and moves the walk
  // to it. `peer`: the rank index waited for (kPeers).
  auto take = [&](std::string_view label, std::string_view item, BoundKind kind, int64_t from,
                  uint32_t peer = kNoNode, bool own_time = false) {
    const int64_t x = std::clamp(from, begin, t);
    if (x < t) {
      if (bound_walk) {
        bound.ns[static_cast<int>(kind)] += t - x;
        if (peer != kNoNode) waited_for[peer] += t - x;
      } else {
        Sum& c = by_class[label];
        c.label = label;
        c.ns += t - x;
        Sum& i = by_item[{label, item.data()}];
        i.label = label;
        i.item = item;
        i.ns += t - x;
      }
      if (mode.segments != nullptr) {
        // Every label but a node's own time is a static literal (CriticalSegment).
        mode.segments->push_back({x, t, cur, own_time ? nullptr : label.data()});
      }
    }
    t = x;
  };
  // Where the walk is: a node's end, or its start (at_start). Its time is >= t (greater only
  // where the measurement has negative slack).
  bool at_start = end_anchor != kNoNode;
  if (cur == kNoNode) {
    take("no API call in the iteration", "", BoundKind::kUnexplained, begin);
  } else if (!at_start && sim.ran(cur)) {
    // (A last call that never ran has no end: the walk below says "not attributed".)
    take("host work after the last API call", "", BoundKind::kHost, sim.end_ns[cur]);
  }
  // Each step moves to an earlier event of the simulation, so the walk ends; the bound only
  // guards against a broken result.
  const size_t max_steps = 2 * g.nodes.size() + 2;
  for (size_t step = 0; t > begin; ++step) {
    if (step > max_steps || !sim.ran(cur)) {
      take("not attributed", "", BoundKind::kUnexplained, begin);
      break;
    }
    const Node& n = g.nodes[cur];
    if (!at_start) {
      const Cause cause = sim.end_cause[cur];
      const uint32_t other = sim.end_cause_node[cur];
      if (cause == Cause::kSyncTarget && other != kNoNode) {
        // A sync: only the wake-up after its target ended is the call's; before that the
        // walk follows the GPU op it waited for.
        take("sync wake-up", "", BoundKind::kHost, sim.end_ns[other]);
        cur = other;
        continue;
      }
      if (cause == Cause::kCollective && other != kNoNode) {
        // All members end together: from the last one to start (maybe on another rank).
        take("collective", g.nodes[other].name, BoundKind::kCommunication, sim.start_ns[other]);
        const uint32_t peer = g.nodes[other].rank_index;
        if (bound_walk && peer != mode.own_rank && n.rank_index == mode.own_rank) {
          // The rank's own member waited from its start for the peer's to start.
          take("waiting for a peer", "", BoundKind::kPeers, sim.start_ns[cur], peer);
        } else {
          cur = other;
        }
        at_start = true;
        continue;
      }
      if (const uint32_t copy = CopyWaitedFor(g, sim, cur); copy != kNoNode) {
        take("sync wake-up", "", BoundKind::kHost, sim.end_ns[copy]);
        cur = copy;
        continue;
      }
      take(labels->Of(n), n.name, OwnTimeKind(n), sim.start_ns[cur], kNoNode, /*own_time=*/true);
      at_start = true;
      continue;
    }
    const uint32_t edge = sim.start_cause_edge[cur];
    if (edge == kNoNode) {  // A root: it started at its measured time.
      if (n.gpu()) {
        take("before a GPU op with no launch", "", BoundKind::kUnexplained, begin);
      } else {
        take("host work before the first API call", "", BoundKind::kHost, begin);
      }
      break;
    }
    const Edge& e = g.edges[edge];
    const int64_t ready = e.from_start() ? sim.start_ns[e.from] : sim.end_ns[e.from];
    if (e.kind == EdgeKind::kLaunch) {
      // Beyond the rank's typical launch latency a GPU op waited in the queue for something
      // the trace does not show (as DependenciesOnlyScenario takes it).
      take("GPU queue gap", "", BoundKind::kUnexplained, ready + g.typical_launch_ns[n.rank_index]);
    }
    take(GapLabel(e.kind), "", GapKind(e.kind), ready);
    cur = e.from;
    at_start = e.from_start();  // A launch: on from the API call's start.
  }
  if (bound_walk) {
    for (const auto& [peer, ns] : waited_for) bound.waited_for.emplace_back(g.ranks[peer], ns);
    std::sort(bound.waited_for.begin(), bound.waited_for.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    report->bound = std::move(bound);
    return;
  }
  // Largest first; ties by text, so the order does not depend on the hash tables.
  auto sorted = [](std::vector<Sum> v, size_t limit) {
    auto order = [](const Sum& a, const Sum& b) {
      if (a.ns != b.ns) return a.ns > b.ns;
      return a.label != b.label ? a.label < b.label : a.item < b.item;
    };
    const size_t keep = std::min(limit, v.size());
    std::partial_sort(v.begin(), v.begin() + static_cast<ptrdiff_t>(keep), v.end(), order);
    std::vector<CriticalItem> out;
    out.reserve(keep);
    for (size_t i = 0; i < keep; ++i) {
      std::string what(v[i].label);
      if (!v[i].item.empty()) what += ": " + std::string(v[i].item);
      out.push_back({std::move(what), v[i].ns});
    }
    return out;
  };
  std::vector<Sum> classes, items;
  classes.reserve(by_class.size());
  items.reserve(by_item.size());
  report->critical_length_ns = 0;
  for (const auto& [key, sum] : by_class) {
    report->critical_length_ns += sum.ns;
    classes.push_back(sum);
  }
  for (const auto& [key, sum] : by_item) items.push_back(sum);
  report->critical_by_class = sorted(std::move(classes), SIZE_MAX);
  report->critical_top = sorted(std::move(items), top);
}

const char* BoundKindName(BoundKind kind) {
  static constexpr const char* kNames[kBoundKindCount] = {"host",          "launch", "compute",
                                                          "communication", "peers",  "unexplained"};
  const auto i = static_cast<size_t>(kind);
  return i < kBoundKindCount ? kNames[i] : "?";
}

std::vector<CriticalSegment> CriticalSegments(const ExecutionGraph& graph, const SimResult& sim,
                                              const IterationReport& it) {
  std::vector<CriticalSegment> segments;
  CriticalWalkMode mode;
  mode.segments = &segments;
  CriticalPathLabels labels;
  IterationReport scratch;  // The walk's sums, not needed here.
  WalkCriticalPath(graph, sim, it.path_last, it.path_end_anchor, it.replayed_start_ns,
                   it.replayed_end_ns, 0, &labels, mode, &scratch);
  return segments;
}

std::string CriticalSegmentName(const ExecutionGraph& graph, const CriticalSegment& segment) {
  if (segment.node >= graph.nodes.size()) return segment.label != nullptr ? segment.label : "?";
  const Node& n = graph.nodes[segment.node];
  if (segment.label == nullptr) return NodeLabel(n) + ": " + std::string(n.name);
  if (std::string_view(segment.label) == "collective") return "collective: " + std::string(n.name);
  return segment.label;
}

std::string KernelClass(std::string_view name) {
  return models::KernelClassName(models::ClassifyKernel(name));
}

}  // namespace lumos::modeler
