#include "modeler/models/kernels/kernel_op_link.h"

#include <algorithm>

namespace lumos::modeler::models {

void NestedRanges::Add(int64_t start_ns, int64_t end_ns, uint32_t id) {
  ranges_.push_back(Range{start_ns, std::max(start_ns, end_ns), id, -1});
}

void NestedRanges::Build() {
  std::stable_sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<int32_t> open;  // Ranges containing the current start, outermost first.
  for (size_t i = 0; i < ranges_.size(); ++i) {
    while (!open.empty() && ranges_[open.back()].end < ranges_[i].end) open.pop_back();
    ranges_[i].parent = open.empty() ? -1 : open.back();
    open.push_back(static_cast<int32_t>(i));
  }
}

int64_t NestedRanges::Innermost(int64_t start_ns, int64_t end_ns) const {
  // The last range starting at or before start_ns, then up its parents.
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), start_ns,
                             [](int64_t t, const Range& r) { return t < r.start; });
  int64_t i = static_cast<int64_t>(it - ranges_.begin()) - 1;
  while (i >= 0) {
    const Range& r = ranges_[i];
    if (r.start <= start_ns && r.end >= end_ns) return r.id;
    i = r.parent;
  }
  return -1;
}

}  // namespace lumos::modeler::models
