// Design: the collective model's validation (issue 13) on NVIDIA's measured tables
// (../shared/data/costs/nccl_h100.csv, nccl_a100.csv), shared by its test
// (tests/modeler/models/collectives/collective_validation_test.cc) and the table in
// docs/validation.md (scripts/validate-collectives.sh):
// - more ranks: fit the 2- and 4-rank rows of one GPU, predict its 8-rank rows (H100, and A100
//   the same way);
// - another GPU: fit every H100 row, predict every A100 row through the A100 fabric.
// Calibration and test rows never meet: each fit sees only its calibration rows (the 8-rank
// rows, the A100 rows, are filtered out before fitting, and the test checks the fitted model
// holds none of them). Errors are |predicted - measured| / measured: the median, the
// time-weighted error (sum of |error| over sum of measured), the 90th percentile and the
// largest, beside baselines: the source's own time (the 4-rank time of the same row; the
// H100 time), that time scaled by the bus-bandwidth ratio (the roofline ratio), and the
// nccl-tests bus-bandwidth formula with the datasheet NVLink bandwidth (no latency).
// The fabrics are datasheet numbers (kH100Fabric, kA100Fabric below).
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/collectives/collective_model.h"

namespace lumos::modeler::models {

// NVIDIA H100 SXM5 80GB (DGX H100): NVLink 4, 18 links x 25 GB/s per direction; NVSwitch 3
// (NVLS); 1980 MHz boost; HBM3 3.35 TB/s; sm_90.
CollectiveFabric H100SxmFabric();
// NVIDIA A100 SXM4 80GB (DGX A100): NVLink 3, 12 links x 25 GB/s; NVSwitch 2 (no NVLS);
// 1410 MHz boost; HBM2e 2.039 TB/s; sm_80.
CollectiveFabric A100SxmFabric();

struct ErrorSummary {
  size_t rows = 0;
  double median = 0, time_weighted = 0, p90 = 0, max = 0;  // Fractions (0.05 = 5 %).
};

struct ValidationRow {
  schema::CollectiveOp op = schema::CollectiveOp::kUnspecified;
  schema::DataType data_type = schema::DataType::kUnspecified;
  uint32_t ranks = 0;
  uint64_t bytes = 0;
  int64_t measured_ns = 0;
  CollectivePrediction predicted;
};

struct ValidationCase {
  std::string name;         // "H100: fit 2-4 ranks, predict 8"
  std::string calibration;  // What the fit saw ("nccl_h100.csv, ranks 2 and 4: 336 rows").
  ErrorSummary ours;
  std::vector<std::pair<std::string, ErrorSummary>> baselines;
  std::vector<std::pair<std::string, ErrorSummary>> by_op;  // Ours, per operation.
  std::vector<std::pair<std::string, size_t>> sources;      // Predictions by CostSource.
  bool calibration_clean = false;   // The fitted model holds none of the test rows.
  std::vector<ValidationRow> rows;  // Every test row with its prediction.
};

struct CollectiveValidation {
  std::vector<ValidationCase> cases;
};

StatusOr<CollectiveValidation> ValidateCollectiveModel(const std::string& h100_csv,
                                                       const std::string& a100_csv);

// The tables of docs/validation.md ("Collective model"), Markdown.
std::string CollectiveValidationMarkdown(const CollectiveValidation& validation);
// Every test row: case,op,dtype,ranks,bytes,measured_us,predicted_us,error,source,algorithm,
// protocol (CSV with a header).
std::string CollectiveValidationRowsCsv(const CollectiveValidation& validation);

}  // namespace lumos::modeler::models
