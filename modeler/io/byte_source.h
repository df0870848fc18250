// Design: sequential byte sources for the importers. A ByteSource yields the bytes of an input
// file, gunzipped on the fly when the file starts with the gzip magic (zlib, concatenated
// members included), so callers never care whether an input was compressed. Errors name the
// file and the byte offset in it (compressed offset for gzip input). PaddedText holds one
// document with the zero padding simdjson needs to parse it in place, without a copy.
// Threading: one source per thread; nothing is shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace lumos::modeler::io {

// Bytes readable past the end of a PaddedText (>= simdjson::SIMDJSON_PADDING, checked in .cc).
inline constexpr size_t kTextPadding = 64;

class PaddedText {
 public:
  const char* data() const { return bytes_.data(); }
  char* data() { return bytes_.data(); }
  size_t size() const { return size_; }
  // Grows or shrinks the text to n bytes, keeping its prefix; the padding stays zeroed.
  void Resize(size_t n);
  void Reserve(size_t n) { bytes_.reserve(n + kTextPadding); }
  void Append(const char* data, size_t n);
  std::string_view view() const { return std::string_view(bytes_.data(), size_); }

 private:
  std::vector<char> bytes_ = std::vector<char>(kTextPadding, 0);
  size_t size_ = 0;
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `size` bytes into `data`; 0 means the end of the stream.
  virtual StatusOr<size_t> Read(char* data, size_t size) = 0;
  // Bytes delivered so far (the uncompressed offset).
  virtual uint64_t position() const = 0;
  // Likely total size (0 = unknown), only used to size buffers up front.
  virtual uint64_t size_hint() const = 0;
  virtual bool compressed() const = 0;
  const std::string& path() const { return path_; }

 protected:
  explicit ByteSource(std::string path) : path_(std::move(path)) {}

 private:
  std::string path_;
};

// Opens `path`; gzip input (detected by its magic bytes, not its name) is decompressed.
StatusOr<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path);

// Reads up to `size` bytes, fewer only at the end of the stream.
StatusOr<size_t> ReadFully(ByteSource* source, char* data, size_t size);

// Appends the rest of `source` to `text`: at most MaxDocumentBytes() in all, else an error
// naming the file and the budget (the text is then emptied).
Status ReadRest(ByteSource* source, PaddedText* text);

// The largest document (JSON text, after gunzip) an importer reads whole: half the memory
// budget (base/memory_budget.h); simdjson parses it in place and the events it yields need the
// rest.
uint64_t MaxDocumentBytes();

// "128.0 MiB (LUMOS_MAX_MEMORY)", or the default named as such: for messages.
std::string DescribeMemoryBudget();

// "64.0 MiB, half of the memory budget of 128.0 MiB (LUMOS_MAX_MEMORY)": for messages.
std::string DescribeDocumentBudget();

// A source over bytes in memory (an archive member), gunzipped on the fly when they start with
// the gzip magic; the bytes must outlive the source. `name` is for messages.
StatusOr<std::unique_ptr<ByteSource>> OpenMemorySource(const char* data, size_t size,
                                                       std::string name);

// Gunzips an in-memory gzip stream (a .json.gz member of an archive); `name` is for messages.
Status GunzipBuffer(const char* data, size_t size, const std::string& name, PaddedText* out);

}  // namespace lumos::modeler::io
