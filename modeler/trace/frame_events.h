// Design: the events of one frame as plain structs, the form the modeler works on (and the
// form the writer takes: agent/writer/trace_events.h, so a trace read back compares equal to
// what was written). The frequent kinds are decoded by hand from schema-2 column packets, or
// converted from schema-1 row packets; everything else (header, clock snapshots,
// communicators, capture windows, loss, threads, trailer) stays a parsed TracePacket row.
// Lifetime: string_views point into the reader's InternTable and row packets into its arena;
// both are valid only during the FrameCallback that receives the FrameEvents.
#pragma once

#include <cstdint>
#include <vector>

#include "agent/writer/trace_events.h"
#include "schema/lumos/trace.pb.h"

namespace lumos::modeler {

namespace pb = ::lumos::trace;

struct RowPacket {
  const pb::TracePacket* packet = nullptr;
  int64_t start_ns = 0;  // Absolute start; meaningful when packet->has_start_delta_ns().
};

struct FrameEvents {
  uint64_t frame_index = 0;   // 0-based in file order.
  uint64_t frame_offset = 0;  // Byte offset of the frame in the file.
  // Within a kind, events keep the order they were written in.
  std::vector<agent::KernelEvent> kernels;
  std::vector<agent::ApiCallEvent> api_calls;
  std::vector<agent::MemcpyEvent> memcpys;
  std::vector<agent::MemsetEvent> memsets;
  std::vector<agent::SyncEvent> syncs;
  std::vector<agent::CudaEventRecordEvent> cuda_events;
  std::vector<agent::NvtxEvent> nvtx;
  std::vector<agent::HostRangeEvent> host_ranges;
  std::vector<agent::CollectiveEvent> collectives;
  std::vector<RowPacket> rows;  // In file order.

  // Events of the frequent kinds.
  uint64_t column_events() const {
    return kernels.size() + api_calls.size() + memcpys.size() + memsets.size() + syncs.size() +
           cuda_events.size() + nvtx.size() + host_ranges.size() + collectives.size();
  }
  void Clear() {
    kernels.clear();
    api_calls.clear();
    memcpys.clear();
    memsets.clear();
    syncs.clear();
    cuda_events.clear();
    nvtx.clear();
    host_ranges.clear();
    collectives.clear();
    rows.clear();
  }
};

}  // namespace lumos::modeler
