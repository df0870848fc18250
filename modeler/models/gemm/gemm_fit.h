// Design: fitting the GEMM model (gemm_model.h) to measured tables: the rows are grouped by
// (GPU, dtype) and each group becomes one calibration, with the roofline figures of its GPU
// from the specs (hardware_specs.h); GEMMs of traced jobs join the group of their GPU and dtype.
// The model does not depend on the order of the tables. Used by the model file (cost_model.h) and
// the GEMM validation (gemm_validation.h). Threading: no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/gemm/gemm_model.h"
#include "modeler/models/gemm/gemm_table.h"
#include "modeler/models/hardware/hardware_specs.h"

namespace lumos::modeler::models {

// One measured GEMM table, its rows read (ReadGemmRows).
struct GemmTable {
  const io::CsvTable* table = nullptr;
  std::vector<GemmRow> rows;
};

// The GEMM points a traced job measured on one GPU in one dtype (cost_inputs.h): one per
// distinct shape (batch 1), the median of its calls' durations.
struct TracedGemms {
  const GpuSpec* gpu = nullptr;
  DType dtype = DType::kBf16;
  std::vector<GemmPoint> points;  // Sorted by shape, one per shape.
  std::string origin;             // "job ID", for errors.
  uint64_t calls = 0;             // The GEMMs measured (repeated shapes: one point).
};

// An unknown GPU, a dtype the GPU has no peak for or a batched row is an error naming the row.
// `traced` joins the tables' rows of its GPU and dtype (or makes a calibration of its own); a
// shape both measured is the trace's (the job as it ran), the table's row of it is left out.
// Several jobs measuring one shape: the mean of their medians (GemmCalibration::Fit). A GPU and
// dtype that only traces measured, in fewer shapes than the surface has terms (kSurfaceTerms),
// is not fitted: a line in `skipped` says so (a table's group that small stays an error).
StatusOr<GemmModel> FitGemmTables(const std::vector<GemmTable>& tables, const SpecTable& specs,
                                  const std::vector<TracedGemms>& traced = {},
                                  std::vector<std::string>* skipped = nullptr);

}  // namespace lumos::modeler::models
