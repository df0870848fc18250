#include "modeler/report/replay_analysis.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>

#include "modeler/models/kernel_class.h"
#include "modeler/report/iteration_ranges.h"
#include "schema/enums.h"

namespace lumos::modeler {
namespace {

bool IsStepName(std::string_view name) { return name.rfind("ProfilerStep#", 0) == 0; }

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

// Labels of the critical path, computed once per distinct kernel name (a name's class needs a
// lower-cased copy of it; names are long and repeat across iterations).
class Labels {
 public:
  const std::string& Of(const Node& n) {
    if (n.work != WorkClass::kCompute) return Fixed(n.work);
    auto [it, added] = kernel_.try_emplace(n.name.data(), std::string());
    if (added) it->second = NodeLabel(n);
    return it->second;
  }

 private:
  const std::string& Fixed(WorkClass work) {
    std::string& label = fixed_[static_cast<int>(work)];
    if (label.empty()) {
      Node n;
      n.work = work;
      label = NodeLabel(n);
    }
    return label;
  }
  std::unordered_map<const char*, std::string> kernel_;
  std::string fixed_[4];
};

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

// What a node's own time counts as in a rank's bound (replay_analysis.h, BoundKind).
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
      return BoundKind::kHost;
    case EdgeKind::kLaunch:
      return BoundKind::kLaunch;
    case EdgeKind::kStreamOrder:
    case EdgeKind::kEventWait:
      return BoundKind::kUnexplained;
  }
  return BoundKind::kUnexplained;
}

// Which walk CriticalPath takes and where its result goes.
struct WalkMode {
  // kNoNode: the critical path (report->critical_*), across ranks. A rank index: that rank's
  // bound (report->bound): at a collective whose last member is on another rank, the wait for
  // it is "peers" and the walk stays on this rank.
  uint32_t own_rank = kNoNode;
  std::vector<CriticalSegment>* segments = nullptr;  // The intervals, when wanted.
};

// The walk of replay_analysis.h's Design: from the iteration's end (the end of `last`, the
// last host node, or the start of `end_anchor`, a GPU boundary) back to `begin`, each step
// taking the interval from where the walk is down to where what it is at began, clamped to
// [begin, walk time], so the intervals tile [begin, end) exactly.
void CriticalPath(const ExecutionGraph& g, const SimResult& sim, uint32_t last, uint32_t end_anchor,
                  int64_t begin, int64_t end, size_t top, Labels* labels, const WalkMode& mode,
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

// The GPU ops of one name in an iteration. Names are interned in the job's pool, so equal
// names share a pointer: keying by pointer avoids comparing long, prefix-sharing kernel names
// (memcmp was a hot spot, perf).
struct NameSum {
  std::string_view name;
  int64_t measured_ns = 0, replayed_ns = 0;
  uint64_t count = 0;
};

// The `top` names of `work` by measured time; `each`, when given, sees every name's sum.
std::vector<NamedTime> TopBy(const ExecutionGraph& g, const SimResult& sim,
                             const std::vector<uint32_t>& nodes, WorkClass work, size_t top,
                             const std::function<void(const NameSum&)>& each = nullptr) {
  std::unordered_map<const char*, NameSum> by_name;
  for (uint32_t node : nodes) {
    const Node& n = g.nodes[node];
    if (n.work != work) continue;
    NameSum& t = by_name[n.name.data()];
    t.name = n.name;
    t.measured_ns += n.duration_ns;
    if (sim.ran(node)) t.replayed_ns += sim.end_ns[node] - sim.start_ns[node];
    ++t.count;
  }
  std::vector<NameSum> sums;
  sums.reserve(by_name.size());
  for (const auto& [key, t] : by_name) {
    if (each) each(t);
    sums.push_back(t);
  }
  // Largest first; ties by name, so the order does not depend on the hash table.
  auto order = [](const NameSum& a, const NameSum& b) {
    return a.measured_ns != b.measured_ns ? a.measured_ns > b.measured_ns : a.name < b.name;
  };
  const size_t keep = std::min(top, sums.size());
  std::partial_sort(sums.begin(), sums.begin() + static_cast<ptrdiff_t>(keep), sums.end(), order);
  std::vector<NamedTime> v;
  v.reserve(keep);
  for (size_t i = 0; i < keep; ++i) {
    v.push_back(
        {std::string(sums[i].name), sums[i].measured_ns, sums[i].replayed_ns, sums[i].count});
  }
  return v;
}

constexpr int kCollectiveOps = 12;  // schema::CollectiveOp's values, 0..11.
#define LUMOS_INTERNAL_OP_NAME(name, number) "communication " #name,
constexpr const char* kCommunicationNames[kCollectiveOps] = {
    LUMOS_ENUM_COLLECTIVE_OP(LUMOS_INTERNAL_OP_NAME)};
#undef LUMOS_INTERNAL_OP_NAME
constexpr int kClassSlots = models::kKernelClassCount + kCollectiveOps;

constexpr int kCopySlots = kCopyDirectionCount;

// GPU time by class and copies by direction of an iteration's GPU ops, in fixed slots: a
// kernel's class, a collective's op, a copy's direction. Kernels come summed by name (TopBy),
// so each distinct name is classed once per iteration, not each kernel.
class ClassSlots {
 public:
  void AddKernels(const NameSum& s, models::KernelClassCache* classes) {
    Add(static_cast<int>(classes->Get(s.name)), s.count, s.measured_ns, s.replayed_ns);
  }
  // The collectives, copies and memsets among `nodes` (kernels: AddKernels).
  void AddOthers(const ExecutionGraph& g, const SimResult& sim,
                 const std::vector<uint32_t>& nodes) {
    for (uint32_t node : nodes) {
      const Node& n = g.nodes[node];
      if (n.work == WorkClass::kCompute) continue;
      const int64_t replayed = sim.ran(node) ? sim.end_ns[node] - sim.start_ns[node] : 0;
      if (n.work == WorkClass::kCommunication) {
        int op = 0;
        if (n.collective < g.collectives.size()) {
          op = static_cast<int>(g.collectives[n.collective].op);
          if (op >= kCollectiveOps) op = 0;
        }
        Add(models::kKernelClassCount + op, 1, n.duration_ns, replayed);
        continue;
      }
      const bool memset = n.kind == NodeKind::kMemset;
      Add(static_cast<int>(memset ? models::KernelClass::kMemset : models::KernelClass::kMemcpy), 1,
          n.duration_ns, replayed);
      int direction = memset ? kCopySlots - 1 : 0;
      uint64_t bytes = 0;
      if (n.copy < g.copies.size()) {  // A rewritten graph may not carry them.
        bytes = g.copies[n.copy].bytes;
        if (!memset) {
          direction = static_cast<int>(g.copies[n.copy].kind);
          if (direction >= kCopySlots - 1) direction = 0;
        }
      }
      CopyTime& d = by_direction_[direction];
      ++d.count;
      d.bytes += bytes;
      d.measured_ns += n.duration_ns;
      d.replayed_ns += replayed;
    }
  }
  void Emit(IterationReport* report) {
    report->gpu_classes.clear();
    for (int i = 0; i < kClassSlots; ++i) {
      if (by_class_[i].count == 0) continue;
      by_class_[i].name = i < models::kKernelClassCount
                              ? models::KernelClassName(static_cast<models::KernelClass>(i))
                              : kCommunicationNames[i - models::kKernelClassCount];
      if (i == models::kKernelClassCount) by_class_[i].name = "communication (op not recorded)";
      report->gpu_classes.push_back(by_class_[i]);
    }
    // Largest first; ties by name (slots are fixed, so this is deterministic).
    std::stable_sort(report->gpu_classes.begin(), report->gpu_classes.end(),
                     [](const ClassTime& a, const ClassTime& b) {
                       return a.measured_ns != b.measured_ns
                                  ? a.measured_ns > b.measured_ns
                                  : std::string_view(a.name) < std::string_view(b.name);
                     });
    report->copies.clear();
    for (int i = 0; i < kCopySlots; ++i) {
      if (by_direction_[i].count == 0) continue;
      by_direction_[i].direction = kCopyDirections[i];
      report->copies.push_back(by_direction_[i]);
    }
  }

 private:
  void Add(int slot, uint64_t count, int64_t measured_ns, int64_t replayed_ns) {
    ClassTime& c = by_class_[slot];
    c.count += count;
    c.measured_ns += measured_ns;
    c.replayed_ns += replayed_ns;
  }
  ClassTime by_class_[kClassSlots];
  CopyTime by_direction_[kCopySlots];
};

}  // namespace

bool MayMarkIteration(std::string_view name, bool step, const AnalysisOptions& options) {
  if (options.iteration) return std::regex_search(name.begin(), name.end(), *options.iteration);
  return step || IsStepName(name);
}

Status SetIterationPattern(const std::string& pattern, AnalysisOptions* options) {
  try {
    options->iteration = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Status::Error("--iteration '" + pattern + "': " + e.what());
  }
  options->iteration_pattern = pattern;
  return Status::Ok();
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
  WalkMode mode;
  mode.segments = &segments;
  Labels labels;
  IterationReport scratch;  // The walk's sums, not needed here.
  CriticalPath(graph, sim, it.path_last, it.path_end_anchor, it.replayed_start_ns,
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

std::string KernelClass(std::string_view name) {
  return models::KernelClassName(models::ClassifyKernel(name));
}

namespace {

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

}  // namespace

namespace {

// The iterations of the measured graph `g` (ranges, boundary calls: chosen by the measured
// times and `base`, the simulation of g), analysed on `rg` simulated as `sim`: for replay rg is
// g and `map` empty; for a rewritten graph `map` takes a boundary node of g to its instance in
// rg (first or last copy), and the replayed side (breakdown, busy, critical path, top lists)
// is rg's over the mapped window.
// Without a simulation (`base` and `sim` null: AnalyzeMeasured) only the measured side.
std::vector<IterationReport> Analyze(const Job& job, const ExecutionGraph& g, const SimResult* base,
                                     const ExecutionGraph& rg, const SimResult* sim,
                                     const AnalysisOptions& options,
                                     const std::function<uint32_t(uint32_t, bool)>& map) {
  std::vector<IterationReport> out;
  Labels labels;
  models::KernelClassCache kernel_classes;
  auto to = [&map](uint32_t node, bool last) {
    return !map || node == kNoNode ? node : map(node, last);
  };
  for (uint32_t r = 0; r < job.ranks.size(); ++r) {
    const std::vector<IterationRange> ranges = FindIterations(job, g, r, options).ranges;
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
        it.measured = Sweep(compute, comm, it.measured_start_ns, it.measured_end_ns);
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
      it.measured = Sweep(mc, mm, it.measured_start_ns, it.measured_end_ns);
      it.replayed = Sweep(rc, rm, it.replayed_start_ns, it.replayed_end_ns);
      if (options.summary_only) {
        out.push_back(std::move(it));
        continue;
      }
      it.measured_busy = BusyBins(m_all, it.measured_start_ns, it.measured_end_ns, options.bin_ns);
      it.replayed_busy = BusyBins(r_all, it.replayed_start_ns, it.replayed_end_ns, options.bin_ns);
      it.path_last = rlast;
      it.path_end_anchor = gpu_bounds ? anchor_end : kNoNode;
      CriticalPath(rg, *sim, rlast, it.path_end_anchor, it.replayed_start_ns, it.replayed_end_ns,
                   options.top, &labels, WalkMode{}, &it);
      WalkMode own;
      own.own_rank = r;
      CriticalPath(rg, *sim, rlast, it.path_end_anchor, it.replayed_start_ns, it.replayed_end_ns,
                   options.top, &labels, own, &it);
      ClassSlots slots;
      it.top_kernels = TopBy(rg, *sim, in_iteration, WorkClass::kCompute, options.top,
                             [&](const NameSum& s) { slots.AddKernels(s, &kernel_classes); });
      it.top_collectives = TopBy(rg, *sim, in_iteration, WorkClass::kCommunication, options.top);
      slots.AddOthers(rg, *sim, in_iteration);
      slots.Emit(&it);
      out.push_back(std::move(it));
    }
  }
  return out;
}

}  // namespace

std::vector<IterationReport> AnalyzeIterations(const Job& job, const ExecutionGraph& g,
                                               const SimResult& sim,
                                               const AnalysisOptions& options) {
  return Analyze(job, g, &sim, g, &sim, options, nullptr);
}

std::vector<IterationReport> AnalyzeMeasured(const Job& job, const ExecutionGraph& graph,
                                             const AnalysisOptions& options) {
  return Analyze(job, graph, nullptr, graph, nullptr, options, nullptr);
}

std::vector<IterationReport> AnalyzeRewritten(const Job& job, const ExecutionGraph& measured,
                                              const SimResult& measured_sim,
                                              const ExecutionGraph& rewritten, const SimResult& sim,
                                              const AnalysisOptions& options,
                                              const std::function<uint32_t(uint32_t, bool)>& map) {
  return Analyze(job, measured, &measured_sim, rewritten, &sim, options, map);
}

}  // namespace lumos::modeler
