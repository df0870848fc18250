// Design: converts between the plain event structs (schema/writer/trace_events.h, used in
// FrameEvents) and the row packets of trace.proto, for the nine frequent kinds:
//   * AppendEventFromPacket: schema-1 row packet (ids already absolute) -> struct appended to
//     the FrameEvents vector of its kind; names resolved through the frame's InternTable.
//   * EventToPacket: struct -> row packet, so TraceReader::ReadPackets can hand schema-2 column
//     events to code written against packets (names as iids of the same InternTable).
// Both are exact inverses for every field (tests/modeler/trace/event_packets_test.cc).
#pragma once

#include <cstdint>

#include "modeler/trace/frame_events.h"
#include "modeler/trace/intern_table.h"

namespace lumos::modeler {

// Appends the event held by `packet` (start time `start_ns`) to `out` and returns true; returns
// false, appending nothing, when the packet is not one of the frequent kinds.
bool AppendEventFromPacket(const pb::TracePacket& packet, int64_t start_ns,
                           const InternTable& strings, FrameEvents* out);

// Fills `packet` (cleared first) with the row form of the event. start_delta_ns is set to
// `start_delta_ns`; ids are absolute; names become strings.IidOf(name).
void EventToPacket(const schema::KernelEvent& e, const InternTable& strings, int64_t start_delta_ns,
                   pb::TracePacket* packet);
void EventToPacket(const schema::ApiCallEvent& e, const InternTable& strings,
                   int64_t start_delta_ns, pb::TracePacket* packet);
void EventToPacket(const schema::MemcpyEvent& e, const InternTable& strings, int64_t start_delta_ns,
                   pb::TracePacket* packet);
void EventToPacket(const schema::MemsetEvent& e, const InternTable& strings, int64_t start_delta_ns,
                   pb::TracePacket* packet);
void EventToPacket(const schema::SyncEvent& e, const InternTable& strings, int64_t start_delta_ns,
                   pb::TracePacket* packet);
void EventToPacket(const schema::CudaEventRecordEvent& e, const InternTable& strings,
                   int64_t start_delta_ns, pb::TracePacket* packet);
void EventToPacket(const schema::NvtxEvent& e, const InternTable& strings, int64_t start_delta_ns,
                   pb::TracePacket* packet);
void EventToPacket(const schema::HostRangeEvent& e, const InternTable& strings,
                   int64_t start_delta_ns, pb::TracePacket* packet);
void EventToPacket(const schema::CollectiveEvent& e, const InternTable& strings,
                   int64_t start_delta_ns, pb::TracePacket* packet);
void EventToPacket(const schema::GemmCallEvent& e, const InternTable& strings,
                   int64_t start_delta_ns, pb::TracePacket* packet);

}  // namespace lumos::modeler
