// The median of a sample (the upper one of an even count), by nth_element on the copy it takes;
// `empty` when there are no values. Shared by the graph builder and the clock alignment.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lumos::modeler {

inline int64_t MedianOf(std::vector<int64_t> values, int64_t empty = 0) {
  if (values.empty()) return empty;
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace lumos::modeler
