// Design: the critical path of an iteration, what decided its end, as a chain of intervals that
// tiles it: a walk back through one replay from the replayed end (the last host node's end, after
// "host work after the last API call"; or a GPU boundary's start) to the replayed start. The walk
// stands at a node's end or start, at walk time t (<= that event's time), and each step
// attributes [x, t) to one class, where x is when what decided that event began, clamped to
// [start, t]; then t = x:
//   a node's end: a sync that ended with its target: "sync wake-up" from the target's end, on to
//     the target's end; a collective: "collective" from its last member's start (maybe on
//     another rank), on to that start; a copy call (cudaMemcpy*) that outlasted a copy it
//     launched (pageable memory makes it synchronous): "sync wake-up" from the copy's end, on to
//     it; otherwise the node's own time (kernel class, memcpy/memset, host API calls), on to its
//     start;
//   a node's start: its binding in-edge in the replay: "host gap" (thread order), "launch
//     latency" (launch; beyond the rank's typical launch latency the op waited in the queue:
//     "GPU queue gap"), "GPU queue gap" (stream order), "event wait gap", from the source's end
//     (a launch: its start), on to it; a root (no in-edge): the rest, "host work before the first
//     API call" (a GPU op with no launch: "before a GPU op with no launch").
// So no interval is counted twice, the length is the replayed iteration time and the classes add
// up to it, in ns. A host call that blocked is the GPU chain it waited for plus its wake-up, never
// both. A dependency that ended after the walk time (negative slack: clock skew, a sync's wrong
// inferred target) adds nothing above t; the walk follows it below. Each step goes to an earlier
// simulation event, so the walk ends (a step bound guards it: "not attributed"). An iteration
// with neither a host node nor a GPU boundary is one interval, "no API call in the iteration".
// The same walk kept on one rank gives what bounds that rank's iteration (IterationBound,
// iteration_report.h): at a collective whose last member to start is on another rank, the rank's
// own member waited for that rank ("peers"), and the walk goes on from its own member's start.
// Threading: pure functions; CriticalPathLabels is one walker's cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "modeler/analysis/iteration_report.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/sim/simulator.h"

namespace lumos::modeler {

// One interval of the critical path (CriticalSegments), for the timeline's critical path track:
// [begin_ns, end_ns) on the replayed timeline, the node the walk was at (kNoNode: none; its rank is
// where the path is) and what the interval is: a static label ("host gap", "collective", ...), or
// null for the node's own time (its class and name: CriticalSegmentName).
struct CriticalSegment {
  int64_t begin_ns = 0, end_ns = 0;
  uint32_t node = kNoNode;
  const char* label = nullptr;
};

// A segment's name as the critical path's items read: "kernel gemm: <kernel name>",
// "collective: <name>", "host gap", ...
std::string CriticalSegmentName(const ExecutionGraph& graph, const CriticalSegment& segment);

// Labels of the critical path, computed once per distinct kernel name (a name's class needs a
// lower-cased copy of it; names are long and repeat across iterations).
class CriticalPathLabels {
 public:
  const std::string& Of(const Node& n);

 private:
  const std::string& Fixed(WorkClass work);
  std::unordered_map<const char*, std::string> kernel_;
  std::string fixed_[4];
};

// Which walk WalkCriticalPath takes and where its result goes.
struct CriticalWalkMode {
  // kNoNode: the critical path (report->critical_*), across ranks. A rank index: that rank's
  // bound (report->bound): at a collective whose last member is on another rank, the wait for
  // it is "peers" and the walk stays on this rank.
  uint32_t own_rank = kNoNode;
  std::vector<CriticalSegment>* segments = nullptr;  // The intervals, when wanted.
};

// The walk of the Design above: from the iteration's end (the end of `last`, the last host node,
// or the start of `end_anchor`, a GPU boundary) back to `begin`, each step taking the interval
// from where the walk is down to where what it is at began, clamped to [begin, walk time], so
// the intervals tile [begin, end) exactly. Fills report->critical_by_class, critical_top (the
// `top` largest items) and critical_length_ns, or with mode.own_rank report->bound.
void WalkCriticalPath(const ExecutionGraph& g, const SimResult& sim, uint32_t last,
                      uint32_t end_anchor, int64_t begin, int64_t end, size_t top,
                      CriticalPathLabels* labels, const CriticalWalkMode& mode,
                      IterationReport* report);

// The critical path of `it` (as AnalyzeIterations analysed it on `graph` simulated as `sim`) as
// intervals, latest first: walked again, one iteration at a time, so a 512-rank timeline does
// not keep every path in memory.
std::vector<CriticalSegment> CriticalSegments(const ExecutionGraph& graph, const SimResult& sim,
                                              const IterationReport& it);

// The kernel class used by the critical path: modeler/models' ClassifyKernel by name ("gemm",
// "attention", "elementwise", "norm", ...), the classes the cost models and estimate use.
std::string KernelClass(std::string_view name);

}  // namespace lumos::modeler
