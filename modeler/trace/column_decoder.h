// Design: decodes the schema-2 `*Columns` packets (schema/lumos/trace.proto, "Columnar
// frames") by hand, without libprotobuf. A column holding a single value (count > 1) is
// constant and costs nothing per event. Events go in blocks of kBlock: each present column
// decodes its next kBlock varints (tight loop; deltas undone on the way) into a small array
// that stays in cache, then one loop per kind assembles the plain event structs of
// FrameEvents. Whole-packet column arrays were 1 MiB each and made the decoder memory-bound.
// This is the reader's hot path (docs/performance.md: read + decode).
// Failure behaviour: a malformed packet (bad varint, a column whose length disagrees with
// `count`, a missing start column, more events than the frame may hold) returns an error naming
// the kind and the column; nothing is appended then (events of earlier blocks are taken back).
// Unknown fields (later minor versions) are skipped. Threading: one decoder per reader.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "base/status.h"
#include "modeler/trace/frame_events.h"
#include "modeler/trace/intern_table.h"

namespace lumos::modeler {

class ColumnDecoder {
 public:
  // True for TracePacket field numbers that hold *Columns messages.
  static bool IsColumnsField(uint32_t packet_field);

  // Decodes the *Columns message in [data, data + size) held by TracePacket field
  // `packet_field` and appends its events to `out`. Start times are restored from
  // base_time_ns (the frame's FramePacket.base_time_ns), names through `strings`. A packet of
  // more than `max_events` events (what the frame may still hold, see
  // TraceReader::kMaxFramePackets) is an error.
  Status Decode(uint32_t packet_field, const uint8_t* data, size_t size, int64_t base_time_ns,
                uint64_t max_events, const InternTable& strings, FrameEvents* out);

 private:
  static constexpr uint32_t kMaxColumn = 42;  // Fields 1..41 (see column_field in format.h).
  static constexpr size_t kBlock = 128;

  struct Column {
    bool present = false;
    bool constant = false;          // One stored value for all events (see trace.proto).
    bool delta = false;             // A *_delta column: values are summed on the way.
    uint64_t value = 0;             // Constant columns: the stored value.
    const uint8_t* next = nullptr;  // Next undecoded byte of the packed values.
    const uint8_t* end = nullptr;
    uint64_t last = 0;  // Delta columns: the previous value.
  };

  Status Split(const uint8_t* data, size_t size, uint64_t max_events);
  // Marks the kind's delta-coded columns (an absent one reads as zeros like any other).
  void Delta(std::initializer_list<uint32_t> fields) {
    for (uint32_t f : fields) columns_[f].delta = true;
  }
  uint64_t* Block(uint32_t field) { return blocks_.data() + field * kBlock; }
  // The block of a column; absent columns read as zeros.
  const uint64_t* Values(uint32_t field) { return columns_[field].present ? Block(field) : kZeros; }
  // Decodes the next m values of every present column into its block.
  Status DecodeBlock(size_t m);
  Status CheckConsumed() const;

  // Appends count_ events to `list`, block by block; assemble(list, m) appends m of them
  // from the blocks. On error the list is restored.
  template <typename Event, typename Assemble>
  Status DecodeKind(EventList<Event>* list, Assemble assemble) {
    size_t first = list->size();
    // Events are written once, in place: EventList's resize() does not zero them (see
    // DecoderAllocator), and assemble() sets every field. Building each event on the stack to
    // push it stalled on store forwarding instead (perf, BM_ReadFrames).
    list->resize(first + count_);
    Event* events = list->data() + first;
    Status status;
    for (size_t b = 0; b < count_ && status.ok(); b += kBlock) {
      size_t m = std::min<size_t>(kBlock, count_ - b);
      status = DecodeBlock(m);
      if (status.ok()) assemble(events + b, m);
    }
    if (status.ok()) status = CheckConsumed();
    if (!status.ok()) list->resize(first);
    return status;
  }

  static constexpr uint64_t kZeros[kBlock] = {};
  const char* kind_ = "";
  uint64_t count_ = 0;
  uint32_t duration_field_ = 0;  // The kind's duration_ns column (0: none, CUDA events).
  uint64_t previous_end_ = 0;    // End of the previous event of the kind.
  Column columns_[kMaxColumn];
  uint32_t present_[kMaxColumn] = {};  // Fields of the present columns, ascending.
  size_t present_count_ = 0;
  std::vector<uint64_t> blocks_;  // kMaxColumn blocks of kBlock values.
};

}  // namespace lumos::modeler
