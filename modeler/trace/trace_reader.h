// Design: reads one Lumos trace file without loading the whole file: a sliding window over the
// file yields one zstd frame at a time, which is decompressed and walked packet by packet.
// Two ways to consume it:
//   * ReadFrames (the fast path, schema 2): each frame's events as plain structs
//     (FrameEvents); column packets are decoded by hand (ColumnDecoder), only rare row packets
//     go through libprotobuf. Schema-1 row events are converted to the same structs.
//   * ReadPackets (compatibility): one TracePacket per event, as schema 1 wrote them; schema-2
//     column entries are turned back into row packets (absolute ids, context.start_ns set).
// Both apply the per-frame incremental state (interned strings, time and id deltas).
// Failure behaviour: Open() rejects files that are not Lumos traces (empty, wrong magic, a
// schema major it cannot read, no readable header) with one message naming the file and byte
// offset. Damage (a truncated or corrupted frame, a malformed packet, a frame larger than the
// format allows) is skipped: what precedes it in its frame is delivered, reading resumes at the
// next frame (at the next zstd magic number when the damaged frame's size is unreadable), and
// ReadResult::damage names the first place (file, byte offset, frame), counts the rest and the
// events lost. Data after the trailer is damage too, and is not read. Nothing here aborts or
// loops on bad input, and nothing blocks: only regular files are opened (base/input_file.h).
// Memory is bounded per frame, never by the file: the compressed frame (kMaxFrameBytes), its
// content (kMaxFrameContentBytes, refused from the size the frame declares before any
// allocation, or counted through a scratch buffer when it declares none), its events
// (kMaxFramePackets, kMaxFrameColumnEvents) and its interned strings (by count, not iid).
// The whole file's decompressed size is not bounded by a ratio to its size: that would only
// bound time, which stays linear in what the frames hold, and a sound trace of regular events
// already compresses 1260:1 (20M identical kernels: 57 MiB in 46 KB), with nothing in the
// format keeping it below zstd's own ceiling (32768:1, RLE blocks).
// Threading: one reader per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "modeler/trace/frame_events.h"
#include "modeler/trace/intern_table.h"
#include "schema/format.h"
#include "schema/lumos/trace.pb.h"

namespace lumos::modeler {

namespace pb = ::lumos::trace;

struct PacketContext {
  int64_t start_ns = 0;       // Absolute start; meaningful when packet.has_start_delta_ns().
  uint64_t frame_index = 0;   // Frame of this packet, 0-based in file order.
  uint64_t frame_offset = 0;  // Byte offset of that frame in the file.
  const InternTable* strings = nullptr;
  std::string_view String(uint64_t iid) const { return strings->Get(iid); }
};

// Return a non-OK status to stop reading (it is passed back from ReadPackets/ReadFrames).
using PacketCallback = std::function<Status(const pb::TracePacket&, const PacketContext&)>;
using FrameCallback = std::function<Status(const FrameEvents&)>;

struct ReadResult {
  uint64_t frames = 0;  // Intact frames read.
  // Packets read, counting each event of a column packet as one packet (what ReadPackets
  // delivers; the same count for ReadFrames).
  uint64_t packets = 0;
  uint64_t stored_packets = 0;  // Packets as stored in the file (a column packet counts once).
  uint64_t events = 0;          // Timed events (column entries and timed row packets).
  uint64_t bytes_read = 0;      // File bytes up to the end of the last frame read or skipped.
  uint64_t file_bytes = 0;
  bool has_trailer = false;  // A trailer was read (the writer closed the file).
  pb::Trailer trailer;
  // OK, or what is damaged and where: the first damaged place (offset, frame, why), how many
  // more, how many intact frames were read and how many events were lost (from the trailer's
  // count when it survived). Each damaged place is skipped and reading goes on at the next frame.
  Status damage;
  uint64_t damaged_places = 0;      // Damaged frames or runs of bytes no frame starts in.
  bool only_after_trailer = false;  // The one damage is data after the trailer: nothing lost.
  static constexpr size_t kMaxDamageNotes = 16;
  std::vector<std::string>
      damage_notes;  // The first kMaxDamageNotes places, "FILE at byte N: why".
  // The file ends with its trailer: anything after it (even a valid frame) is damage.
  bool closed_cleanly() const { return has_trailer && damage.ok(); }
};

class TraceReader {
 public:
  // Limits that keep hostile input from exhausting memory.
  // Decompressed: the format's limit (schema/format.h), checked against the size a frame
  // declares before anything is allocated for it.
  static constexpr uint64_t kMaxFrameContentBytes = schema::kMaxFrameContentBytes;
  // Compressed: what zstd needs at most for that much content (incompressible data).
  static constexpr uint64_t kMaxFrameBytes = kMaxFrameContentBytes + (kMaxFrameContentBytes >> 7);
  // Packets of one frame, counting each column entry as one (ReadResult::packets): the format's
  // limit (schema/format.h). ReadFrames holds a frame's events as ~140-byte structs and its rows
  // as parsed messages; without it a small hostile file asks for 100+ GB.
  static constexpr uint64_t kMaxFramePackets = schema::kMaxFramePackets;
  // Events of the column packets of one frame: what a writer puts in a frame at most
  // (schema::kMaxFrameEventsWritten). Each costs ~140 bytes decoded however few it took in the
  // file: 4M constant kernels (the packet limit) fit in a 3.6 KB file and took 1.1 GB to inspect.
  static constexpr uint64_t kMaxFrameColumnEvents = schema::kMaxFrameEventsWritten;

  static StatusOr<std::unique_ptr<TraceReader>> Open(const std::string& path);
  ~TraceReader();

  const std::string& path() const { return path_; }
  const pb::TraceHeader& header() const { return header_; }
  uint64_t file_bytes() const { return file_bytes_; }

  // Schema major of the file (from its preamble).
  uint32_t schema_major() const { return schema_major_; }

  // Streams all packets from the start of the file (the header packet included). Returns the
  // callback's error if it stops the stream; damage is reported in `result`, not as an error.
  Status ReadPackets(const PacketCallback& callback, ReadResult* result);
  // Streams the file frame by frame as plain event structs (the header is a row of the first
  // frame). Same stopping and damage rules; a damaged frame delivers what precedes the damage.
  Status ReadFrames(const FrameCallback& callback, ReadResult* result);

 private:
  TraceReader(std::string path, int fd, uint64_t file_bytes);
  Status Read(const PacketCallback* packets, const FrameCallback* frames, ReadResult* result);
  std::string path_;
  int fd_ = -1;
  uint64_t file_bytes_ = 0;
  uint32_t schema_major_ = 0;
  pb::TraceHeader header_;
};

// Whether `path` opens as a Lumos trace whose header names `producer`: import's and synth's
// outputs are theirs to replace (io::ReplacePolicy::own_trace); an agent's trace never is.
bool TraceMadeBy(const std::string& path, pb::Producer producer);

// Reads every packet of `path` into memory (tests and small tools).
StatusOr<std::vector<pb::TracePacket>> ReadAllPackets(const std::string& path,
                                                      ReadResult* result = nullptr);

}  // namespace lumos::modeler
