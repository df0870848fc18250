// Design: the columnar half of a schema-2 frame (schema/lumos/trace.proto, "Columnar
// frames"): one `*Columns` packet per frequent kind (ten: schema 2.0's nine and, from 2.2, GEMM
// calls), each field a packed column, so times and ids of one kind sit next to each other and
// compress well. Events are kept as plain structs (one copy each, names already interned by the
// caller) in a chunk of kChunk per kind; a full chunk is encoded into the kind's column buffers
// at once (ColumnSet, block by block), so the structs are still in cache when the columns read
// them. TakeFrame's EncodeAndClear encodes what is left and writes the packets. Zero columns are
// left out, constant ones hold one value. Single-threaded: part of the PacketEncoder, owned by
// the writer thread. Nothing allocates per event once the buffers have grown to a frame's
// working size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "schema/writer/trace_events.h"
#include "schema/writer/wire_buffer.h"

namespace lumos::schema {

class ColumnSet;  // column_encoder.cc

// The string_views inside the stored events dangle once Add() returns; only the iids passed
// alongside are used.
class ColumnEncoder {
 public:
  static constexpr uint32_t kMaxColumn = 42;  // Column fields are 1..41 (schema/format.h).
  static constexpr size_t kChunk = 1024;      // Events per kind kept as structs (~140 KiB).

  ColumnEncoder();
  ~ColumnEncoder();
  ColumnEncoder(const ColumnEncoder&) = delete;
  ColumnEncoder& operator=(const ColumnEncoder&) = delete;

  // The frame's FramePacket.base_time_ns: set at its first event, before any Add().
  void SetFrameBase(int64_t base_time_ns) { base_time_ns_ = base_time_ns; }

  // Interned ids of an event's strings (0 = empty).
  void Add(const KernelEvent& e, uint64_t name_iid) {
    Note(0);
    kernels_.push_back(e);
    kernel_names_.push_back(name_iid);
    if (kernels_.size() == kChunk) EncodeKernels();
  }
  void Add(const ApiCallEvent& e, uint64_t name_iid) {
    Note(1);
    api_calls_.push_back(e);
    api_call_names_.push_back(name_iid);
    if (api_calls_.size() == kChunk) EncodeApiCalls();
  }
  void Add(const MemcpyEvent& e) {
    Note(2);
    memcpys_.push_back(e);
    if (memcpys_.size() == kChunk) EncodeMemcpys();
  }
  void Add(const MemsetEvent& e) {
    Note(3);
    memsets_.push_back(e);
    if (memsets_.size() == kChunk) EncodeMemsets();
  }
  void Add(const SyncEvent& e) {
    Note(4);
    syncs_.push_back(e);
    if (syncs_.size() == kChunk) EncodeSyncs();
  }
  void Add(const CudaEventRecordEvent& e) {
    Note(5);
    cuda_events_.push_back(e);
    if (cuda_events_.size() == kChunk) EncodeCudaEvents();
  }
  void Add(const NvtxEvent& e, uint64_t name_iid, uint64_t domain_iid) {
    Note(6);
    nvtx_.push_back(e);
    nvtx_names_.push_back(name_iid);
    nvtx_domains_.push_back(domain_iid);
    if (nvtx_.size() == kChunk) EncodeNvtx();
  }
  void Add(const HostRangeEvent& e, uint64_t name_iid) {
    Note(7);
    host_ranges_.push_back(e);
    host_range_names_.push_back(name_iid);
    if (host_ranges_.size() == kChunk) EncodeHostRanges();
  }
  void Add(const CollectiveEvent& e) {
    Note(8);
    collectives_.push_back(e);
    if (collectives_.size() == kChunk) EncodeCollectives();
  }
  void Add(const GemmCallEvent& e, uint64_t name_iid) {
    Note(9);
    gemm_calls_.push_back(e);
    gemm_call_names_.push_back(name_iid);
    if (gemm_calls_.size() == kChunk) EncodeGemmCalls();
  }

  // Events waiting, and an estimate of their encoded size (before compression).
  uint64_t events() const { return events_; }
  // Kinds with events: the packets EncodeAndClear will write.
  uint64_t packets() const { return static_cast<uint64_t>(__builtin_popcount(kinds_with_events_)); }
  size_t estimated_bytes() const;

  // Appends one TracePacket per kind that has events to `out`; start times are coded from
  // base_time_ns (the frame's FramePacket.base_time_ns). Returns the packets written and
  // forgets the events.
  uint64_t EncodeAndClear(int64_t base_time_ns, WireBuffer* out);

 private:
  static constexpr size_t kKinds = 10;
  void Note(unsigned kind) {
    ++events_;
    kinds_with_events_ |= 1u << kind;
  }
  ColumnSet& Set(size_t kind);  // Begins the kind's frame on its first use.
  void EncodePending();
  // Encode the pending chunk of one kind and clear it.
  void EncodeKernels();
  void EncodeApiCalls();
  void EncodeMemcpys();
  void EncodeMemsets();
  void EncodeSyncs();
  void EncodeCudaEvents();
  void EncodeNvtx();
  void EncodeHostRanges();
  void EncodeCollectives();
  void EncodeGemmCalls();

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
  std::vector<GemmCallEvent> gemm_calls_;
  std::vector<uint64_t> gemm_call_names_;
  uint64_t events_ = 0;
  unsigned kinds_with_events_ = 0;  // Bit per kind, in the order of the Encode* functions.
  int64_t base_time_ns_ = 0;
  std::unique_ptr<ColumnSet> sets_[kKinds];  // By kind, created on first use.
  WireBuffer body_;                          // One *Columns message being written.
};

}  // namespace lumos::schema
