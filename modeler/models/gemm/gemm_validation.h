// Design: the GEMM model's validation on measured tables (docs/validation.md, issue 13 item 6),
// shared by its test (tests/modeler/models/gemm/gemm_validation_test.cc, which asserts the targets)
// and the report tool (bench/costs_validation.cc, run by scripts/validate-costs.sh).
// Calibration and test data are kept strictly apart:
//   * same GPU, unseen shapes: the rows of one table split in halves by a fixed-seed hash of the
//     row's index (InCalibrationHalf); the model is fitted on one half and scores the other;
//   * another GPU or dtype: the model is fitted on the whole source table only and scores the
//     target table's rows whose shape the source also has; the target's latencies are read
//     only to score.
// Errors are relative, |predicted − measured| / measured, in percent: the median, the 90th
// percentile, and the time-weighted error Σ|predicted − measured| / Σ measured (long kernels
// count by their length). Beside ours: the efficiency surface alone (no measured points), and
// for another GPU the baselines "the source's time" and "the source's time × the ratio of the
// plain rooflines max(tc, tm)".
// Threading: no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/query/kernel_query.h"

namespace lumos::modeler::models {

struct ErrorStats {
  size_t count = 0;
  double median_percent = 0;
  double p90_percent = 0;
  double weighted_percent = 0;
};

// `pairs`: (predicted, measured), any unit. Quantile q of n sorted errors: element
// min(n − 1, floor(q·n)).
ErrorStats Summarize(const std::vector<std::array<double, 2>>& pairs);

// Whether data row `row` (0-based) of a table is in the calibration half: the low bit of
// SplitMix64(seed + row) is 0. The same rule in scripts/validate-costs.sh.
bool InCalibrationHalf(uint64_t row, uint64_t seed);

inline constexpr uint64_t kValidationSeed = 13;

struct ValidationResult {
  std::string name;
  size_t calibration_rows = 0;
  ErrorStats ours;
  ErrorStats surface_only;
  bool has_baselines = false;  // Another GPU or dtype: the two baselines below.
  ErrorStats same_time;
  ErrorStats roofline_ratio;
  std::array<size_t, 6> sources{};  // Our predictions by SourceKind.
};

// Fits on the calibration half of `table`, scores the other half.
StatusOr<ValidationResult> ValidateSameGpu(const std::string& table, uint64_t seed,
                                           const SpecTable& specs);
// Fits on all of `source`, scores the rows of `target` whose shape `source` has.
StatusOr<ValidationResult> ValidateTransfer(const std::string& source, const std::string& target,
                                            const SpecTable& specs);

// A Markdown table of `results` (docs/validation.md).
std::string ValidationMarkdown(const std::vector<ValidationResult>& results);

}  // namespace lumos::modeler::models
