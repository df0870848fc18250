// Design: one capture window summarized (modeler/summarize/README.md has the columns). The
// window's files are loaded as `lumos-model replay` loads a job (streaming: each rank's part
// of the graph built as it loads, its events then dropped), clocks aligned, and the measured
// side analysed as replay's (AnalyzeMeasured: FindIterations, the breakdown sweep); no
// simulation. Rows:
//   iterations   one per (rank, iteration): measured start (from the window's first event
//                or iteration start, on the aligned timeline) and duration, the breakdown, GPU
//                busy;
//   kernels      one per (kernel name, grid, block) over all ranks of the window, every
//                kernel the window holds: count, total, mean and nearest-rank p50 / p90 / max
//                of the durations, the ranks that ran it, its class (models::ClassifyKernel);
//   collectives  one per (op, dtype, bytes, ranks, nodes) over the window's collective
//                operations whose records all ranks hold (CollectiveGroup::complete), each
//                counted once with its transfer time (the latest member's start to the
//                earliest end: waiting for peers left out, as the cost models calibrate);
//                bytes in nccl-tests' convention (ModelBytes), algbw = bytes / p50, busbw =
//                algbw x BusBandwidthFactor; expected_ns and expected_busbw_gbps from the
//                collective cost model for the headers' GPU on its NVLink fabric, nodes joined
//                by the network given (MakeCollectiveTarget), null when the specs do not know
//                the GPU. Operations NCCL fused into one kernel or with no positive transfer
//                time (clocks that disagree) are counted in collectives_left_out instead.
// Kernel durations are held until the window is done (8 bytes a kernel): the percentiles are
// exact. Failure: a window none of whose files can be read, or with no API call or GPU op, is
// an error naming it; damaged or unclosed files are input problems (their rows still come).
// Threading: one window per call; calls share nothing but the immutable options.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/analysis/iteration_analysis.h"
#include "modeler/models/collectives/collective_costs.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/summarize/summary_schema.h"
#include "modeler/summarize/trace_windows.h"

namespace lumos::modeler::summarize {

struct SummaryOptions {
  AnalysisOptions analysis;  // --iteration.
  const models::SpecTable* specs = nullptr;
  models::NetworkSpec network;                              // Between nodes (--net).
  std::vector<models::CollectiveCalibration> calibrations;  // --costs; empty: NCCL's constants.
};

struct WindowRows {
  std::vector<std::vector<Value>> rows[3];  // Indexed by Table.
  std::vector<std::string> input_problems;  // Damaged, unclosed or skipped files.
  size_t ranks = 0;
  uint64_t events = 0;
  uint64_t collectives_left_out = 0;
};

StatusOr<WindowRows> SummarizeWindow(const TraceWindow& window, const SummaryOptions& options);

}  // namespace lumos::modeler::summarize
