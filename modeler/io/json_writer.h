// Design: a small streaming JSON writer for the Chrome trace exporter. It appends to a buffer
// and hands the buffer to a sink whenever it grows past `flush_bytes`, so memory stays bounded
// however large the trace is; nothing is ever parsed back or held as a DOM.
// Output is valid JSON whatever the input strings hold: invalid UTF-8 becomes U+FFFD and
// control characters are escaped. Numbers are printed without locale or floating point where
// it matters (times are integer ns printed as µs with exactly 3 decimals), so the bytes are a
// pure function of the calls made. The first sink error sticks and is returned by Finish().
// Threading: one writer per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace lumos::modeler::io {

// Receives the output in order, in chunks.
using JsonSink = std::function<Status(std::string_view)>;

class JsonWriter {
 public:
  explicit JsonWriter(JsonSink sink, size_t flush_bytes = 1 << 20);

  // Containers. `one_per_line` puts each element of the container on its own line, which
  // keeps the (large) traceEvents array readable with grep and diff.
  void BeginObject(bool one_per_line = false);
  void EndObject();
  void BeginArray(bool one_per_line = false);
  void EndArray();
  void Key(std::string_view key);

  // Values (inside an array, or after Key()).
  void String(std::string_view value);
  void Int(int64_t value);
  // Integers above 2^53 are written as decimal strings: JSON readers parse numbers as doubles
  // and would silently round them (correlation ids, communicator hashes).
  void Uint(uint64_t value);
  void Bool(bool value);
  void Null();
  // Nanoseconds as microseconds with exactly three decimals ("1234.567"), so no ns is lost.
  void Micros(uint64_t ns);
  // A double with `decimals` fractional digits (statistics only, never times).
  void Fixed(double value, int decimals);

  // Key + value shorthands.
  void KeyString(std::string_view key, std::string_view value) {
    Key(key);
    String(value);
  }
  void KeyInt(std::string_view key, int64_t value) {
    Key(key);
    Int(value);
  }
  void KeyUint(std::string_view key, uint64_t value) {
    Key(key);
    Uint(value);
  }
  void KeyBool(std::string_view key, bool value) {
    Key(key);
    Bool(value);
  }
  void KeyMicros(std::string_view key, uint64_t ns) {
    Key(key);
    Micros(ns);
  }

  // Appends text verbatim (a newline between top-level parts).
  void Raw(std::string_view text) { Append(text); }

  // Flushes what is buffered; returns the first sink error seen so far.
  Status Finish();
  // The first sink error so far (a long export stops early on a full disk).
  const Status& status() const { return status_; }
  uint64_t bytes_written() const { return bytes_written_ + buffer_.size(); }

 private:
  void BeforeValue();
  void MaybeFlush();
  void Append(std::string_view text) { buffer_.append(text.data(), text.size()); }

  struct Level {
    bool array = false;
    bool one_per_line = false;
    bool has_items = false;
  };
  JsonSink sink_;
  size_t flush_bytes_;
  std::string buffer_;
  std::vector<Level> levels_;
  bool after_key_ = false;  // The next value completes a key: no separator before it.
  uint64_t bytes_written_ = 0;
  Status status_;
};

// Appends `value` to `out` as a quoted JSON string (escaped; invalid UTF-8 becomes U+FFFD).
void AppendJsonString(std::string_view value, std::string* out);

// Appends ns as µs with three decimals.
void AppendMicros(uint64_t ns, std::string* out);

}  // namespace lumos::modeler::io
