// Design: the hand-written protobuf wire encoder used by the agent (no libprotobuf there).
// WireBuffer is a growable byte buffer; the Put* calls write one field each and never check
// capacity, so a caller first calls EnsureRoom() with a bound on what it will write. Nested
// messages reserve one length byte and are patched (with a memmove when longer than 127 bytes).
// Single-threaded: one buffer per writer thread.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "schema/varint.h"

namespace lumos::schema {

enum class WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

// Longest varint (10 bytes) + tag (up to 5 bytes).
inline constexpr size_t kMaxScalarFieldBytes = 15;

class WireBuffer {
 public:
  WireBuffer() = default;
  WireBuffer(const WireBuffer&) = delete;
  WireBuffer& operator=(const WireBuffer&) = delete;
  ~WireBuffer() { std::free(data_); }

  // Makes room for `bytes` more; aborts only if the process is out of memory.
  void EnsureRoom(size_t bytes) {
    if (size_ + bytes > capacity_) Grow(size_ + bytes);
  }
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void Clear() { size_ = 0; }
  void Truncate(size_t size) { size_ = size < size_ ? size : size_; }

  void PutVarint(uint64_t value) {
    size_ = static_cast<size_t>(PutVarint(data_ + size_, value) - data_);
  }
  // Raw form for tight loops: writes at p (room ensured by the caller), returns the end. Loops
  // keep the cursor in a local and Commit() once: stores through uint8_t* may alias the
  // buffer's own members, so PutVarint() reloads them after every byte.
  static uint8_t* PutVarint(uint8_t* p, uint64_t value) {
    while (value >= 0x80) {
      *p++ = static_cast<uint8_t>(value | 0x80);
      value >>= 7;
    }
    *p++ = static_cast<uint8_t>(value);
    return p;
  }
  uint8_t* cursor() { return data_ + size_; }
  void Commit(uint8_t* end) { size_ = static_cast<size_t>(end - data_); }
  void PutTag(uint32_t field, WireType type) {
    PutVarint((static_cast<uint64_t>(field) << 3) | static_cast<uint32_t>(type));
  }
  void PutRaw(const void* bytes, size_t n) {
    if (n != 0) std::memcpy(data_ + size_, bytes, n);
    size_ += n;
  }

  // Scalar fields; zero values are skipped (proto3 defaults) unless *Always is used.
  void PutUint(uint32_t field, uint64_t value) {
    if (value != 0) PutUintAlways(field, value);
  }
  void PutUintAlways(uint32_t field, uint64_t value) {
    PutTag(field, WireType::kVarint);
    PutVarint(value);
  }
  // int32/int64 fields: negative values are sign-extended to 10 bytes, as protobuf does.
  void PutInt(uint32_t field, int64_t value) {
    if (value != 0) PutIntAlways(field, value);
  }
  void PutIntAlways(uint32_t field, int64_t value) {
    PutTag(field, WireType::kVarint);
    PutVarint(static_cast<uint64_t>(value));
  }
  // sint32/sint64 fields (zigzag).
  void PutSint(uint32_t field, int64_t value) {
    if (value != 0) PutSintAlways(field, value);
  }
  void PutSintAlways(uint32_t field, int64_t value) {
    PutTag(field, WireType::kVarint);
    PutVarint(schema::ZigZagEncode(value));
  }
  void PutBool(uint32_t field, bool value) { PutUint(field, value ? 1 : 0); }
  // string/bytes: needs EnsureRoom(value.size() + kMaxScalarFieldBytes).
  void PutString(uint32_t field, std::string_view value) {
    if (value.empty()) return;
    PutTag(field, WireType::kLength);
    PutVarint(value.size());
    PutRaw(value.data(), value.size());
  }

  // Opens a length-delimited sub-message; returns the offset of its 1-byte length slot.
  size_t BeginNested(uint32_t field) {
    PutTag(field, WireType::kLength);
    return size_++;
  }
  // Closes it. Bodies of 128+ bytes need a longer varint: the body moves right, so callers
  // reserve kMaxScalarFieldBytes of slack per open nesting level in EnsureRoom().
  void EndNested(size_t slot) {
    size_t body = size_ - slot - 1;
    if (body < 0x80) {
      data_[slot] = static_cast<uint8_t>(body);
      return;
    }
    size_t extra = VarintSize(body) - 1;
    std::memmove(data_ + slot + 1 + extra, data_ + slot + 1, body);
    uint8_t* p = data_ + slot;
    uint64_t value = body;
    while (value >= 0x80) {
      *p++ = static_cast<uint8_t>(value | 0x80);
      value >>= 7;
    }
    *p = static_cast<uint8_t>(value);
    size_ += extra;
  }

  static size_t VarintSize(uint64_t value) {
    size_t n = 1;
    while (value >= 0x80) {
      value >>= 7;
      ++n;
    }
    return n;
  }

 private:
  void Grow(size_t needed);

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace lumos::schema
