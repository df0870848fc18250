// Design: turns ring records into the trace writer's events, on the writer thread. The To*Event
// functions are pure conversions of one event (a head record and its extension, nullptr when it
// has none); RecordEncoder dispatches on the kind, feeds a TraceFileWriter and counts records it
// cannot decode (unknown kind, a stray extension) instead of failing: a bad record is lost data,
// never a crash. Widths grow back to the writer's (u32 correlation ids to u64, ...), string ids
// resolve through the StringTable, and missing extensions read as "not known".
// Threading: the writer thread; the returned events' names are views valid until the next call
// (they point into the record, the string table or the encoder's scratch buffer).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/core/record.h"
#include "agent/core/thread_rings.h"
#include "schema/writer/trace_events.h"

namespace lumos::schema {
class TraceFileWriter;
}  // namespace lumos::schema

namespace lumos::agent {

class StringTable;

schema::ApiCallEvent ToApiCallEvent(const Record& head, const Record* extension,
                                    const StringTable& strings);
schema::KernelEvent ToKernelEvent(const Record& head, const Record* extension,
                                  const StringTable& strings);
schema::MemcpyEvent ToMemcpyEvent(const Record& head, const Record* extension);
schema::MemsetEvent ToMemsetEvent(const Record& head, const Record* extension);
schema::SyncEvent ToSyncEvent(const Record& head, const Record* extension);
schema::CudaEventRecordEvent ToCudaEventRecordEvent(const Record& head, const Record* extension);
schema::CollectiveEvent ToCollectiveEvent(const Record& head, const Record* extension);
schema::GemmCallEvent ToGemmCallEvent(const Record& head, const Record* extension);
schema::CommunicatorEvent ToCommunicatorEvent(const Record& head, const StringTable& strings);
// Inline text is viewed in place; truncated text is copied to *scratch with "..." appended.
schema::NvtxEvent ToNvtxEvent(const Record& head, const Record* extension,
                              const StringTable& strings, std::string* scratch);
// LOSS_SOURCE_RING_FULL for one ring's drops.
schema::LossEvent ToLossEvent(const RingDropReport& report);

class RecordEncoder {
 public:
  // Both must outlive the encoder.
  RecordEncoder(const StringTable* strings, schema::TraceFileWriter* writer)
      : strings_(strings), writer_(writer) {}

  // Adds one event. False (and counted) when the records cannot be decoded.
  bool Add(const Record& head, const Record* extension);
  // Adds one LossRecord per report.
  void AddDrops(const std::vector<RingDropReport>& reports);

  uint64_t events() const { return events_; }
  uint64_t malformed() const { return malformed_; }

 private:
  const StringTable* strings_;
  schema::TraceFileWriter* writer_;
  std::string scratch_;  // Truncated NVTX names; reused, so no allocation per event.
  uint64_t events_ = 0;
  uint64_t malformed_ = 0;
};

}  // namespace lumos::agent
