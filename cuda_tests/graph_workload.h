// The shape of graph_workload.cu, shared with the checker (graph_test.cc).
#pragma once

#include "cuda_tests/workload_exit.h"

namespace lumos::cuda_tests {

inline constexpr int kGraphKernels = 3;   // Kernels captured into the graph.
inline constexpr int kGraphLaunches = 5;  // cudaGraphLaunch calls.
// NVTX: one push/pop per launch, one push/pop around the capture, one start/end around all
// launches, one mark after the last.
inline constexpr char kLaunchRange[] = "graph-launch";
inline constexpr char kCaptureRange[] = "graph-capture";
inline constexpr char kReplaysRange[] = "graph-replays";
inline constexpr char kDoneMark[] = "graph-done";

}  // namespace lumos::cuda_tests
