// Design: the fast path of `lumos-model search` and of `estimate --model` (issue 25): one
// training step of a layout, added up from the cost models, no graph built. One GPU stands for
// its pipeline stage (ranks symmetric within it); its ops per layer, micro-batch and pass, and
// the first and last stages' extras, are pass_work.h's (the slow path, pipeline_graph.h, lays
// out the same ops).
// The step: pipeline = (m + (pp - 1) / vp) x (the slowest stage's forward + backward + the
// point-to-point sends of T x h x 2 bytes, /tp with sequence parallelism, x vp per
// micro-batch), over the network when the neighbours are on different nodes; then the
// data-parallel gradient reduction, one collective a gradient bucket (pass_work.h's
// ChunkGradientBuckets: all-reduces of the stage's gradients, grad_sync_bytes each; ZeRO 1-2 a
// reduce-scatter and an all-gather of the weights; ZeRO 3 the reduce-scatter, the weights
// gathered before every micro-batch's forward and backward instead) less what the backward
// hides (chunk c's buckets behind the c x pp chunk passes after its last backward, all but the
// last bucket, which fills as the backward ends) and the forwards hide (all the weights'
// all-gathers but the first bucket's), in the slow path's order (step_model.cc's
// StageDataParallel); then, with tied embeddings
// and pp > 1, the word embedding's gradient all-reduced between the end stages; then the Adam step
// over the GPU's shard (32 bytes a parameter). Memory per GPU from models/memory. Each of these is
// an assumption the result lists (StepAssumptions). Threading: pure functions over a const
// GptCosts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/memory/memory_model.h"
#include "modeler/plan/layout.h"
#include "modeler/plan/model_spec.h"
#include "modeler/plan/pass_work.h"
#include "modeler/plan/pipeline_graph.h"
#include "modeler/synth/gpt_costs.h"

namespace lumos::modeler::plan {

struct StepEstimate {
  Layout layout;
  double step_ns = 0;
  // Per micro-batch on the slowest stage.
  double forward_ns = 0, backward_ns = 0;
  double gemm_ns = 0, attention_ns = 0, elementwise_ns = 0, tp_comm_ns = 0, p2p_ns = 0;
  // Per step.
  double pipeline_ns = 0, bubble_ns = 0, dp_comm_ns = 0, dp_exposed_ns = 0, optimizer_ns = 0;
  double host_ns = 0;  // PlanSetup::host_step_ns, in step_ns.
  // The tied embedding's gradient all-reduced between the end stages (LayoutWork), in step_ns.
  double embedding_grad_ns = 0;
  // What the data-parallel collectives that hide behind compute (the reduction, ZeRO's gathers)
  // cost it (PlanSetup::overlap_slowdown), in the step.
  double overlap_cost_ns = 0;
  double tokens_per_s_per_gpu = 0;
  models::MemoryEstimate memory;
  // The slow path's answer (pipeline_graph.h), when the layout was simulated.
  std::optional<SimulatedStep> simulated;
  // The step to rank and report: the simulation's when there is one.
  double best_step_ns() const { return simulated ? simulated->step_ns : step_ns; }
};

StatusOr<StepEstimate> EstimateStep(const ModelSpec& spec, const Layout& layout,
                                    const GptCosts& costs, const PlanSetup& setup);

// What EstimateStep assumes, one line each (for reports).
const std::vector<std::string>& StepAssumptions();

}  // namespace lumos::modeler::plan
