// Design: a multi-tensor optimizer's launches when the parameters change (issue 24 item 5).
// PyTorch's foreach and fused optimizers (AdamW's default on CUDA) run each step as a few
// ops over every parameter, each launched as `multi_tensor_apply_kernel`s of at most a fixed
// number of blocks (chunks of the tensors; 320 on the shared H200 traces): the base loop's 8
// ops take 3 launches each (grids 320, 320, 162), width x2's 10 (4 x the parameters) and
// layers x2's 6. So the launches, and the host time of launching them, follow the parameters,
// not only the kernels' durations. The rule, per run of consecutive optimizer-phase calls on a
// host thread that each launch one multi-tensor kernel of the same name (one op):
//   blocks = the sum of the run's grids; per launch at most the largest grid of any such launch;
//   launches after = max(1, ceil(blocks x P / largest grid)), P = parameters after / before;
//   more launches: one after the run's first copied (its gap is a launch's own, the first's
//   the whole op's framework work), a full one if any; fewer: the last ones removed;
//   the run's kernels carry the op's work: each scaled by P x blocks / blocks after, so the
//   op's GPU time still follows the parameters.
// Per-tensor optimizers (a launch per parameter tensor: launches follow the tensor count) and
// the framework's own per-tensor work between the ops are not modeled: said once.
// Threading: pure function.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/structure/job_structure.h"
#include "modeler/whatif/step_repetition.h"

namespace lumos::modeler::estimate {

struct OptimizerLaunches {
  std::vector<whatif::StepCopies> steps;  // Launches copied or removed (measured graph ids).
  // Measured kernel node -> the factor on its work (bytes and FLOPs) in place of the
  // optimizer's parameter factor.
  std::unordered_map<uint32_t, double> kernel_work;
  uint64_t runs = 0;  // Multi-tensor ops found (all iterations and ranks).
  uint64_t launches_before = 0, launches_after = 0;
};

// `parameters`: parameters per GPU after over before (> 0). The graph must have node sources.
OptimizerLaunches PlanOptimizerLaunches(const Job& job, const ExecutionGraph& graph,
                                        const structure::JobStructure& structure,
                                        double parameters);

}  // namespace lumos::modeler::estimate
