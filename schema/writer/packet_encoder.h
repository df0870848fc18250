// Design: encodes trace events into the current frame of schema 2 (schema/lumos/trace.proto):
// the frequent kinds as columns (ColumnEncoder), the rare ones as row packets whose start
// times are deltas from the previous row packet, strings interned once per frame.
// TakeFrame() returns the finished frame's bytes (FramePacket, the header if pending, interned
// strings, column packets, then row packets) and starts a new frame.
// Single-threaded: owned by the writer thread. Nothing here allocates per event once the
// buffers and the intern table have grown to a frame's working size.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "schema/writer/column_encoder.h"
#include "schema/writer/trace_events.h"
#include "schema/writer/wire_buffer.h"

namespace lumos::schema {

class PacketEncoder {
 public:
  PacketEncoder() = default;

  void Add(const KernelEvent& e);
  void Add(const ApiCallEvent& e);
  void Add(const MemcpyEvent& e);
  void Add(const MemsetEvent& e);
  void Add(const SyncEvent& e);
  void Add(const CudaEventRecordEvent& e);
  void Add(const NvtxEvent& e);
  void Add(const HostRangeEvent& e);
  void Add(const CollectiveEvent& e);
  void Add(const GemmCallEvent& e);
  void Add(const CommunicatorEvent& e);
  void Add(const CaptureWindowEvent& e);
  void Add(const LossEvent& e);
  void Add(const ThreadEvent& e);
  void AddClockSnapshot(const ClockReading* readings, size_t count);
  void AddHeader(const HeaderInfo& header);
  // Trailer fields are filled in by the caller (it knows the file-level totals).
  void AddTrailer(uint64_t packets_written, uint64_t frames_written, uint64_t events_dropped,
                  uint64_t end_time_ns, uint64_t events_written, const TrailerInfo& extra = {});

  // Bytes added since the last TakeFrame (columns estimated, see ColumnEncoder).
  size_t pending_bytes() const {
    return header_.size() + events_.size() + interned_.size() + columns_.estimated_bytes();
  }
  // Packets TakeFrame would write, without the FramePacket.
  uint64_t pending_packets() const { return packets_ + columns_.packets(); }
  bool empty() const { return packets_ == 0 && columns_.events() == 0; }

  // Writes the frame (FramePacket + interned strings + events) into `out` (cleared first),
  // resets the per-frame state and returns the number of packets in it (incl. FramePacket).
  uint64_t TakeFrame(WireBuffer* out);

 private:
  // Opens Trace.packet (+ start_delta_ns when timed) and the oneof field; returns the slots.
  struct Slots {
    size_t packet;
    size_t body;
  };
  Slots BeginPacket(uint32_t field, int64_t start_ns, size_t bound);
  Slots BeginUntimedPacket(uint32_t field, size_t bound);
  void EndPacket(Slots slots);
  void NoteTime(int64_t start_ns);  // Sets the frame's time base at its first event.
  uint64_t Intern(std::string_view value);

  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using InternMap = std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>>;
  InternMap::iterator AddInterned(std::string_view value);

  WireBuffer header_;  // The TraceHeader, when pending: always the frame's second packet.
  WireBuffer events_;  // Row packets.
  WireBuffer interned_;
  InternMap interned_ids_;  // Node-based: the key strings stay put until the frame ends.
  struct CacheEntry {
    const char* data = nullptr;           // Caller's pointer the name was last seen at.
    const std::string* stored = nullptr;  // The interned copy (a key of interned_ids_).
    uint64_t iid = 0;
  };
  static constexpr size_t kCacheEntries = 512;
  CacheEntry cache_[kCacheEntries];
  uint64_t next_iid_ = 1;
  uint64_t packets_ = 0;
  uint64_t frame_index_ = 0;
  ColumnEncoder columns_;
  bool frame_has_time_ = false;
  int64_t base_time_ns_ = 0;
  int64_t last_time_ns_ = 0;
};

}  // namespace lumos::schema
