// Design: the fast path of `lumos-model search` and of `estimate --model` (issue 25): one
// training step of a layout, added up from the cost models, no graph built. Per micro-batch on
// one GPU of a pipeline stage (ranks symmetric within a stage, so one stands for all):
//   GEMMs (row-major m = tokens): QKV (T, (h + 2 kv d)/tp, h), projection (T, h, h/tp), fc1
//   (T, f/tp, x2 gated, h), fc2 (T, h, f/tp); backward per GEMM the input gradient (T, k, n)
//   and the weight gradient (k, n, T); the GEMM model at `gemm_dtype`;
//   fused causal attention forward and backward (bf16) from the kernel model;
//   elementwise and norm kernels: twice the bytes the layer's activations take when stored
//   (models/memory: each written once and read once), x2 in backward, on the kernel model;
//   tensor parallel: per layer 2 all-reduces of T x h x 2 bytes in forward and 2 in backward,
//   or with sequence parallelism an all-gather and a reduce-scatter each, on NVLink, not
//   overlapped with the GEMMs;
//   recomputation: full adds the forward to the backward, selective the attention's;
//   first stage: the embedding (its bytes); last stage: the LM head GEMM (T, V/tp, h) with its
//   two backward GEMMs and the loss (4 passes over the fp32 logits).
// The step: pipeline = (m + (pp - 1) / vp) x (the slowest stage's forward + backward + the
// point-to-point sends of T x h x 2 bytes, /tp with sequence parallelism, x vp per
// micro-batch), over the network when the neighbours are on different nodes; then the
// data-parallel gradient reduction (all-reduce of the stage's gradients, grad_sync_bytes each;
// ZeRO 1-2 a reduce-scatter and an all-gather of the 2-byte weights; ZeRO 3 the reduce-scatter,
// the weights gathered before every micro-batch's forward and backward instead) less what the
// last micro-batch's backward hides (bucketed reduction overlapped with it) and the first
// forward hides (the weights' all-gather); then the Adam step over the GPU's shard (32 bytes a
// parameter). Memory per GPU from models/memory. Each of these is an assumption the result
// lists; the full simulation of a built graph is the slow path (not this file).
// Threading: pure functions over a const GptCosts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/memory/memory_model.h"
#include "modeler/plan/layout.h"
#include "modeler/plan/model_spec.h"
#include "modeler/synth/gpt_costs.h"

namespace lumos::modeler::plan {

struct PlanSetup {
  const models::GpuSpec* gpu = nullptr;
  models::NetworkSpec net;
  models::DType gemm_dtype = models::DType::kBf16;
  int64_t gpus_per_node = 8;
};

struct StepEstimate {
  Layout layout;
  double step_ns = 0;
  // Per micro-batch on the slowest stage.
  double forward_ns = 0, backward_ns = 0;
  double gemm_ns = 0, attention_ns = 0, elementwise_ns = 0, tp_comm_ns = 0, p2p_ns = 0;
  // Per step.
  double pipeline_ns = 0, bubble_ns = 0, dp_comm_ns = 0, dp_exposed_ns = 0, optimizer_ns = 0;
  double tokens_per_s_per_gpu = 0;
  models::MemoryEstimate memory;
};

StatusOr<StepEstimate> EstimateStep(const ModelSpec& spec, const Layout& layout,
                                    const GptCosts& costs, const PlanSetup& setup);

// What EstimateStep assumes, one line each (for reports).
const std::vector<std::string>& StepAssumptions();

}  // namespace lumos::modeler::plan
