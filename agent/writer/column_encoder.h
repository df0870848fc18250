// Design: the columnar half of a schema-2 frame (schema/lumos/trace.proto, "Columnar
// frames"). The frequent event kinds are kept as plain structs while the frame fills (one copy
// per event, names already interned by the caller) and are turned into one `*Columns` packet
// per kind when the frame is taken: each column is a tight loop over the events of a kind
// writing packed varints, so times and ids of one kind sit next to each other and compress
// well. An all-zero column is left out.
// Single-threaded: part of the PacketEncoder, owned by the writer thread. Nothing allocates per
// event once the vectors have grown to a frame's working size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "agent/writer/trace_events.h"
#include "agent/writer/wire_buffer.h"

namespace lumos::agent {

// The string_views inside the stored events dangle once Add() returns; only the iids passed
// alongside are used.
class ColumnEncoder {
 public:
  static constexpr uint32_t kMaxColumn = 42;  // Column fields are 1..41 (schema/format.h).

  // Interned ids of an event's strings (0 = empty).
  void Add(const KernelEvent& e, uint64_t name_iid) {
    ++events_;
    kernels_.push_back(e);
    kernel_names_.push_back(name_iid);
  }
  void Add(const ApiCallEvent& e, uint64_t name_iid) {
    ++events_;
    api_calls_.push_back(e);
    api_call_names_.push_back(name_iid);
  }
  void Add(const MemcpyEvent& e) {
    ++events_;
    memcpys_.push_back(e);
  }
  void Add(const MemsetEvent& e) {
    ++events_;
    memsets_.push_back(e);
  }
  void Add(const SyncEvent& e) {
    ++events_;
    syncs_.push_back(e);
  }
  void Add(const CudaEventRecordEvent& e) {
    ++events_;
    cuda_events_.push_back(e);
  }
  void Add(const NvtxEvent& e, uint64_t name_iid, uint64_t domain_iid) {
    ++events_;
    nvtx_.push_back(e);
    nvtx_names_.push_back(name_iid);
    nvtx_domains_.push_back(domain_iid);
  }
  void Add(const HostRangeEvent& e, uint64_t name_iid) {
    ++events_;
    host_ranges_.push_back(e);
    host_range_names_.push_back(name_iid);
  }
  void Add(const CollectiveEvent& e) {
    ++events_;
    collectives_.push_back(e);
  }

  // Events waiting, and an estimate of their encoded size (before compression).
  uint64_t events() const { return events_; }
  uint64_t packets() const;  // Kinds with events: the packets EncodeAndClear will write.
  size_t estimated_bytes() const;

  // Appends one TracePacket per kind that has events to `out`; start times are coded from
  // base_time_ns (the frame's FramePacket.base_time_ns). Returns the packets written and
  // forgets the events.
  uint64_t EncodeAndClear(int64_t base_time_ns, WireBuffer* out);

 private:
  std::vector<KernelEvent> kernels_;
  std::vector<uint64_t> kernel_names_;
  std::vector<ApiCallEvent> api_calls_;
  std::vector<uint64_t> api_call_names_;
  std::vector<MemcpyEvent> memcpys_;
  std::vector<MemsetEvent> memsets_;
  std::vector<SyncEvent> syncs_;
  std::vector<CudaEventRecordEvent> cuda_events_;
  std::vector<NvtxEvent> nvtx_;
  std::vector<uint64_t> nvtx_names_;
  std::vector<uint64_t> nvtx_domains_;
  std::vector<HostRangeEvent> host_ranges_;
  std::vector<uint64_t> host_range_names_;
  std::vector<CollectiveEvent> collectives_;
  uint64_t events_ = 0;
  WireBuffer body_;                      // One *Columns message being built.
  WireBuffer column_bytes_[kMaxColumn];  // Its columns, by field number.
};

}  // namespace lumos::agent
