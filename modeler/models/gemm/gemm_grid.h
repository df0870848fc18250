// Design: the measured GEMM shapes of one calibration, for lookups by shape: the exact point,
// or an interpolation among its neighbours. The shapes lie on the grid of their distinct m, n
// and k values (the tables are such grids, with holes); each cell holds a value the caller
// chose (the calibration stores the measured log-efficiency less the fitted surface's, and its
// latency), NaN where nothing was measured.
// Neighbours of a query are the measured cells within kReach grid steps of it on every axis,
// weighted by 1/(d² + ε)² with d the distance in log2(m), log2(n), log2(k): nearer shapes
// count far more. What is averaged is that residual, not the time, so the roofline and the
// surface carry the trend between neighbours. A query outside the measured range on any axis
// is not interpolated (the caller falls back to the surface). kReach and ε were checked on an
// inner split of the calibration half (docs/validation.md): the result hardly depends on them.
// Threading: built once; lookups are const and allocate nothing (≥ 1M/s: bench/).
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "modeler/models/query/kernel_query.h"

namespace lumos::modeler::models {

class GemmGrid {
 public:
  static constexpr int kReach = 2;
  static constexpr double kEpsilon = 0.05;
  static constexpr uint64_t kMaxCells = uint64_t{1} << 24;

  struct Cell {
    GemmShape shape;            // batch 1.
    double log_efficiency = 0;  // The value interpolated (see above).
    int64_t latency_ns = 0;
  };
  // Fails when the grid of distinct values would exceed kMaxCells.
  static StatusOr<GemmGrid> Build(const std::vector<Cell>& cells);

  enum class Hit { kMeasured, kInterpolated, kOutside };
  struct Lookup {
    Hit hit = Hit::kOutside;
    double log_efficiency = 0;
    int64_t latency_ns = 0;  // kMeasured: the measurement itself.
  };
  Lookup Find(int64_t m, int64_t n, int64_t k) const;

 private:
  struct Axis {
    std::vector<int64_t> values;  // Sorted, distinct.
    std::vector<double> log2s;
  };
  // The candidate index range [first, last] of `value` on `axis`, and whether it is a value.
  struct Span {
    int first = 0, last = -1;
    bool exact = false;
    int exact_index = -1;
  };
  static bool SpanOf(const Axis& axis, int64_t value, Span* span);

  Axis m_, n_, k_;
  std::vector<float> cells_;         // (im·|n| + in)·|k| + ik; NaN: not measured.
  std::vector<int64_t> latency_ns_;  // Same index; the measured latency.
};

}  // namespace lumos::modeler::models
