#include "modeler/io/json_writer.h"

#include <cmath>
#include <cstdio>
#include <utility>

namespace lumos::modeler::io {
namespace {

constexpr uint64_t kMaxExactDouble = 1ull << 53;

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (overlong
// forms, surrogates and code points above U+10FFFF are rejected, as JSON parsers do).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t b0 = byte(i);
  size_t need = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // Allowed range of the second byte.
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    if (b0 == 0xE0) lo = 0xA0;  // Overlong.
    if (b0 == 0xED) hi = 0x9F;  // Surrogates.
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    if (b0 == 0xF0) lo = 0x90;  // Overlong.
    if (b0 == 0xF4) hi = 0x8F;  // Above U+10FFFF.
  } else {
    return 0;
  }
  if (i + need >= s.size()) return 0;  // Cut short by the end of the string.
  uint8_t b1 = byte(i + 1);
  if (b1 < lo || b1 > hi) return 0;
  for (size_t k = 2; k <= need; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return need + 1;
}

}  // namespace

void AppendJsonString(std::string_view value, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < value.size()) {
    auto c = static_cast<uint8_t>(value[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out->append("\\\"");
          break;
        case '\\':
          out->append("\\\\");
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\t':
          out->append("\\t");
          break;
        case '\r':
          out->append("\\r");
          break;
        default:
          if (c < 0x20 || c == 0x7F) {
            out->append("\\u00");
            out->push_back(kHex[c >> 4]);
            out->push_back(kHex[c & 0xF]);
          } else {
            out->push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    size_t n = Utf8SequenceLength(value, i);
    if (n == 0) {
      out->append("\\ufffd");  // Kernel names are bytes; the output must stay valid JSON.
      ++i;
    } else {
      out->append(value.data() + i, n);
      i += n;
    }
  }
  out->push_back('"');
}

void AppendMicros(uint64_t ns, std::string* out) {
  char buf[32];
  int n = std::snprintf(buf, sizeof(buf), "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                        static_cast<unsigned long long>(ns % 1000));
  out->append(buf, static_cast<size_t>(n));
}

JsonWriter::JsonWriter(JsonSink sink, size_t flush_bytes)
    : sink_(std::move(sink)), flush_bytes_(flush_bytes) {
  buffer_.reserve(flush_bytes_ + 4096);
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& level = levels_.back();
  if (level.has_items) buffer_.push_back(',');
  if (level.one_per_line) buffer_.push_back('\n');
  level.has_items = true;
}

void JsonWriter::MaybeFlush() {
  if (buffer_.size() < flush_bytes_) return;
  if (status_.ok()) status_ = sink_(buffer_);
  bytes_written_ += buffer_.size();
  buffer_.clear();
}

void JsonWriter::BeginObject(bool one_per_line) {
  BeforeValue();
  buffer_.push_back('{');
  levels_.push_back(Level{false, one_per_line, false});
}

void JsonWriter::EndObject() {
  if (!levels_.empty()) {
    if (levels_.back().one_per_line && levels_.back().has_items) buffer_.push_back('\n');
    levels_.pop_back();
  }
  buffer_.push_back('}');
  // Flush only between elements so a sink sees whole events (handy for tests and pipes).
  MaybeFlush();
}

void JsonWriter::BeginArray(bool one_per_line) {
  BeforeValue();
  buffer_.push_back('[');
  levels_.push_back(Level{true, one_per_line, false});
}

void JsonWriter::EndArray() {
  if (!levels_.empty()) {
    if (levels_.back().one_per_line && levels_.back().has_items) buffer_.push_back('\n');
    levels_.pop_back();
  }
  buffer_.push_back(']');
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(key, &buffer_);
  buffer_.push_back(':');
  after_key_ = true;
}

void JsonWriter::Null() {
  BeforeValue();
  Append("null");
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendJsonString(value, &buffer_);
}

void JsonWriter::Int(int64_t value) {
  if (value >= 0) return Uint(static_cast<uint64_t>(value));
  uint64_t magnitude = 0 - static_cast<uint64_t>(value);
  if (magnitude > kMaxExactDouble) {
    BeforeValue();
    Append("\"");
    Append(std::to_string(value));
    Append("\"");
    return;
  }
  BeforeValue();
  Append(std::to_string(value));
}

void JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  if (value > kMaxExactDouble) {
    Append("\"");
    Append(std::to_string(value));
    Append("\"");
  } else {
    Append(std::to_string(value));
  }
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  Append(value ? "true" : "false");
}

void JsonWriter::Micros(uint64_t ns) {
  BeforeValue();
  AppendMicros(ns, &buffer_);
}

void JsonWriter::Fixed(double value, int decimals) {
  BeforeValue();
  if (!std::isfinite(value)) {
    Append("null");  // JSON has no NaN or infinity.
    return;
  }
  char buf[64];
  int n = std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf)) {
    Append("null");
    return;
  }
  Append(std::string_view(buf, static_cast<size_t>(n)));
}

Status JsonWriter::Finish() {
  if (status_.ok() && !buffer_.empty()) status_ = sink_(buffer_);
  bytes_written_ += buffer_.size();
  buffer_.clear();
  return status_;
}

}  // namespace lumos::modeler::io
