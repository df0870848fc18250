// Design: the events of one frame as plain structs, the form the modeler works on (and the
// form the writer takes: schema/writer/trace_events.h, so a trace read back compares equal to
// what was written). The frequent kinds are decoded by hand from schema-2 column packets, or
// converted from schema-1 row packets; everything else (header, clock snapshots,
// communicators, capture windows, loss, threads, trailer) stays a parsed TracePacket row.
// Lifetime: string_views point into the reader's InternTable and row packets into its arena;
// both are valid only during the FrameCallback that receives the FrameEvents.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "schema/lumos/trace.pb.h"
#include "schema/writer/trace_events.h"

namespace lumos::modeler {

namespace pb = ::lumos::trace;

// Allocator of the decoded event lists: resize() leaves new events for the decoder, which
// assigns every field, instead of zeroing them first (that second write of every event cost
// ~10% of read + decode). The event structs are aggregates, so allocated storage holds them
// without a constructor call (C++20 implicit object creation).
template <typename T>
struct DecoderAllocator : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <typename U>
  struct rebind {
    using other = DecoderAllocator<U>;
  };
  template <typename U>
  void construct(U*) noexcept {}  // resize(n): filled by the decoder.
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <typename Event>
using EventList = std::vector<Event, DecoderAllocator<Event>>;

struct RowPacket {
  const pb::TracePacket* packet = nullptr;
  int64_t start_ns = 0;  // Absolute start; meaningful when packet->has_start_delta_ns().
};

struct FrameEvents {
  uint64_t frame_index = 0;   // 0-based in file order.
  uint64_t frame_offset = 0;  // Byte offset of the frame in the file.
  // Within a kind, events keep the order they were written in.
  EventList<schema::KernelEvent> kernels;
  EventList<schema::ApiCallEvent> api_calls;
  EventList<schema::MemcpyEvent> memcpys;
  EventList<schema::MemsetEvent> memsets;
  EventList<schema::SyncEvent> syncs;
  EventList<schema::CudaEventRecordEvent> cuda_events;
  EventList<schema::NvtxEvent> nvtx;
  EventList<schema::HostRangeEvent> host_ranges;
  EventList<schema::CollectiveEvent> collectives;
  EventList<schema::GemmCallEvent> gemm_calls;  // Schema 2.2.
  std::vector<RowPacket> rows;                  // In file order.

  // Events of the frequent kinds.
  uint64_t column_events() const {
    return kernels.size() + api_calls.size() + memcpys.size() + memsets.size() + syncs.size() +
           cuda_events.size() + nvtx.size() + host_ranges.size() + collectives.size() +
           gemm_calls.size();
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
    gemm_calls.clear();
    rows.clear();
  }
};

}  // namespace lumos::modeler
