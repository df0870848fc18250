// Design: reads one Lumos trace file as a stream of packets without loading the whole file:
// a sliding window over the file yields one zstd frame at a time, which is decompressed and
// split into TracePackets (libprotobuf, on an arena reset per frame). The reader applies the
// per-frame incremental state (interned strings, start-time deltas) and hands each packet with
// its absolute start time to a callback.
// Failure behaviour: Open() rejects files that are not Lumos traces (empty, wrong magic, newer
// schema major, no readable header) with one message naming the file and byte offset.
// ReadPackets() delivers every packet of every intact frame; a damaged tail (truncated or
// corrupted frame, malformed packet) stops the stream and is reported in ReadResult::damage,
// naming file and byte offset. Nothing here aborts or loops on bad input.
// Threading: one reader per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "schema/lumos/trace.pb.h"

namespace lumos::modeler {

namespace pb = ::lumos::trace;

// Strings interned in the current frame, by iid.
class InternTable {
 public:
  void Clear() { strings_.clear(); }
  Status Set(uint64_t iid, const std::string& value);
  // The string for iid, or "" when iid is 0 or was never defined in this frame.
  std::string_view Get(uint64_t iid) const {
    return iid < strings_.size() ? std::string_view(strings_[iid]) : std::string_view();
  }

 private:
  std::vector<std::string> strings_;
};

struct PacketContext {
  int64_t start_ns = 0;       // Absolute start; meaningful when packet.has_start_delta_ns().
  uint64_t frame_index = 0;   // Frame of this packet, 0-based in file order.
  uint64_t frame_offset = 0;  // Byte offset of that frame in the file.
  const InternTable* strings = nullptr;
  std::string_view String(uint64_t iid) const { return strings->Get(iid); }
};

// Return a non-OK status to stop reading (it is passed back from ReadPackets).
using PacketCallback = std::function<Status(const pb::TracePacket&, const PacketContext&)>;

struct ReadResult {
  uint64_t frames = 0;      // Intact frames read.
  uint64_t packets = 0;     // Packets delivered.
  uint64_t bytes_read = 0;  // File bytes covered by intact frames (incl. preamble).
  uint64_t file_bytes = 0;
  bool has_trailer = false;  // The writer closed the file cleanly.
  pb::Trailer trailer;
  Status damage;  // OK, or what is wrong with the tail and where.
};

class TraceReader {
 public:
  // Limits that keep hostile input from exhausting memory.
  static constexpr uint64_t kMaxFrameBytes = 256ull << 20;       // Compressed.
  static constexpr uint64_t kMaxFrameContentBytes = 1ull << 30;  // Decompressed.

  static StatusOr<std::unique_ptr<TraceReader>> Open(const std::string& path);
  ~TraceReader();

  const std::string& path() const { return path_; }
  const pb::TraceHeader& header() const { return header_; }
  uint64_t file_bytes() const { return file_bytes_; }

  // Streams all packets from the start of the file (the header packet included). Returns the
  // callback's error if it stops the stream; damage is reported in `result`, not as an error.
  Status ReadPackets(const PacketCallback& callback, ReadResult* result);

 private:
  TraceReader(std::string path, int fd, uint64_t file_bytes);
  struct Impl;
  std::string path_;
  int fd_ = -1;
  uint64_t file_bytes_ = 0;
  pb::TraceHeader header_;
};

// Reads every packet of `path` into memory (tests and small tools).
StatusOr<std::vector<pb::TracePacket>> ReadAllPackets(const std::string& path,
                                                      ReadResult* result = nullptr);

}  // namespace lumos::modeler
