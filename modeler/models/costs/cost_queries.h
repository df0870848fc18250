// Design: what `lumos-model costs fit` and `costs predict` do, as library calls (the command in
// modeler/tools/ only handles arguments and outputs; tests call these in-process too).
//   fit: the inputs are CSV tables with the columns of ../shared/data/costs/ and Lumos traces
//        (cost_inputs.h). A table's kind comes from its header (cost_table.h): GEMM tables fit
//        the GEMM model, collective tables the collective model (collective_costs.h); a traced
//        job's collectives calibrate the collective model too, its copies and memsets the
//        non-GEMM kernel model (one calibration per GPU and key over all jobs, at least
//        KernelCalibration::kMinSamples samples; fewer are said in `skipped`), and each job says
//        in one note what it calibrated. Kernel query tables are refused (predict only). One
//        dispatch per kind, so another kind is one more case. Nothing fitted at all is an error
//        that says why.
//   predict: a query table of one kind, the columns of the measured tables without latency_us;
//        `gpu` per row, or the default GPU (--gpu) where the column is absent or a cell empty;
//        collective queries across nodes use `network` (--net, default kDefaultNetwork).
//        The output is every query column as given, then predicted_us (3 decimals) and source
//        (gemm_model.h SourceText, collective_costs.h CollectiveSourceText, KernelModel::SourceText
//        for kernel queries, its commas as semicolons: "class fit on V100-SXM2-32GB (memset; 40
//        kernels)", "roofline only" where the model has no calibration of the key). An unknown GPU,
//        a malformed row or an impossible query is one error naming the row ("q.csv:7: ..."), and
//        nothing is output.
// Threading: no shared state.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/costs/cost_inputs.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/query/cost_table.h"

namespace lumos::modeler::models {

struct FitLog {
  std::vector<std::string> notes;     // One line per traced job: what it calibrated.
  std::vector<std::string> skipped;   // Traced GEMM groups too small to fit (gemm_fit.h).
  std::vector<std::string> problems;  // Input problems (exit 1); what could be read was used.
};

// Reads and fits every input; `network` joins the nodes of traced jobs (and of table rows that
// name nodes).
// `calibrated`, when given, are the traced jobs already calibrated (CalibrateJob: a job the
// caller holds in memory), used instead of reading inputs.traces (then only named as inputs);
// they are moved from.
StatusOr<CostModel> FitCostInputs(const CostInputs& inputs, const SpecTable& specs,
                                  const NetworkSpec& network, FitLog* log,
                                  std::vector<TraceCalibration>* calibrated = nullptr);
// Tables only, nodes joined by kDefaultNetwork.
StatusOr<CostModel> FitCostTables(const std::vector<std::string>& tables, const SpecTable& specs);

// One line per calibration: "  GEMM H100-SXM5-80GB bf16: 35700 shapes, floor 2.535 us",
// "  collectives H100-SXM5-80GB: 504 points fitted, ... from nccl_h100.csv (H100-SXM5-80GB)".
std::string DescribeCostModel(const CostModel& model);

// `default_gpu` may be null when every row names its GPU; `network` null: kDefaultNetwork.
StatusOr<PredictedTable> PredictCostQueries(const CostModel& model, const io::CsvTable& queries,
                                            const GpuSpec* default_gpu, const SpecTable& specs,
                                            const NetworkSpec* network = nullptr);

}  // namespace lumos::modeler::models
