#include "agent/nvtx/wide_text.h"

namespace lumos::agent {
namespace {

// The UTF-8 bytes of one code point into `out` (room for 4); returns their count.
size_t EncodeUtf8(char32_t code, char* out) {
  if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) code = 0xFFFD;
  if (code < 0x80) {
    out[0] = static_cast<char>(code);
    return 1;
  }
  if (code < 0x800) {
    out[0] = static_cast<char>(0xC0 | (code >> 6));
    out[1] = static_cast<char>(0x80 | (code & 0x3F));
    return 2;
  }
  if (code < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (code >> 12));
    out[1] = static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (code & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (code >> 18));
  out[1] = static_cast<char>(0x80 | ((code >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((code >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (code & 0x3F));
  return 4;
}

}  // namespace

size_t WideToUtf8(const wchar_t* text, char* out, size_t capacity) noexcept {
  if (capacity == 0) return 0;
  size_t length = 0;
  for (; text != nullptr && *text != L'\0'; ++text) {
    char bytes[4];
    const size_t count = EncodeUtf8(static_cast<char32_t>(*text), bytes);
    if (length + count + 1 > capacity) break;
    for (size_t i = 0; i < count; ++i) out[length++] = bytes[i];
  }
  out[length] = '\0';
  return length;
}

std::string WideToUtf8(const wchar_t* text) {
  std::string utf8;
  for (; text != nullptr && *text != L'\0'; ++text) {
    char bytes[4];
    utf8.append(bytes, EncodeUtf8(static_cast<char32_t>(*text), bytes));
  }
  return utf8;
}

}  // namespace lumos::agent
