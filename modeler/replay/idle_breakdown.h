// Design: the replay report's idle time, measured and replayed side by side, per iteration window
// (IterationReport's measured window with the graph's measured times; its replayed window with
// the simulation's times), summed per rank, per (rank, stream), per (rank, thread) and for the
// job. Computed from the ExecutionGraph, the SimResult and the iterations only (replay drops the
// raw events once a rank's graph part is built).
//   GPU stream  idle = the stream runs no op: each gap [end of the ops so far, start of the next
//               op) (the ops' union, so overlapping ops leave no gap), clamped to the window;
//               the leading gap from the window start and the trailing one to the window end
//               count too, and the op after a gap may lie outside the window. A gap [a, b) whose
//               next op is N splits in time order:
//                 host wait        [a, min(b, L)) where L = the start of N's launch API call
//                                  (Node::launch; a GPU op without one has no host wait):
//                                  the GPU waited for the host to launch N;
//                 dependency wait  then up to D = the latest end of the sources of N's
//                                  event-wait in-edges: launched, but blocked by an event
//                                  recorded on another stream;
//                 other            the rest: launch latency, queueing the trace does not show.
//               A trailing gap with no next op at all is other.
//   GPU (rank)  idle = no op on any stream of the rank (the union of all its streams); each idle
//               interval classed as above by the op that starts at its end (the earliest start
//               on any of the rank's streams; ties: the first node in graph order).
//   host        per thread, inside the window: time in sync calls (Node::sync != kNoNode: the
//               host blocked until GPU work was done), time in other API calls, and time between
//               two of its calls (framework, Python work; before the thread's first call and
//               after its last one nothing counts). Calls are clipped to the window; calls on a
//               thread do not overlap (nested ones are one node). Blocked share = sync / (sync +
//               API + between); busy share = the rest.
// Sums over windows: the window lengths add up too (window_ns), so shares over many iterations
// are shares of their total time.
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/sim/simulator.h"

namespace lumos::modeler {

struct ReplayReport;
namespace io {
class JsonWriter;
}

// Idle time of a stream or a GPU, in ns, split in time order.
struct IdleSplit {
  int64_t host_wait_ns = 0;
  int64_t dependency_wait_ns = 0;
  int64_t other_ns = 0;
  int64_t idle_ns() const { return host_wait_ns + dependency_wait_ns + other_ns; }
};

// A host thread's (or the sum over threads') time, in ns.
struct HostSplit {
  int64_t sync_ns = 0;     // In sync calls.
  int64_t api_ns = 0;      // In other API calls.
  int64_t between_ns = 0;  // Between two calls of the thread.
  int64_t total_ns() const { return sync_ns + api_ns + between_ns; }
  double blocked_percent() const {
    return total_ns() > 0 ? 100.0 * static_cast<double>(sync_ns) / static_cast<double>(total_ns())
                          : 0.0;
  }
};

struct StreamIdle {
  uint64_t stream = 0;  // Stream id (Processor::id).
  IdleSplit measured, replayed;
};

struct ThreadHost {
  uint64_t thread = 0;  // Thread id (Processor::id).
  HostSplit measured, replayed;
};

// One iteration's figures, or their sum over a rank's iterations or the job's.
struct IdleTimes {
  int64_t measured_window_ns = 0, replayed_window_ns = 0;
  IdleSplit measured_gpu, replayed_gpu;    // Per GPU (rank): no op on any stream.
  HostSplit measured_host, replayed_host;  // Sums over the rank's threads.
  std::vector<StreamIdle> streams;         // By stream id; empty in the job's sum.
  std::vector<ThreadHost> threads;         // By thread id; empty in the job's sum.
};

struct RankIdle {
  int32_t rank = 0;
  IdleTimes times;
};

struct IdleReport {
  std::vector<IdleTimes> iterations;  // Parallel to the iterations analysed.
  std::vector<RankIdle> ranks;        // In rank order.
  IdleTimes job;
};

IdleReport AnalyzeIdle(const ExecutionGraph& graph, const SimResult& sim,
                       const std::vector<IterationReport>& iterations);

// The text report's section (job line and the ranks with the most measured GPU idle);
// `over` says what the sums are over ("40 iterations of 8 ranks").
void WriteIdleText(const ReplayReport& report, const std::string& over, std::FILE* out);
// The JSON report's "idle" member: job, per rank with streams and threads.
void WriteIdleJson(const ReplayReport& report, io::JsonWriter* w);
// Iteration `index`'s "idle" member (GPU and host splits); nothing when not analysed.
void WriteIterationIdleJson(const ReplayReport& report, size_t index, io::JsonWriter* w);

}  // namespace lumos::modeler
