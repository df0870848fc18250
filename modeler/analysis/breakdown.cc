// The breakdown and GPU busy series; see breakdown.h.
#include "modeler/analysis/breakdown.h"

#include <algorithm>

namespace lumos::modeler {

Breakdown SweepBreakdown(const std::vector<std::pair<int64_t, int64_t>>& compute,
                         const std::vector<std::pair<int64_t, int64_t>>& comm, int64_t begin,
                         int64_t end) {
  struct Point {
    int64_t t;
    int compute, comm;
  };
  std::vector<Point> points;
  for (auto [a, b] : compute) {
    a = std::max(a, begin), b = std::min(b, end);
    if (a < b) points.push_back({a, 1, 0}), points.push_back({b, -1, 0});
  }
  for (auto [a, b] : comm) {
    a = std::max(a, begin), b = std::min(b, end);
    if (a < b) points.push_back({a, 0, 1}), points.push_back({b, 0, -1});
  }
  std::sort(points.begin(), points.end(), [](const Point& x, const Point& y) { return x.t < y.t; });
  Breakdown out;
  int compute_open = 0, comm_open = 0;
  int64_t t = begin;
  for (const Point& p : points) {
    const int64_t span = p.t - t;
    if (span > 0) {
      if (compute_open > 0 && comm_open > 0)
        out.overlapped_ns += span;
      else if (compute_open > 0)
        out.exposed_compute_ns += span;
      else if (comm_open > 0)
        out.exposed_comm_ns += span;
      else
        out.other_ns += span;
    }
    t = p.t;
    compute_open += p.compute;
    comm_open += p.comm;
  }
  if (end > t) out.other_ns += end - t;
  return out;
}

std::vector<double> BusyBins(std::vector<std::pair<int64_t, int64_t>> intervals, int64_t begin,
                             int64_t end, int64_t bin) {
  std::vector<double> bins;
  if (end <= begin || bin <= 0) return bins;
  const size_t count = static_cast<size_t>((end - begin + bin - 1) / bin);
  std::vector<int64_t> busy(count, 0);
  std::sort(intervals.begin(), intervals.end());
  int64_t covered_to = begin;
  for (auto [a, b] : intervals) {
    a = std::max({a, begin, covered_to});
    b = std::min(b, end);
    if (a >= b) continue;
    covered_to = b;
    for (int64_t t = a; t < b;) {
      const size_t i = static_cast<size_t>((t - begin) / bin);
      const int64_t bin_end = begin + static_cast<int64_t>(i + 1) * bin;
      const int64_t stop = std::min(b, bin_end);
      busy[i] += stop - t;
      t = stop;
    }
  }
  for (size_t i = 0; i < count; ++i) {
    const int64_t width = std::min(bin, end - (begin + static_cast<int64_t>(i) * bin));
    bins.push_back(width > 0 ? static_cast<double>(busy[i]) / static_cast<double>(width) : 0.0);
  }
  return bins;
}

}  // namespace lumos::modeler
