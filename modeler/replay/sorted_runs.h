// Design: sorts a vector made of runs that are each (nearly always) sorted already, such as a
// rank's GPU ops gathered stream by stream (a stream runs its ops in order, measured and
// replayed): each run is sorted only if it is not, then the runs are merged pairwise, O(n log
// runs) instead of O(n log n). The idle and launch analyses sort every rank's ops this way.
// Threading: pure function.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace lumos::modeler::internal {

// `ends`: the end index of each run, ascending, the last one v->size().
template <typename T, typename Less>
void SortRuns(std::vector<T>* v, std::vector<size_t> ends, Less less) {
  size_t begin = 0;
  for (size_t end : ends) {
    const auto b = v->begin() + static_cast<std::ptrdiff_t>(begin);
    const auto e = v->begin() + static_cast<std::ptrdiff_t>(end);
    if (!std::is_sorted(b, e, less)) std::sort(b, e, less);
    begin = end;
  }
  // Merge neighbouring runs until one is left.
  while (ends.size() > 1) {
    std::vector<size_t> merged;
    size_t start = 0;
    for (size_t i = 0; i < ends.size(); i += 2) {
      if (i + 1 < ends.size()) {
        std::inplace_merge(v->begin() + static_cast<std::ptrdiff_t>(start),
                           v->begin() + static_cast<std::ptrdiff_t>(ends[i]),
                           v->begin() + static_cast<std::ptrdiff_t>(ends[i + 1]), less);
        start = ends[i + 1];
      } else {
        start = ends[i];
      }
      merged.push_back(start);
    }
    ends = std::move(merged);
  }
}

}  // namespace lumos::modeler::internal
