// Design: re-partitioning a traced transformer job (issue 25 item 1): `lumos-model estimate
// TRACE --set tp=T,pp=P[,vp=V,dp=D,world=W,sequence_parallel=1,mbs=..,micro_batches=..,
// zero=..,recompute=..,gpu=..,net=..]`, the world changing or not.
// The trace gives the model and its layout (structure recovery, --base for what it cannot show)
// and its own cost calibrations (PrepareJob: the GEMMs, kernels and collectives as measured,
// then --costs for the rest). Both the measured layout and the asked one are built as a step
// graph, one GPU per pipeline stage (modeler/plan's slow path: each layer's GEMMs split by tp
// as Megatron-LM splits them, column then row parallel, heads divided, the TP collectives
// re-costed or added on the node's NVLink; layers in stages with the embedding on the first
// and the LM head and loss on the last, Megatron's 1F1B or interleaved schedule, activations
// sent point to point; gradients bucketed and reduced behind the backward, ZeRO's collectives),
// both simulated on the trace's costs, and the measured GPU-busy time scaled by their ratio:
//   estimate = measured GPU idle + measured GPU busy x simulated(asked) / simulated(measured).
// So what the plan's graph does not model (kernels it does not name, its fused-kernel
// assumptions) keeps its share of the GPU's time, the time the GPU waited for the host stays as
// measured, and the report says how far the simulated measured layout is from the measured
// GPU time (how much of the trace the graph explains). The measured kernels themselves are not
// rewritten: the graph is the plan's. Routing: a --set that changes tp, pp, vp or sequence
// parallelism takes this path (the others take estimate_run.h's rewrite of the measured graph); cp,
// ep and host are refused here. Errors (exit 2): a value the trace does not show and --base does
// not give, a layout that cannot exist (the rule named), a key this path does not take. Threading:
// pure functions over a const EstimateContext.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/estimate/estimate_report.h"
#include "modeler/estimate/estimate_run.h"
#include "modeler/plan/step_model.h"

namespace lumos::modeler::estimate {

// Whether `settings` re-partition the measured job (tp or pp away from the measured degree, vp
// above 1, sequence parallelism asked).
bool ChangesPartitioning(const whatif::SettingList& settings, const whatif::SetupValues& measured);

struct RepartitionResult {
  std::string settings_text;
  plan::ModelSpec spec_before, spec_after;
  plan::Layout before, after;
  std::string gpu_before, gpu_after, net_after;
  double measured_ns = 0;                      // The trace's iteration (replay of the measurement).
  double measured_busy_ns = 0;                 // Of it, the GPU busy (computing or communicating).
  plan::StepEstimate fast_before, fast_after;  // With their simulations (slow path).
  double estimate_ns = 0;                      // measured x simulated after / before.
  double tokens_per_s = 0;                     // Of the whole job, estimated.
  std::vector<std::string> assumptions;
};

StatusOr<RepartitionResult> RunRepartition(const EstimateContext& ctx,
                                           const whatif::SettingList& settings);

void WriteRepartitionText(const ReportHeader& header, const RepartitionResult& r, std::FILE* out);
void WriteRepartitionJson(const ReportHeader& header, const RepartitionResult& r, std::FILE* out);
// A sweep: one line per configuration, fastest first (ties: the order given); JSON: an array of
// WriteRepartitionJson's objects in the order given.
void WriteRepartitionSweep(const ReportHeader& header, const std::vector<RepartitionResult>& rs,
                           bool json, std::FILE* out);

}  // namespace lumos::modeler::estimate
