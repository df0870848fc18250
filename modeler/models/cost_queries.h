// Design: what `lumos-model costs fit` and `costs predict` do, as library calls (the command in
// modeler/tools/ only handles arguments and outputs; tests call these in-process too).
//   fit: inputs are CSV tables with the columns of ../shared/data/costs/ (files, or directories:
//        every *.csv inside, recursively, in name order). A table's kind comes from its header
//        (cost_table.h); GEMM tables are fitted; a collective table is skipped with a line
//        saying so (the collective model is wired in separately) and Lumos traces are refused
//        (they carry no GEMM shapes yet): one dispatch per kind, so another kind is one more
//        case.
//   predict: a query table of one kind, the columns of the measured tables without latency_us;
//        `gpu` per row, or the default GPU (--gpu) where the column is absent or a cell empty.
//        The output is every query column as given, then predicted_us (3 decimals) and source
//        (gemm_model.h, SourceText). An unknown GPU, a malformed row or an impossible shape is
//        one error naming the row ("q.csv:7: ..."), and nothing is output.
// Threading: no shared state.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/cost_model.h"
#include "modeler/models/cost_table.h"
#include "modeler/models/hardware_specs.h"

namespace lumos::modeler::models {

// The table files named by `inputs` (directories expanded), or an error naming the argument.
StatusOr<std::vector<std::string>> ExpandCostInputs(const std::vector<std::string>& inputs);

// Reads and fits every table of `paths`. A table of a kind not fitted yet is not an error: it
// is named in `*skipped` (one line each), unless nothing is left to fit.
StatusOr<CostModel> FitCostTables(const std::vector<std::string>& paths, const SpecTable& specs,
                                  std::vector<std::string>* skipped = nullptr);

// One line per calibration: "H100-SXM5-80GB bf16: 35700 shapes, floor 2.535 us".
std::string DescribeCostModel(const CostModel& model);

struct PredictedTable {
  std::string csv;  // The output table.
  size_t rows = 0;
  std::array<size_t, 6> sources{};  // Rows by SourceKind.
};

// `default_gpu` may be null when every row names its GPU.
StatusOr<PredictedTable> PredictCostQueries(const CostModel& model, const CsvTable& queries,
                                            const GpuSpec* default_gpu, const SpecTable& specs);

}  // namespace lumos::modeler::models
