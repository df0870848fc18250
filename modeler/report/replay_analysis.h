// Design: what `lumos-model replay` reports, computed from the graph, the measurement and one
// simulation. Everything here is per iteration and rank, measured and replayed side by side:
//   iterations  (iteration_ranges.h: FindIterations, shared with `lumos-model structure`)
//               from host ranges (ProfilerStep#N, category STEP, by default) or NVTX/host
//               ranges whose name matches --iteration REGEX; with none, from the repeating
//               pattern of the rank's kernel stream (iteration_detection.h: from the launch
//               of one kernel that starts each repetition to the next, as a range on that
//               thread; kernels with no launch: between their GPU starts, replayed between
//               their simulated starts); with no repetition either, the whole trace of each rank is
//               one iteration (said in the report). A range's replayed boundary is the boundary's
//               host node (first API call on the range's thread inside it, last one ending inside
//               it) moved to its simulated time, plus the measured host time between the boundary
//               and that node.
//   breakdown   the paper's: exposed compute (GPU computes, no collective runs), overlapped
//               (both), exposed communication (only collectives), other (no GPU work); copies
//               and memsets count as compute. Sweep over the rank's GPU op intervals.
//   GPU busy    fraction of each 1 ms bin with any GPU op of the rank running.
//   critical    what decided the iteration's end, as a chain of intervals that tiles it: a walk
//   path        back through the replay from the replayed end (the last host node's end, after
//               "host work after the last API call"; or a GPU boundary's start) to the replayed
//               start. The walk stands at a node's end or start, at walk time t (<= that
//               event's time), and each step attributes [x, t) to one class, where x is when
//               what decided that event began, clamped to [start, t]; then t = x:
//                 a node's end: a sync that ended with its target: "sync wake-up" from the
//                   target's end, on to the target's end; a collective: "collective" from its
//                   last member's start (maybe on another rank), on to that start; a copy call
//                   (cudaMemcpy*) that outlasted a copy it launched (pageable memory makes
//                   it synchronous): "sync wake-up" from the copy's end, on to it; otherwise
//                   the node's own time (kernel class, memcpy/memset, host API calls), on to
//                   its start;
//                 a node's start: its binding in-edge in the replay: "host gap" (thread
//                   order), "launch latency" (launch; beyond the rank's typical launch latency
//                   the op waited in the queue: "GPU queue gap"), "GPU queue gap" (stream
//                   order), "event wait gap", from the source's end (a launch: its start), on
//                   to it; a root (no in-edge): the rest, "host work before the first API
//                   call" (a GPU op with no launch: "before a GPU op with no launch").
//               So no interval is counted twice, the length is the replayed iteration time and
//               the classes add up to it, in ns. A host call that blocked is the GPU chain it
//               waited for plus its wake-up, never both. A dependency that ended after the walk
//               time (negative slack: clock skew, a sync's wrong inferred target) adds nothing
//               above t; the walk follows it below. Each step goes to an earlier simulation
//               event, so the walk ends (a step bound guards it: "not attributed"). An
//               iteration with neither a host node nor a GPU boundary is one interval, "no API
//               call in the iteration".
//   top lists   kernels and collectives by total GPU time in the iteration.
//   GPU time    by class, over the same GPU ops as the top lists (those starting in the
//   by class    iteration), each op's whole duration: kernels by KernelClass (modeler/models'
//               ClassifyKernel by name), collectives by op ("communication AllReduce"),
//               copies and memsets; count, measured and replayed ns.
//   copies      copies by direction (HtoD, DtoH, DtoD, HtoH, PtoP, not recorded) and memsets:
//               count, bytes, measured and replayed ns (the report divides for bandwidth).
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/sim/simulator.h"

namespace lumos::modeler {

struct Breakdown {
  int64_t exposed_compute_ns = 0;
  int64_t overlapped_ns = 0;
  int64_t exposed_comm_ns = 0;
  int64_t other_ns = 0;
  int64_t total_ns() const {
    return exposed_compute_ns + overlapped_ns + exposed_comm_ns + other_ns;
  }
};

struct CriticalItem {
  std::string what;  // "kernel gemm", "collective ALLREDUCE", "host gap", ...
  int64_t ns = 0;
};

struct NamedTime {
  std::string name;
  int64_t measured_ns = 0;
  int64_t replayed_ns = 0;
  uint64_t count = 0;
};

// The GPU ops of one class in an iteration. `name` is static text: a KernelClassName ("gemm"),
// "communication AllReduce" (by the group's op; "communication (op not recorded)"), "memcpy",
// "memset".
struct ClassTime {
  const char* name = "";
  uint64_t count = 0;
  int64_t measured_ns = 0, replayed_ns = 0;
};

// CopyTime's directions, in the order reports list them: schema::CopyKind's values (0: not
// recorded), then memsets.
inline constexpr int kCopyDirectionCount = 7;
inline constexpr const char* kCopyDirections[kCopyDirectionCount] = {
    "memcpy (direction not recorded)", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "memset"};

// Copies of one direction, or memsets, in an iteration. `direction` is one of kCopyDirections.
struct CopyTime {
  const char* direction = "";
  uint64_t count = 0, bytes = 0;
  int64_t measured_ns = 0, replayed_ns = 0;
};

// What bounds a rank's iteration (the verdict, modeler/report/iteration_bound.h): the classes
// of the rank's own critical path, a walk like the critical path's that stays on the rank: at a
// collective whose last member to start is on another rank, the rank's own member waited from
// its start to that member's start for that rank ("peers"), and the walk goes on from its own
// member's start. Each interval of the iteration counts once, so the kinds add up to it.
//   host          framework work between API calls, non-launch API calls, host work before
//                 the first and after the last call, sync wake-ups
//   launch        launch and copy API calls (cudaLaunchKernel, cudaMemcpyAsync, ...) and the
//                 launch latency up to the rank's typical one
//   compute       kernels, copies and memsets
//   communication a collective's transfer (from its last member's start)
//   peers         waiting for another rank to arrive at a collective (`waited_for`)
//   unexplained   waits the trace does not explain: GPU queue gaps, launch latency beyond the
//                 typical one, residuals on event waits, GPU ops with no launch
enum class BoundKind : uint8_t { kHost, kLaunch, kCompute, kCommunication, kPeers, kUnexplained };
inline constexpr int kBoundKindCount = 6;
const char* BoundKindName(BoundKind kind);  // "host", "launch", ..., "unexplained".

struct IterationBound {
  int64_t ns[kBoundKindCount] = {};
  // kPeers by the rank waited for (global rank), largest first, ties by rank.
  std::vector<std::pair<int32_t, int64_t>> waited_for;
  int64_t total_ns() const {
    int64_t sum = 0;
    for (int64_t v : ns) sum += v;
    return sum;
  }
};

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

struct IterationReport {
  int32_t rank = 0;
  // "ProfilerStep#10", "iteration 3 (detected, period 245 kernels)" or "whole trace".
  std::string name;
  int64_t measured_start_ns = 0, measured_end_ns = 0;
  int64_t replayed_start_ns = 0, replayed_end_ns = 0;
  Breakdown measured, replayed;
  std::vector<double> measured_busy, replayed_busy;  // Per 1 ms bin, 0..1.
  std::vector<CriticalItem> critical_by_class;       // Sorted by time, largest first.
  std::vector<CriticalItem> critical_top;            // Largest single items (by name).
  int64_t critical_length_ns = 0;  // = replayed_ns() = the sum of critical_by_class.
  // Where the critical path's walk started (the last host node, or a GPU boundary anchor):
  // CriticalSegments walks it again. kNoNode without a simulation.
  uint32_t path_last = kNoNode, path_end_anchor = kNoNode;
  IterationBound bound;  // The rank's own critical path by kind (not with summary_only).
  std::vector<NamedTime> top_kernels, top_collectives;
  std::vector<ClassTime> gpu_classes;  // Classes with ops, by measured time, largest first.
  std::vector<CopyTime> copies;        // Directions with ops, in kCopyDirections' order.

  int64_t measured_ns() const { return measured_end_ns - measured_start_ns; }
  int64_t replayed_ns() const { return replayed_end_ns - replayed_start_ns; }
  double error_percent() const {
    return measured_ns() > 0 ? 100.0 * static_cast<double>(replayed_ns() - measured_ns()) /
                                   static_cast<double>(measured_ns())
                             : 0.0;
  }
};

// The critical path of `it` (as AnalyzeIterations analysed it on `graph` simulated as `sim`) as
// intervals, latest first: walked again, one iteration at a time, so a 512-rank timeline does
// not keep every path in memory.
std::vector<CriticalSegment> CriticalSegments(const ExecutionGraph& graph, const SimResult& sim,
                                              const IterationReport& it);

struct AnalysisOptions {
  std::optional<std::regex> iteration;  // Range names that mark iterations.
  std::string iteration_pattern;        // Its text, for the report.
  int64_t bin_ns = 1'000'000;
  size_t top = 10;
  // Times and breakdowns only: no busy series, critical path or top lists (an estimate sweep's
  // lines need none of them).
  bool summary_only = false;
};

// Sets `options`' iteration pattern from --iteration's text (ECMAScript); an invalid regex is an
// error naming it. Every command with --iteration reads it this way.
Status SetIterationPattern(const std::string& pattern, AnalysisOptions* options);

// Whether a host range (step: category STEP) or NVTX range named `name` may mark an iteration
// under these options; the loader keeps only those.
bool MayMarkIteration(std::string_view name, bool step, const AnalysisOptions& options);

std::vector<IterationReport> AnalyzeIterations(const Job& job, const ExecutionGraph& graph,
                                               const SimResult& sim,
                                               const AnalysisOptions& options);

// The measured side alone, without a simulation (`lumos-model summarize`): per rank and
// iteration its name, measured start and end and measured breakdown, found and computed as
// AnalyzeIterations does; the replayed side, busy series, critical path and top lists stay
// empty (zero).
std::vector<IterationReport> AnalyzeMeasured(const Job& job, const ExecutionGraph& graph,
                                             const AnalysisOptions& options);

// The same iterations analysed on a rewritten graph (modeler/whatif; estimate): ranges and
// boundary calls chosen on the measured graph and its replay, each boundary node mapped into
// `rewritten` by `map(node, last)` (its first copy, or with last its last; kNoNode: none), and
// the replayed side (replayed_* times, breakdown, busy, critical path, top kernels and
// collectives) computed on `rewritten` as simulated by `sim`; the measured side as measured.
std::vector<IterationReport> AnalyzeRewritten(const Job& job, const ExecutionGraph& measured,
                                              const SimResult& measured_sim,
                                              const ExecutionGraph& rewritten, const SimResult& sim,
                                              const AnalysisOptions& options,
                                              const std::function<uint32_t(uint32_t, bool)>& map);

// The iterations of one rank of a graph: its rank index and the indexes into an iteration
// list of its iterations (IterationsPerRank).
struct IterationsOfRank {
  uint32_t rank_index = 0;
  std::vector<size_t> iterations;
};
// Each rank of `graph` that has iterations, in global rank order (as reports list ranks); an
// iteration of a rank not in the graph is left out.
std::vector<IterationsOfRank> IterationsPerRank(const ExecutionGraph& graph,
                                                const std::vector<IterationReport>& iterations);

// The kernel class used by the critical path: modeler/models' ClassifyKernel by name ("gemm",
// "attention", "elementwise", "norm", ...), the classes the cost models and estimate use.
std::string KernelClass(std::string_view name);

}  // namespace lumos::modeler
