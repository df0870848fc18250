// Design: the paper's breakdown of an iteration and its GPU busy series, from a rank's GPU op
// intervals (measured or replayed) inside the iteration's window. The breakdown: exposed compute
// (GPU computes, no collective runs), overlapped (both), exposed communication (only
// collectives), other (no GPU work); copies and memsets count as compute. GPU busy: the fraction
// of each 1 ms bin with any GPU op of the rank running. Threading: pure functions.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "modeler/analysis/iteration_report.h"

namespace lumos::modeler {

// The breakdown of [begin, end) by a sweep over the compute (kernels, copies, memsets) and
// communication (collectives) intervals; intervals may overlap and extend past the window.
Breakdown SweepBreakdown(const std::vector<std::pair<int64_t, int64_t>>& compute,
                         const std::vector<std::pair<int64_t, int64_t>>& comm, int64_t begin,
                         int64_t end);

// The busy fraction (0..1) of each `bin` ns bin of [begin, end) (the last bin may be shorter),
// with any of `intervals` running.
std::vector<double> BusyBins(std::vector<std::pair<int64_t, int64_t>> intervals, int64_t begin,
                             int64_t end, int64_t bin);

}  // namespace lumos::modeler
