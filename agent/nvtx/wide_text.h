// Wide NVTX strings (the W calls, and NVTX_MESSAGE_TYPE_UNICODE attributes) as UTF-8, which is
// what the trace stores. wchar_t is UTF-32 on Linux; a value that is not a Unicode scalar value
// becomes U+FFFD.
#pragma once

#include <cstddef>
#include <string>

namespace lumos::agent {

// Writes `text` as UTF-8 into out[0, capacity) with a terminating NUL, stopping before a code
// point that would not fit (so the result is always valid UTF-8); returns the bytes written
// without the NUL. Null text gives "". No allocation: the hot-path form (range names are cut to
// the record's inline bytes anyway).
size_t WideToUtf8(const wchar_t* text, char* out, size_t capacity) noexcept;

// The whole string, for registration-time calls (domain and registered-string names).
std::string WideToUtf8(const wchar_t* text);

// A stack buffer that holds more than a record's inline name, for the hot-path W handlers.
class ShortUtf8 {
 public:
  explicit ShortUtf8(const wchar_t* text) noexcept { WideToUtf8(text, bytes_, sizeof(bytes_)); }
  const char* c_str() const { return bytes_; }

 private:
  char bytes_[128];
};

}  // namespace lumos::agent
