// Design: the protobuf wire primitives that both sides of the format code by hand: zigzag
// coding of signed values (sint fields, and the deltas of trace.proto's incremental state) and
// bounds-checked varint decoding. Header-only and dependency-free, so the agent's writer (no
// libprotobuf) and the modeler's readers share one definition. Unsigned arithmetic throughout:
// hostile or extreme values wrap instead of overflowing.
#pragma once

#include <cstdint>

namespace lumos::schema {

inline uint64_t ZigZagEncode(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}

inline int64_t ZigZagDecode(uint64_t wire) {
  return static_cast<int64_t>((wire >> 1) ^ (~(wire & 1) + 1));
}

// Decodes the varint at *p (< end) and advances *p past it; false (and *p unchanged) when it
// is truncated or longer than 10 bytes.
inline bool ReadVarint(const uint8_t** p, const uint8_t* end, uint64_t* value) {
  const uint8_t* q = *p;
  if (q < end && *q < 0x80) {  // Most values are small.
    *value = *q;
    *p = q + 1;
    return true;
  }
  uint64_t result = 0;
  for (int shift = 0; shift < 70 && q < end; shift += 7) {
    uint8_t byte = *q++;
    result |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      *p = q;
      return true;
    }
  }
  return false;
}

}  // namespace lumos::schema
