// Design: what `lumos-model estimate` prints. One configuration: the setup (measured, with where
// each value came from, and estimated), then base (the replayed measurement) and estimate side
// by side: iteration time, tokens/s, MFU, the breakdown and the critical path's classes of the
// slowest rank, GPU time per kernel class and per collective op, what the estimate's GPU time
// rests on (measured / interpolated / scaled / model only), memory per GPU against the GPU's
// capacity (fits, or the shortfall), then what was assumed. A sweep: one line per
// configuration, sorted by estimated iteration time (ties: the order given), with memory
// feasibility. Text and JSON carry the same content; output is deterministic.
// Threading: pure functions of their inputs.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/estimate/estimate_run.h"

namespace lumos::modeler::estimate {

struct ReportHeader {
  std::string job_id;
  size_t ranks = 0;
  std::string source_gpu;
  std::string source_net;
  const structure::JobStructure* structure = nullptr;
  std::string iteration_choice;       // Which iterations make the figures.
  std::vector<std::string> warnings;  // Input and graph problems worth saying once.
};

void WriteEstimateText(const ReportHeader& header, const EstimateResult& result, std::FILE* out);
Status WriteEstimateJson(const ReportHeader& header, const EstimateResult& result, std::FILE* out);

// A sweep: results in the order run; printed sorted.
void WriteSweepText(const ReportHeader& header, const std::vector<EstimateResult>& results,
                    std::FILE* out);
Status WriteSweepJson(const ReportHeader& header, const std::vector<EstimateResult>& results,
                      std::FILE* out);

}  // namespace lumos::modeler::estimate
