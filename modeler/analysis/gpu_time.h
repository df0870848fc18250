// Design: an iteration's GPU work by name and by class, over the GPU ops starting in it (each
// op's whole duration), measured and replayed: the top kernels and collectives by total GPU time;
// GPU time by class (kernels by KernelClass, modeler/models/kernels' ClassifyKernel by name;
// collectives by op, "communication AllReduce"; copies and memsets): count, measured and
// replayed ns; copies by direction (HtoD, DtoH, DtoD, HtoH, PtoP, not recorded) and memsets:
// count, bytes, measured and replayed ns (reports divide for bandwidth). This is the kernel
// classing every report shares. Threading: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "modeler/analysis/iteration_report.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/models/kernels/kernel_class.h"
#include "modeler/sim/simulator.h"

namespace lumos::modeler {

// The GPU ops `in_iteration` of `g` (those starting in the iteration), as `sim` ran them:
// report->top_kernels and top_collectives (the `top` largest by measured time), gpu_classes
// (largest first) and copies (in kCopyDirections' order). `classes` caches kernel classes by
// name across iterations.
void AddGpuTime(const ExecutionGraph& g, const SimResult& sim,
                const std::vector<uint32_t>& in_iteration, size_t top,
                models::KernelClassCache* classes, IterationReport* report);

}  // namespace lumos::modeler
