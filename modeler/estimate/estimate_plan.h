// Design: what one estimated configuration changes, decided before anything is simulated: the
// measured setup (structure recovery, --base) against the one asked for (--set, one --sweep
// combination), checked as a whole, and turned into the rewrites of modeler/whatif:
//   layers=N          each forward and backward phase's layers repeated or removed so the model
//                     has N (per pipeline stage N / pp): every layer gets N / L copies and the
//                     remainder goes to layers spread evenly, never the first or last; fewer
//                     layers remove layers spread evenly, keeping the first and last;
//   micro_batches=M   micro-batch 0 (its forward and backward) repeated, or the first ones
//                     removed: the last keeps the gradient reductions that overlap it;
//   hidden, ffn, heads, seq, mbs, vocab
//                     new work for the layers' GEMMs (by dimension value: tokens mbs x seq,
//                     3h/tp, ffn/tp, 2 ffn/tp, h/tp, h, ffn, vocab/tp), attention (batch,
//                     heads, seq, head size), other kernels by the activations (tokens x h),
//                     tensor-parallel collectives by tokens x h, gradient collectives and the
//                     optimizer by the parameters per GPU;
//   dp=D (world)      data-parallel communicators of D ranks, placed on the target GPU's NVLink
//                     domains (tp ranks of a replica share a domain); local work unchanged;
//   gpu, net, net_gbps, net_us
//                     every kernel and collective carried to that GPU and network;
//   host=F            the host's own work (API calls, the gaps between them and the
//                     hand-offs between threads, sync overheads) x F, after the rewrites.
// A key whose measured value the trace does not show (and --base does not give) is an error
// naming it; so is changing cp or ep (tp, pp, vp and sequence parallelism go to
// repartition.h before a plan is made), a setup
// CheckSetup refuses, and a GPU the specs cannot run. Each is one line; the command exits 2.
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/memory/memory_model.h"
#include "modeler/structure/job_structure.h"
#include "modeler/whatif/recost.h"
#include "modeler/whatif/settings.h"
#include "modeler/whatif/step_repetition.h"

namespace lumos::modeler::estimate {

struct PlanInputs {
  const structure::JobStructure* structure = nullptr;
  const models::SpecTable* specs = nullptr;
  const models::GpuSpec* source_gpu = nullptr;  // The trace's.
  models::NetworkSpec source_net;               // Assumed for the trace (default ib400).
};

struct Plan {
  whatif::SettingList settings;       // As asked (--set plus a sweep combination).
  whatif::SetupValues before, after;  // Unknown values are 0.
  bool transformer = false;  // The model setup is known (vocab may not be): MFU, new sizes.
  const models::GpuSpec* gpu = nullptr;
  models::NetworkSpec net;
  // Layers: the steps on the measured graph (empty when the count stays).
  std::vector<whatif::StepCopies> layer_steps;
  // Micro-batches: per iteration and rank, the segments to repeat (copies) or remove (0), by
  // key; applied after the layers (their nodes mapped through that rewrite).
  struct MicroBatchStep {
    uint32_t iteration = 0;
    uint32_t micro_batch = 0;
    uint32_t copies = 1;
  };
  std::vector<MicroBatchStep> micro_batch_steps;
  whatif::WorkChange layer_work, other_work, optimizer_work;
  // Data-parallel communicators' new rank and node counts (dp=), by comm id.
  std::unordered_map<uint64_t, whatif::CostSetup::GroupSize> group_sizes;
  double gradient_bytes = 1;  // Parameters per GPU after / before (gradient collectives).
  int zero = 0;
  models::Recompute recompute = models::Recompute::kNone;
  double host_time = 1;  // --set host=F: host API calls, gaps and sync overheads x F.
  std::vector<std::string> assumptions;  // What the estimate assumed, one line each.

  bool changes_structure() const { return !layer_steps.empty() || !micro_batch_steps.empty(); }
};

StatusOr<Plan> MakePlan(const PlanInputs& in, const whatif::SettingList& settings);

// The measured setup as SetupValues (unknown values 0).
whatif::SetupValues MeasuredSetup(const structure::JobStructure& structure);

// A memory model configuration for `values` (all model values known), with `zero` and
// `recompute`; the trace's attention kernels say whether attention is fused (flash).
models::MemoryConfig MemoryConfigFor(const whatif::SetupValues& values, int zero,
                                     models::Recompute recompute, bool flash_attention);

// Copies per layer so that `from` layers become `to` (the rule above).
std::vector<uint32_t> LayerCopies(uint32_t from, uint32_t to);

}  // namespace lumos::modeler::estimate
