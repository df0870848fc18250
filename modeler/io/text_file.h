// Design: the small text inputs of the cost models (specs files, CSV tables, model files) read
// whole, through base/input_file.h (regular files only, never blocking on a FIFO), with a size
// limit so that a wrong argument (a huge file) is one error instead of all the memory.
// Threading: no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace lumos::modeler::io {

inline constexpr uint64_t kMaxTextFileBytes = uint64_t{1} << 30;  // 1 GiB.

StatusOr<std::string> ReadTextFile(const std::string& path, uint64_t max_bytes = kMaxTextFileBytes);

// Splits `text` into lines (without '\n'; a '\r' before it is dropped); `visit(line, number)`
// with 1-based numbers, stopping at the first error it returns.
template <typename Visit>
Status ForEachLine(std::string_view text, Visit&& visit) {
  size_t number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    LUMOS_RETURN_IF_ERROR(visit(line, ++number));
    start = end + 1;
  }
  return Status::Ok();
}

// `text` without leading and trailing spaces and tabs.
std::string_view Trim(std::string_view text);

}  // namespace lumos::modeler::io
