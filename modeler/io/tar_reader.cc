#include "modeler/io/tar_reader.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace lumos::modeler::io {
namespace {

// Offsets of the ustar header fields used here.
constexpr size_t kNameOffset = 0, kNameSize = 100;
constexpr size_t kSizeOffset = 124, kSizeSize = 12;
constexpr size_t kChecksumOffset = 148, kChecksumSize = 8;
constexpr size_t kTypeOffset = 156;
constexpr size_t kMagicOffset = 257;
constexpr size_t kPrefixOffset = 345, kPrefixSize = 155;
// Bound on metadata bodies (long names, pax records), so a hostile header cannot make us
// allocate gigabytes for a name.
constexpr uint64_t kMaxMetadataBytes = 1 << 20;

unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

// Parses an octal field (NUL/space padded) or a GNU base-256 field (high bit set).
bool ParseNumber(const char* field, size_t size, uint64_t* value) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(field);
  *value = 0;
  if (bytes[0] & 0x80) {
    if (bytes[0] == 0xff) return false;  // Negative.
    uint64_t v = bytes[0] & 0x7f;
    for (size_t i = 1; i < size; ++i) {
      if (v >> 56) return false;
      v = v << 8 | bytes[i];
    }
    *value = v;
    return true;
  }
  size_t i = 0;
  while (i < size && (field[i] == ' ' || field[i] == '\0')) ++i;
  uint64_t v = 0;
  bool any = false;
  for (; i < size && field[i] >= '0' && field[i] <= '7'; ++i) {
    if (v >> 60) return false;
    v = v * 8 + static_cast<uint64_t>(field[i] - '0');
    any = true;
  }
  for (; i < size; ++i) {
    if (field[i] != ' ' && field[i] != '\0') return false;
  }
  *value = any ? v : 0;
  return true;
}

bool ParseDecimal(std::string_view text, uint64_t* value) {
  if (text.empty() || text.size() > 18) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *value = v;
  return true;
}

std::string FieldString(const char* field, size_t size) {
  return std::string(field, strnlen(field, size));
}

bool AllZero(const char* block) {
  return std::all_of(block, block + kTarBlock, [](char c) { return c == 0; });
}

}  // namespace

bool IsTarHeader(const char* block) {
  if (std::memcmp(block + kMagicOffset, "ustar", 5) != 0) return false;
  uint64_t expected = 0;
  if (!ParseNumber(block + kChecksumOffset, kChecksumSize, &expected)) return false;
  // The checksum counts its own field as spaces; old tars summed signed chars.
  uint64_t unsigned_sum = 0;
  int64_t signed_sum = 0;
  for (size_t i = 0; i < kTarBlock; ++i) {
    bool in_field = i >= kChecksumOffset && i < kChecksumOffset + kChecksumSize;
    char c = in_field ? ' ' : block[i];
    unsigned_sum += static_cast<unsigned char>(c);
    signed_sum += static_cast<signed char>(c);
  }
  return expected == unsigned_sum || static_cast<int64_t>(expected) == signed_sum;
}

std::string TarReader::Where(uint64_t offset) const {
  return source_->path() + " (tar byte " + std::to_string(offset) + ")";
}

Status TarReader::ReadBlock(char* block, bool* end) {
  *end = false;
  size_t got = 0;
  if (!pending_block_.empty()) {
    got = std::min(pending_block_.size(), kTarBlock);
    std::memcpy(block, pending_block_.data(), got);
    pending_block_.clear();
  }
  LUMOS_ASSIGN_OR_RETURN(size_t n, ReadFully(source_, block + got, kTarBlock - got));
  got += n;
  if (got == 0) {
    *end = true;  // No end-of-archive blocks: accept, as GNU tar does.
    return Status::Ok();
  }
  if (got < kTarBlock) {
    return ErrorStatus("%s: archive truncated inside a header", Where(offset_).c_str());
  }
  offset_ += kTarBlock;
  return Status::Ok();
}

Status TarReader::Skip(uint64_t bytes) {
  char buffer[64 * 1024];
  while (bytes > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(bytes, sizeof(buffer)));
    LUMOS_ASSIGN_OR_RETURN(size_t n, ReadFully(source_, buffer, want));
    offset_ += n;
    if (n < want) return ErrorStatus("%s: archive truncated", Where(offset_).c_str());
    bytes -= n;
  }
  return Status::Ok();
}

Status TarReader::ReadLongValue(uint64_t size, std::string* out) {
  if (size > kMaxMetadataBytes) {
    return ErrorStatus("%s: metadata entry of %llu bytes is too large", Where(offset_).c_str(),
                       Ull(size));
  }
  out->resize(size);
  LUMOS_ASSIGN_OR_RETURN(size_t n, ReadFully(source_, out->data(), size));
  offset_ += n;
  if (n < size) return ErrorStatus("%s: archive truncated", Where(offset_).c_str());
  return Skip((kTarBlock - size % kTarBlock) % kTarBlock);
}

StatusOr<bool> TarReader::Next(TarEntry* entry) {
  LUMOS_RETURN_IF_ERROR(Skip(body_left_ + body_padding_));
  body_left_ = body_padding_ = 0;
  std::string long_name;
  bool has_size_override = false;
  uint64_t size_override = 0;
  char block[kTarBlock];
  while (true) {
    uint64_t header_offset = offset_;
    bool end = false;
    LUMOS_RETURN_IF_ERROR(ReadBlock(block, &end));
    if (end || AllZero(block)) return false;
    if (!IsTarHeader(block)) {
      return ErrorStatus("%s: not a valid tar header (bad magic or checksum)",
                         Where(header_offset).c_str());
    }
    uint64_t size = 0;
    if (!ParseNumber(block + kSizeOffset, kSizeSize, &size)) {
      return ErrorStatus("%s: bad size field in tar header", Where(header_offset).c_str());
    }
    char type = block[kTypeOffset];
    if (type == 'L') {  // GNU long name for the next entry.
      LUMOS_RETURN_IF_ERROR(ReadLongValue(size, &long_name));
      long_name.resize(strnlen(long_name.data(), long_name.size()));
      continue;
    }
    if (type == 'x') {  // pax extended header for the next entry: "LEN key=value\n" records.
      std::string records;
      LUMOS_RETURN_IF_ERROR(ReadLongValue(size, &records));
      std::string_view rest(records);
      while (!rest.empty()) {
        size_t space = rest.find(' ');
        uint64_t length = 0;
        if (space == std::string_view::npos || !ParseDecimal(rest.substr(0, space), &length) ||
            length < space + 2 || length > rest.size()) {
          return ErrorStatus("%s: malformed pax record", Where(header_offset).c_str());
        }
        std::string_view record = rest.substr(space + 1, length - space - 2);  // Drop '\n'.
        rest.remove_prefix(length);
        size_t equals = record.find('=');
        if (equals == std::string_view::npos) continue;
        std::string_view key = record.substr(0, equals), value = record.substr(equals + 1);
        if (key == "path") long_name = std::string(value);
        if (key == "size" && ParseDecimal(value, &size_override)) has_size_override = true;
      }
      continue;
    }
    if (has_size_override) size = size_override;
    uint64_t padding = (kTarBlock - size % kTarBlock) % kTarBlock;
    bool regular = type == '0' || type == '\0' || type == '7';
    if (!regular) {  // Directories, links, global pax headers, devices: nothing to import.
      LUMOS_RETURN_IF_ERROR(Skip(size + padding));
      long_name.clear();
      has_size_override = false;
      continue;
    }
    if (!long_name.empty()) {
      entry->name = long_name;
    } else {
      entry->name = FieldString(block + kPrefixOffset, kPrefixSize);
      if (!entry->name.empty()) entry->name += '/';
      entry->name += FieldString(block + kNameOffset, kNameSize);
    }
    entry->size = size;
    entry->header_offset = header_offset;
    body_left_ = size;
    body_padding_ = padding;
    return true;
  }
}

Status TarReader::ReadBody(PaddedText* out) {
  // Read in chunks rather than trusting the declared size with one allocation.
  constexpr uint64_t kChunk = 16 << 20;
  out->Resize(0);
  out->Reserve(static_cast<size_t>(std::min<uint64_t>(body_left_, 256ull << 20)));
  while (body_left_ > 0) {
    size_t want = static_cast<size_t>(std::min(body_left_, kChunk));
    size_t old = out->size();
    out->Resize(old + want);
    LUMOS_ASSIGN_OR_RETURN(size_t n, ReadFully(source_, out->data() + old, want));
    out->Resize(old + n);
    offset_ += n;
    body_left_ -= n;
    if (n < want) {
      return ErrorStatus("%s: archive truncated inside an entry (%llu bytes missing)",
                         Where(offset_).c_str(), Ull(body_left_));
    }
  }
  return Status::Ok();
}

}  // namespace lumos::modeler::io
