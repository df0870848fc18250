// Test support: where the frames of a trace file start, so a test can cut a real file exactly
// at a frame boundary (what a writer killed between two frames leaves: intact, no trailer).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace lumos::testing {

// Byte offset of every frame in `bytes` (the preamble's skippable frame first), by zstd's own
// frame parsing; stops at the first incomplete frame.
std::vector<size_t> FrameStarts(const std::string& bytes);

}  // namespace lumos::testing
