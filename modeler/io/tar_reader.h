// Design: a minimal streaming tar reader (POSIX ustar, GNU and pax extensions) over a
// ByteSource, so a .tar.gz of per-rank traces is read member by member without unpacking it
// to disk or holding the whole archive in memory. It yields regular files only; directories,
// links, devices and metadata entries are skipped. Long names come from GNU 'L' entries and pax
// 'path' records; sizes may be octal or GNU base-256. Every header checksum is verified and
// every error names the archive and the byte offset in its (uncompressed) tar stream.
// Threading: one reader per thread.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "modeler/io/byte_source.h"

namespace lumos::modeler::io {

inline constexpr size_t kTarBlock = 512;

// True when `block` (kTarBlock bytes) is a tar header with a valid checksum.
bool IsTarHeader(const char* block);

struct TarEntry {
  std::string name;
  uint64_t size = 0;
  uint64_t header_offset = 0;  // Of the entry's own header in the tar stream.
};

class TarReader {
 public:
  // `first_block` holds the first kTarBlock bytes already taken from `source` (the caller
  // sniffed them to recognise the archive).
  TarReader(ByteSource* source, std::string first_block)
      : source_(source), pending_block_(std::move(first_block)) {}

  // Moves to the next regular file; false at the end of the archive. Skips what is left of
  // the current entry's body.
  StatusOr<bool> Next(TarEntry* entry);
  // Reads the current entry's body (once, right after Next).
  Status ReadBody(PaddedText* out);

 private:
  Status ReadBlock(char* block, bool* end);
  Status Skip(uint64_t bytes);
  Status ReadLongValue(uint64_t size, std::string* out);
  std::string Where(uint64_t offset) const;

  ByteSource* source_;
  std::string pending_block_;
  uint64_t offset_ = 0;        // Tar-stream bytes consumed.
  uint64_t body_left_ = 0;     // Unread body bytes of the current entry.
  uint64_t body_padding_ = 0;  // Zero bytes after the body, up to the next block.
};

}  // namespace lumos::modeler::io
