// Design: the replay report's launch statistics, measured and replayed side by side, per
// iteration window (IterationReport's measured window with the graph's measured times; its
// replayed window with the simulation's), per rank and for the job. From the ExecutionGraph,
// the SimResult and the iterations only. "Launched" GPU ops are those with a launch API call
// (Node::launch: the outermost call on its thread, so a driver call under a runtime call is the
// runtime call); a side counts only nodes that ran in it.
//   launch delay   of each launched GPU op starting in the window: op start - its launch call's
//                  START (the graph's launch edge, start -> start; never negative in a replay,
//                  and a blocking call such as a synchronous cudaMemcpy does not make it
//                  negative). Count, mean (floor), nearest-rank p50, p90, p99, and max, in ns.
//   short kernels  launched kernels starting in the window whose GPU duration is shorter than
//                  their launch call's duration (the launch overhead outlasts the work): count,
//                  share of the launched kernels, their GPU time, and the names with the most of
//                  them (count, then GPU time, then name).
//   queue depth    per rank at time t: GPU ops whose launch call has started (call start <= t)
//                  and which have not finished (t < op end); every launched op of the rank
//                  counts, whichever stream and whichever window; an op ending before its call
//                  starts (clock skew) counts nowhere. Per window: the max and the time-weighted
//                  mean of this step function over [start, end), and the max per bin_ns bin
//                  from the window start (the last bin may be shorter), for the JSON. The
//                  timeline's "launch queue" track (modeler/export/counter_tracks.h) has the
//                  same definition over the whole trace, from the graph's nodes directly.
//   full queue     launch calls (API calls that launched a GPU op) starting in the window while
//                  the rank's depth, not counting the call's own ops, was at or above
//                  queue_limit (default 1024, CUDA's pending-launch limit): their count and
//                  summed duration (the host time spent launching into a full queue).
// Sums: per rank and job, delays and short kernels over all their windows' ops (percentiles of
// the pooled delays); queue max the max, mean weighted by window length; full-queue calls and ns
// added up.
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

struct LaunchOptions {
  int64_t queue_limit = 1024;  // CUDA's default pending launch count.
  int64_t bin_ns = 1'000'000;
  size_t top = 5;  // Short-kernel names kept.
};

struct DelayStats {
  uint64_t count = 0;
  int64_t sum_ns = 0, mean_ns = 0, p50_ns = 0, p90_ns = 0, p99_ns = 0, max_ns = 0;
};

struct ShortKernelName {
  std::string name;
  uint64_t count = 0;
  int64_t gpu_ns = 0;
};

struct ShortKernels {
  uint64_t kernels = 0;  // Launched kernels looked at.
  uint64_t count = 0;    // Of them, shorter than their launch call.
  int64_t gpu_ns = 0;    // Their GPU time.
  std::vector<ShortKernelName> top;
  double share_percent() const {
    return kernels > 0 ? 100.0 * static_cast<double>(count) / static_cast<double>(kernels) : 0.0;
  }
};

struct QueueStats {
  int64_t max = 0;
  int64_t depth_ns = 0;   // The depth's integral over the windows (depth x ns).
  int64_t window_ns = 0;  // Their length.
  uint64_t full_calls = 0;
  int64_t full_ns = 0;
  double mean() const {
    return window_ns > 0 ? static_cast<double>(depth_ns) / static_cast<double>(window_ns) : 0.0;
  }
};

struct LaunchSide {
  DelayStats delay;
  ShortKernels short_kernels;
  QueueStats queue;
};

struct IterationLaunch {
  QueueStats measured_queue, replayed_queue;
  std::vector<uint32_t> measured_depth, replayed_depth;  // Max per bin.
};

struct RankLaunch {
  int32_t rank = 0;
  LaunchSide measured, replayed;
};

struct LaunchReport {
  int64_t queue_limit = 0;
  int64_t bin_ns = 0;
  std::vector<IterationLaunch> iterations;  // Parallel to the iterations analysed.
  std::vector<RankLaunch> ranks;            // In rank order.
  LaunchSide job_measured, job_replayed;
};

LaunchReport AnalyzeLaunches(const ExecutionGraph& graph, const SimResult& sim,
                             const std::vector<IterationReport>& iterations,
                             const LaunchOptions& options = {});

// Nearest-rank percentiles (and the rest) of `delays_ns`, which it reorders.
DelayStats Distribution(std::vector<int64_t>* delays_ns);

// The text report's section (job line and the ranks with the largest p99 delay).
void WriteLaunchText(const ReplayReport& report, const std::string& over, std::FILE* out);
// The JSON report's "launch" member: the limit, job and per rank.
void WriteLaunchJson(const ReplayReport& report, io::JsonWriter* w);
// Iteration `index`'s "launch_queue" member (queue figures and the per-bin series); nothing
// when not analysed.
void WriteIterationLaunchJson(const ReplayReport& report, size_t index, io::JsonWriter* w);

}  // namespace lumos::modeler
