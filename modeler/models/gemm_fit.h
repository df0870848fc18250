// Design: fitting the GEMM model (gemm_model.h) to measured tables: the rows are grouped by
// (GPU, dtype) and each group becomes one calibration, with the roofline figures of its GPU
// from the specs (hardware_specs.h). The model does not depend on the order of the tables.
// Used by the model file (cost_model.h) and the GEMM validation (gemm_validation.h).
// Threading: no shared state.
#pragma once

#include <vector>

#include "base/status.h"
#include "modeler/models/cost_table.h"
#include "modeler/models/gemm_model.h"
#include "modeler/models/hardware_specs.h"

namespace lumos::modeler::models {

// One measured GEMM table, its rows read (ReadGemmRows).
struct GemmTable {
  const CsvTable* table = nullptr;
  std::vector<GemmRow> rows;
};

// An unknown GPU, a dtype the GPU has no peak for or a batched row is an error naming the row.
StatusOr<GemmModel> FitGemmTables(const std::vector<GemmTable>& tables, const SpecTable& specs);

}  // namespace lumos::modeler::models
