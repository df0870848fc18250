// Design: what the analysis of one iteration of one rank holds, measured and replayed side by
// side (iteration_analysis.h computes it): its window, the breakdown and GPU busy series
// (breakdown.h), the critical path by class and its largest items, what bounds the rank
// (critical_path.h), the top kernels and collectives, GPU time by class and copies by direction
// (gpu_time.h). Every command that reports iterations (replay, estimate, summarize, diff,
// structure) reads these. Threading: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "modeler/graph/execution_graph.h"

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

// What bounds a rank's iteration (the verdict, modeler/replay/iteration_bound.h): the classes
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

}  // namespace lumos::modeler
