// Design: the GPU work of one rank of a Lumos trace (modeler/graph/job.h), each kernel, copy
// and memset with its KernelKey (kernel_class.h, kernel_model.h): kernels by their name and the
// framework op around their launch (the innermost CPU_OP host range on the launching API call's
// thread: traces imported from the PyTorch profiler have them; agent traces have none yet),
// copies by their direction and host memory kind, with their bytes. This is the trace-facing
// part of the non-GEMM kernel model: estimation asks it which class each measured kernel is
// and scales it (KernelModel::Scale); the graph's nodes carry the same records.
// Threading: pure functions over a RankTrace (its names view the Job's pool).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "modeler/graph/job.h"
#include "modeler/models/kernels/kernel_model.h"

namespace lumos::modeler::models {

struct TraceGpuWork {
  std::string_view name;  // The kernel's name; empty for copies and memsets.
  KernelKey key;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  uint64_t bytes = 0;   // Copies and memsets.
  std::string_view op;  // The op around its launch; empty: none recorded.
};

// Kernels first (in the trace's order), then copies, then memsets.
std::vector<TraceGpuWork> ClassifyRank(const RankTrace& rank);

// GPU time by class (ns), over `work`.
std::array<int64_t, kKernelClassCount> TimeByClass(const std::vector<TraceGpuWork>& work);

}  // namespace lumos::modeler::models
