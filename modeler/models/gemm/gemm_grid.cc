#include "modeler/models/gemm/gemm_grid.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace lumos::modeler::models {
namespace {

constexpr int kMaxSpan = 2 * GemmGrid::kReach + 1;

}  // namespace

StatusOr<GemmGrid> GemmGrid::Build(const std::vector<Cell>& cells) {
  GemmGrid grid;
  for (const Cell& cell : cells) {
    grid.m_.values.push_back(cell.shape.m);
    grid.n_.values.push_back(cell.shape.n);
    grid.k_.values.push_back(cell.shape.k);
  }
  for (Axis* axis : {&grid.m_, &grid.n_, &grid.k_}) {
    std::sort(axis->values.begin(), axis->values.end());
    axis->values.erase(std::unique(axis->values.begin(), axis->values.end()), axis->values.end());
    for (int64_t v : axis->values) axis->log2s.push_back(std::log2(static_cast<double>(v)));
  }
  const uint64_t size =
      static_cast<uint64_t>(grid.m_.values.size()) * grid.n_.values.size() * grid.k_.values.size();
  if (size > kMaxCells) {
    return ErrorStatus(
        "%zu distinct m × %zu n × %zu k make a grid of %llu cells (at most %llu): too many "
        "distinct shapes for one calibration",
        grid.m_.values.size(), grid.n_.values.size(), grid.k_.values.size(),
        static_cast<unsigned long long>(size), static_cast<unsigned long long>(kMaxCells));
  }
  grid.cells_.assign(size, std::numeric_limits<float>::quiet_NaN());
  grid.latency_ns_.assign(size, 0);
  auto index = [](const Axis& axis, int64_t v) {
    return static_cast<size_t>(std::lower_bound(axis.values.begin(), axis.values.end(), v) -
                               axis.values.begin());
  };
  for (const Cell& cell : cells) {
    const size_t at =
        (index(grid.m_, cell.shape.m) * grid.n_.values.size() + index(grid.n_, cell.shape.n)) *
            grid.k_.values.size() +
        index(grid.k_, cell.shape.k);
    grid.cells_[at] = static_cast<float>(cell.log_efficiency);
    grid.latency_ns_[at] = cell.latency_ns;
  }
  return grid;
}

bool GemmGrid::SpanOf(const Axis& axis, int64_t value, Span* span) {
  const std::vector<int64_t>& v = axis.values;
  if (v.empty() || value < v.front() || value > v.back()) return false;
  const int lower = static_cast<int>(std::lower_bound(v.begin(), v.end(), value) - v.begin());
  span->exact = v[lower] == value;
  span->exact_index = span->exact ? lower : -1;
  // Exact: kReach either side of it; between two values: kReach below and above.
  const int upper = span->exact ? lower + 1 : lower;
  span->first = std::max(lower - kReach, 0);
  span->last = std::min(upper + kReach - 1, static_cast<int>(v.size()) - 1);
  return true;
}

GemmGrid::Lookup GemmGrid::Find(int64_t m, int64_t n, int64_t k) const {
  Lookup result;
  Span sm, sn, sk;
  if (!SpanOf(m_, m, &sm) || !SpanOf(n_, n, &sn) || !SpanOf(k_, k, &sk)) return result;
  const size_t nn = n_.values.size();
  const size_t nk = k_.values.size();
  if (sm.exact && sn.exact && sk.exact) {
    const size_t at =
        (static_cast<size_t>(sm.exact_index) * nn + sn.exact_index) * nk + sk.exact_index;
    if (!std::isnan(cells_[at])) {
      result.hit = Hit::kMeasured;
      result.log_efficiency = cells_[at];
      result.latency_ns = latency_ns_[at];
      return result;
    }
  }
  // Squared log2 distances along each axis, computed once per span.
  const double lm = std::log2(static_cast<double>(m));
  const double ln = std::log2(static_cast<double>(n));
  const double lk = std::log2(static_cast<double>(k));
  std::array<double, kMaxSpan> dm{}, dn{}, dk{};
  for (int i = sm.first; i <= sm.last; ++i) dm[i - sm.first] = std::pow(m_.log2s[i] - lm, 2);
  for (int i = sn.first; i <= sn.last; ++i) dn[i - sn.first] = std::pow(n_.log2s[i] - ln, 2);
  for (int i = sk.first; i <= sk.last; ++i) dk[i - sk.first] = std::pow(k_.log2s[i] - lk, 2);
  double sum = 0, weights = 0;
  for (int i = sm.first; i <= sm.last; ++i) {
    for (int j = sn.first; j <= sn.last; ++j) {
      const size_t row = (static_cast<size_t>(i) * nn + j) * nk;
      const double dmn = dm[i - sm.first] + dn[j - sn.first];
      for (int l = sk.first; l <= sk.last; ++l) {
        const float cell = cells_[row + l];
        if (std::isnan(cell)) continue;
        const double base = dmn + dk[l - sk.first] + kEpsilon;
        const double w = 1.0 / (base * base);
        sum += w * cell;
        weights += w;
      }
    }
  }
  if (weights == 0) return result;
  result.hit = Hit::kInterpolated;
  result.log_efficiency = sum / weights;
  return result;
}

}  // namespace lumos::modeler::models
