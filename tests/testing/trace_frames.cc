#include "tests/testing/trace_frames.h"

#include <zstd.h>

namespace lumos::testing {

std::vector<size_t> FrameStarts(const std::string& bytes) {
  std::vector<size_t> starts;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t size = ZSTD_findFrameCompressedSize(bytes.data() + at, bytes.size() - at);
    if (ZSTD_isError(size) != 0 || size == 0) break;
    starts.push_back(at);
    at += size;
  }
  return starts;
}

}  // namespace lumos::testing
