#include "schema/writer/column_encoder.h"

#include <algorithm>
#include <memory>

#include "schema/format.h"
#include "schema/varint.h"

namespace lumos::schema {
namespace {

namespace pf = schema::packet_field;
namespace cf = schema::column_field;

// What the frame-size trigger counts per column event instead of measuring the encoded bytes
// (chunks are encoded lazily). The agent mix measures 19.5 raw bytes per event
// (docs/performance.md), so frames end a little under frame_bytes; the size and speed figures
// there are for this estimate.
constexpr size_t kEstimatedBytesPerEvent = 24;

template <typename E>
uint64_t U(E value) {
  return static_cast<uint64_t>(value);
}

}  // namespace

// One kind's columns while a frame fills: the per-kind code calls Column() for each of its
// columns once per block of kBlock events, so each pass reads a few KiB of events still in
// cache; each column collects its varints in its own buffer, across chunks, until Finish()
// writes the message. Column state (first value, OR of values, ...) spans the whole frame.
class ColumnSet {
 public:
  static constexpr size_t kBlock = 256;
  static constexpr uint32_t kColumns = ColumnEncoder::kMaxColumn;

  // Starts a frame: start times are coded from base_time_ns.
  void Begin(int64_t base_time_ns) {
    encoded_ = 0;
    used_ = 0;
    previous_end = static_cast<uint64_t>(base_time_ns);
  }
  uint64_t encoded() const { return encoded_; }

  // Runs encode_block(set) for each block of the n pending events.
  template <typename EncodeBlock>
  void Encode(size_t n, EncodeBlock encode_block) {
    for (lo_ = 0; lo_ < n; lo_ += kBlock) {
      hi_ = std::min(n, lo_ + kBlock);
      encode_block(*this);
    }
    encoded_ += n;
  }

  // Writes value(i) of column `field` for each pending event i of the block (in order, once
  // each). Unless `always` (the start column): the column is left out when every value of
  // the frame is 0 and holds one value when all are equal.
  template <typename Value>
  void Column(uint32_t field, Value value, bool always = false) {
    State& s = state_[field];
    WireBuffer& bytes = bytes_[field];
    size_t i = lo_;
    if (encoded_ + lo_ == 0) {  // The frame's first event of the kind.
      s = State();
      s.always = always;
      bytes.Clear();
      order_[used_++] = field;
      bytes.EnsureRoom(kMaxScalarFieldBytes);
      s.first = value(i);
      s.any = s.first;
      bytes.PutVarint(s.first);
      ++i;
    }
    bytes.EnsureRoom((hi_ - i) * 10);
    uint8_t* out = bytes.cursor();
    uint64_t any = s.any, differ = s.differ;
    const uint64_t first = s.first;
    for (; i < hi_; ++i) {
      uint64_t v = value(i);
      any |= v;
      differ |= v ^ first;
      out = WireBuffer::PutVarint(out, v);
    }
    s.any = any;
    s.differ = differ;
    bytes.Commit(out);
  }

  // A column of differences to the previous value (the first: to 0), zigzag-coded.
  template <typename Value>
  void DeltaColumn(uint32_t field, Value value) {
    uint64_t previous = encoded_ + lo_ == 0 ? 0 : state_[field].last;
    Column(field, [&](size_t i) {
      uint64_t v = value(i);
      // Unsigned subtraction: wraps instead of overflowing for values far apart.
      auto delta = static_cast<int64_t>(v - previous);
      previous = v;
      return schema::ZigZagEncode(delta);
    });
    state_[field].last = previous;
  }

  // Writes TracePacket { <kind_field>: *Columns { count, columns... } } into `out`.
  void Finish(uint32_t kind_field, WireBuffer* body, WireBuffer* out) {
    body->Clear();
    body->EnsureRoom(kMaxScalarFieldBytes);
    body->PutUintAlways(schema::column_field::kCount, encoded_);
    for (size_t k = 0; k < used_; ++k) {
      uint32_t field = order_[k];
      const State& s = state_[field];
      WireBuffer& bytes = bytes_[field];
      if (!s.always && s.any == 0) continue;
      if (!s.always && s.differ == 0 && encoded_ > 1) {
        bytes.Clear();
        bytes.EnsureRoom(kMaxScalarFieldBytes);
        bytes.PutVarint(s.first);
      }
      body->EnsureRoom(bytes.size() + 2 * kMaxScalarFieldBytes);
      body->PutTag(field, WireType::kLength);
      body->PutVarint(bytes.size());
      body->PutRaw(bytes.data(), bytes.size());
    }
    size_t inner = WireBuffer::VarintSize((uint64_t{kind_field} << 3) | 2) +
                   WireBuffer::VarintSize(body->size()) + body->size();
    out->EnsureRoom(inner + 2 * kMaxScalarFieldBytes);
    out->PutTag(1, WireType::kLength);
    out->PutVarint(inner);
    out->PutTag(kind_field, WireType::kLength);
    out->PutVarint(body->size());
    out->PutRaw(body->data(), body->size());
    encoded_ = 0;
  }

  uint64_t previous_end = 0;  // End of the kind's previous event (start column).

 private:
  struct State {
    bool always = false;
    uint64_t first = 0;   // Value of the frame's first event.
    uint64_t any = 0;     // OR of all values.
    uint64_t differ = 0;  // OR of (value ^ first).
    uint64_t last = 0;    // Delta columns: the previous value.
  };
  uint64_t encoded_ = 0;  // Events of the kind encoded in this frame.
  size_t lo_ = 0, hi_ = 0;
  State state_[kColumns];
  WireBuffer bytes_[kColumns];     // By field number.
  uint32_t order_[kColumns] = {};  // Columns in the order of their first Column() call.
  size_t used_ = 0;
};

namespace {

template <typename Event>
uint64_t EndOf(const Event& e) {
  uint64_t start = static_cast<uint64_t>(e.start_ns);
  if constexpr (requires { e.duration_ns; }) return start + e.duration_ns;
  return start;  // CUDA event records are instants.
}

// The start column shared by every kind: each start minus the end of the previous event of
// the kind (the first: minus the frame's base time). Events of a kind mostly follow each other
// on a stream or thread, so this is the gap between them: smaller and more repetitive than
// the distance between starts (-0.37 bytes/event on the agent mix, docs/performance.md).
// Always written, so readers can bound `count` by it. Wrapping arithmetic throughout.
// value(i) runs once per event, in order, so the previous end can live in the set.
template <typename Event>
void StartColumn(ColumnSet* b, const std::vector<Event>& events) {
  b->Column(
      cf::kStartDeltaNs,
      [&](size_t i) {
        uint64_t start = static_cast<uint64_t>(events[i].start_ns);
        uint64_t gap = start - b->previous_end;
        b->previous_end = EndOf(events[i]);
        return schema::ZigZagEncode(static_cast<int64_t>(gap));
      },
      /*always=*/true);
}

}  // namespace

ColumnEncoder::ColumnEncoder() = default;
ColumnEncoder::~ColumnEncoder() = default;

size_t ColumnEncoder::estimated_bytes() const { return events_ * kEstimatedBytesPerEvent; }

void ColumnEncoder::EncodeKernels() {
  const auto& v = kernels_;
  Set(0).Encode(v.size(), [&](ColumnSet& b) {
    StartColumn(&b, v);
    b.Column(1, [&](size_t i) { return v[i].duration_ns; });
    b.DeltaColumn(2, [&](size_t i) { return v[i].correlation_id; });
    b.Column(3, [&](size_t i) { return v[i].stream_id; });
    b.Column(4, [&](size_t i) { return kernel_names_[i]; });
    b.Column(5, [&](size_t i) { return U(v[i].device_id); });
    b.Column(6, [&](size_t i) { return U(v[i].grid.x); });
    b.Column(7, [&](size_t i) { return U(v[i].grid.y); });
    b.Column(8, [&](size_t i) { return U(v[i].grid.z); });
    b.Column(9, [&](size_t i) { return U(v[i].block.x); });
    b.Column(10, [&](size_t i) { return U(v[i].block.y); });
    b.Column(11, [&](size_t i) { return U(v[i].block.z); });
    b.Column(12, [&](size_t i) { return U(v[i].registers_per_thread); });
    b.Column(13, [&](size_t i) { return U(v[i].static_shared_memory_bytes); });
    b.Column(14, [&](size_t i) { return U(v[i].dynamic_shared_memory_bytes); });
    b.Column(15, [&](size_t i) { return U(v[i].context_id); });
    b.Column(16, [&](size_t i) { return v[i].graph_id; });
    b.Column(17, [&](size_t i) { return v[i].graph_node_id; });
    b.Column(18, [&](size_t i) { return U(v[i].launch_type); });
    b.DeltaColumn(19, [&](size_t i) { return v[i].external_id; });
    b.Column(20, [&](size_t i) { return U(v[i].cluster.x); });
    b.Column(21, [&](size_t i) { return U(v[i].cluster.y); });
    b.Column(22, [&](size_t i) { return U(v[i].cluster.z); });
  });
  kernels_.clear();
  kernel_names_.clear();
}

void ColumnEncoder::EncodeApiCalls() {
  const auto& v = api_calls_;
  Set(1).Encode(v.size(), [&](ColumnSet& b) {
    StartColumn(&b, v);
    b.Column(1, [&](size_t i) { return v[i].duration_ns; });
    b.Column(2, [&](size_t i) { return U(v[i].thread_id); });
    b.DeltaColumn(3, [&](size_t i) { return v[i].correlation_id; });
    b.Column(4, [&](size_t i) { return U(v[i].kind); });
    b.Column(5, [&](size_t i) { return U(v[i].cbid); });
    b.Column(6, [&](size_t i) { return api_call_names_[i]; });
    b.Column(7, [&](size_t i) { return v[i].stream_id; });
    b.Column(8, [&](size_t i) { return v[i].event_id; });
    b.Column(9, [&](size_t i) { return U(v[i].domain); });
    b.DeltaColumn(10, [&](size_t i) { return v[i].external_id; });
    b.Column(11, [&](size_t i) { return v[i].graph_id; });
    b.Column(12, [&](size_t i) { return schema::ZigZagEncode(v[i].return_code); });
  });
  api_calls_.clear();
  api_call_names_.clear();
}

void ColumnEncoder::EncodeMemcpys() {
  const auto& v = memcpys_;
  Set(2).Encode(v.size(), [&](ColumnSet& b) {
    StartColumn(&b, v);
    b.Column(1, [&](size_t i) { return v[i].duration_ns; });
    b.DeltaColumn(2, [&](size_t i) { return v[i].correlation_id; });
    b.Column(3, [&](size_t i) { return v[i].stream_id; });
    b.Column(4, [&](size_t i) { return v[i].bytes; });
    b.Column(5, [&](size_t i) { return U(v[i].copy_kind); });
    b.Column(6, [&](size_t i) { return U(v[i].device_id); });
    b.Column(7, [&](size_t i) { return U(v[i].src_kind); });
    b.Column(8, [&](size_t i) { return U(v[i].dst_kind); });
    b.Column(9, [&](size_t i) { return U(v[i].src_device_id); });
    b.Column(10, [&](size_t i) { return U(v[i].dst_device_id); });
    b.Column(11, [&](size_t i) { return U(v[i].context_id); });
    b.Column(12, [&](size_t i) { return v[i].graph_node_id; });
    b.DeltaColumn(13, [&](size_t i) { return v[i].external_id; });
  });
  memcpys_.clear();
}

void ColumnEncoder::EncodeMemsets() {
  const auto& v = memsets_;
  Set(3).Encode(v.size(), [&](ColumnSet& b) {
    StartColumn(&b, v);
    b.Column(1, [&](size_t i) { return v[i].duration_ns; });
    b.DeltaColumn(2, [&](size_t i) { return v[i].correlation_id; });
    b.Column(3, [&](size_t i) { return v[i].stream_id; });
    b.Column(4, [&](size_t i) { return v[i].bytes; });
    b.Column(5, [&](size_t i) { return U(v[i].value); });
    b.Column(6, [&](size_t i) { return U(v[i].device_id); });
    b.Column(7, [&](size_t i) { return U(v[i].memory_kind); });
    b.Column(8, [&](size_t i) { return U(v[i].context_id); });
    b.Column(9, [&](size_t i) { return v[i].graph_node_id; });
    b.DeltaColumn(10, [&](size_t i) { return v[i].external_id; });
  });
  memsets_.clear();
}

void ColumnEncoder::EncodeSyncs() {
  const auto& v = syncs_;
  Set(4).Encode(v.size(), [&](ColumnSet& b) {
    StartColumn(&b, v);
    b.Column(1, [&](size_t i) { return v[i].duration_ns; });
    b.Column(2, [&](size_t i) { return U(v[i].sync_type); });
    b.DeltaColumn(3, [&](size_t i) { return v[i].correlation_id; });
    b.Column(4, [&](size_t i) { return v[i].stream_id; });
    b.Column(5, [&](size_t i) { return v[i].event_id; });
    b.DeltaColumn(6, [&](size_t i) { return v[i].cuda_event_sync_id; });
    b.Column(7, [&](size_t i) { return v[i].wait_on_stream_id; });
    b.DeltaColumn(8, [&](size_t i) { return v[i].event_record_correlation_id; });
    b.Column(9, [&](size_t i) { return U(v[i].device_id); });
    b.Column(10, [&](size_t i) { return U(v[i].context_id); });
    b.Column(11, [&](size_t i) { return U(v[i].thread_id); });
    b.DeltaColumn(12, [&](size_t i) { return v[i].external_id; });
  });
  syncs_.clear();
}

void ColumnEncoder::EncodeCudaEvents() {
  const auto& v = cuda_events_;
  Set(5).Encode(v.size(), [&](ColumnSet& b) {
    StartColumn(&b, v);
    b.DeltaColumn(1, [&](size_t i) { return v[i].correlation_id; });
    b.Column(2, [&](size_t i) { return v[i].event_id; });
    b.Column(3, [&](size_t i) { return v[i].stream_id; });
    b.DeltaColumn(4, [&](size_t i) { return v[i].cuda_event_sync_id; });
    b.Column(5, [&](size_t i) { return U(v[i].device_id); });
    b.Column(6, [&](size_t i) { return U(v[i].context_id); });
    b.Column(7, [&](size_t i) { return U(v[i].has_device_timestamp); });
  });
  cuda_events_.clear();
}

void ColumnEncoder::EncodeNvtx() {
  const auto& v = nvtx_;
  Set(6).Encode(v.size(), [&](ColumnSet& b) {
    StartColumn(&b, v);
    b.Column(1, [&](size_t i) { return v[i].duration_ns; });
    b.Column(2, [&](size_t i) { return U(v[i].thread_id); });
    b.Column(3, [&](size_t i) { return nvtx_names_[i]; });
    b.Column(4, [&](size_t i) { return nvtx_domains_[i]; });
    b.Column(5, [&](size_t i) { return U(v[i].kind); });
    b.Column(6, [&](size_t i) { return U(v[i].depth); });
    b.Column(7, [&](size_t i) { return U(v[i].color_argb); });
    b.Column(8, [&](size_t i) { return U(v[i].category); });
    b.Column(9, [&](size_t i) { return v[i].range_id; });
    b.Column(10, [&](size_t i) { return U(v[i].end_thread_id); });
  });
  nvtx_.clear();
  nvtx_names_.clear();
  nvtx_domains_.clear();
}

void ColumnEncoder::EncodeHostRanges() {
  const auto& v = host_ranges_;
  Set(7).Encode(v.size(), [&](ColumnSet& b) {
    StartColumn(&b, v);
    b.Column(1, [&](size_t i) { return v[i].duration_ns; });
    b.Column(2, [&](size_t i) { return U(v[i].thread_id); });
    b.Column(3, [&](size_t i) { return host_range_names_[i]; });
    b.Column(4, [&](size_t i) { return U(v[i].category); });
    b.DeltaColumn(5, [&](size_t i) { return v[i].external_id; });
    b.DeltaColumn(6, [&](size_t i) { return v[i].sequence_number; });
    b.Column(7, [&](size_t i) { return U(v[i].forward_thread_id); });
    b.Column(8, [&](size_t i) { return v[i].stream_id; });
    b.Column(9, [&](size_t i) { return U(v[i].device_id); });
    b.Column(10, [&](size_t i) {
      return v[i].has_step_number ? schema::ZigZagEncode(v[i].step_number) : 0;
    });
    b.Column(11, [&](size_t i) { return U(v[i].has_step_number); });
  });
  host_ranges_.clear();
  host_range_names_.clear();
}

void ColumnEncoder::EncodeCollectives() {
  const auto& v = collectives_;
  // Optional ranks: 0 = absent, else rank + 1 (CollectiveEvent uses -1 for absent).
  auto plus_1 = [](int32_t rank) { return rank >= 0 ? static_cast<uint64_t>(rank) + 1 : 0; };
  Set(8).Encode(v.size(), [&](ColumnSet& b) {
    StartColumn(&b, v);
    b.Column(1, [&](size_t i) { return v[i].duration_ns; });
    b.Column(2, [&](size_t i) { return v[i].comm_id; });
    b.DeltaColumn(3, [&](size_t i) { return v[i].seq_number; });
    b.Column(4, [&](size_t i) { return U(v[i].op); });
    b.Column(5, [&](size_t i) { return v[i].count; });
    b.Column(6, [&](size_t i) { return U(v[i].data_type); });
    b.Column(7, [&](size_t i) { return v[i].bytes; });
    b.Column(8, [&](size_t i) { return plus_1(v[i].root_rank); });
    b.Column(9, [&](size_t i) { return plus_1(v[i].peer_rank); });
    b.Column(10, [&](size_t i) { return v[i].stream_id; });
    b.Column(11, [&](size_t i) { return schema::ZigZagEncode(v[i].gpu_start_offset_ns); });
    b.Column(12, [&](size_t i) { return v[i].gpu_duration_ns; });
    b.Column(13, [&](size_t i) { return U(v[i].algorithm); });
    b.Column(14, [&](size_t i) { return U(v[i].protocol); });
    b.Column(15, [&](size_t i) { return U(v[i].channels); });
    b.Column(16, [&](size_t i) { return U(v[i].device_id); });
    b.Column(17, [&](size_t i) { return U(v[i].reduce_op); });
    b.DeltaColumn(18, [&](size_t i) { return v[i].correlation_id; });
    b.Column(19, [&](size_t i) { return U(v[i].thread_id); });
    b.Column(20, [&](size_t i) { return U(v[i].comm_size); });
    b.Column(21, [&](size_t i) { return U(v[i].has_host_time); });
  });
  collectives_.clear();
}

void ColumnEncoder::EncodeGemmCalls() {
  const auto& v = gemm_calls_;
  Set(9).Encode(v.size(), [&](ColumnSet& b) {
    StartColumn(&b, v);
    b.Column(1, [&](size_t i) { return v[i].duration_ns; });
    b.Column(2, [&](size_t i) { return U(v[i].thread_id); });
    b.Column(3, [&](size_t i) { return U(v[i].api); });
    b.Column(4, [&](size_t i) { return v[i].m; });
    b.Column(5, [&](size_t i) { return v[i].n; });
    b.Column(6, [&](size_t i) { return v[i].k; });
    b.Column(7, [&](size_t i) { return v[i].batch_count; });
    b.Column(8, [&](size_t i) { return U(v[i].transa); });
    b.Column(9, [&](size_t i) { return U(v[i].transb); });
    b.Column(10, [&](size_t i) { return U(v[i].a_type); });
    b.Column(11, [&](size_t i) { return U(v[i].b_type); });
    b.Column(12, [&](size_t i) { return U(v[i].c_type); });
    b.Column(13, [&](size_t i) { return U(v[i].d_type); });
    b.Column(14, [&](size_t i) { return U(v[i].compute_type); });
    b.Column(15, [&](size_t i) { return U(v[i].math_mode); });
    b.Column(16, [&](size_t i) { return v[i].stream_id; });
    b.Column(17, [&](size_t i) { return schema::ZigZagEncode(v[i].return_code); });
    b.Column(18, [&](size_t i) { return gemm_call_names_[i]; });
    b.DeltaColumn(19, [&](size_t i) { return v[i].external_id; });
    b.DeltaColumn(20, [&](size_t i) { return v[i].correlation_id; });
    b.Column(21, [&](size_t i) { return U(v[i].heads); });
    b.Column(22, [&](size_t i) { return U(v[i].kv_heads); });
    b.Column(23, [&](size_t i) { return v[i].head_dim_v; });
    b.Column(24, [&](size_t i) { return U(v[i].mask); });
  });
  gemm_calls_.clear();
  gemm_call_names_.clear();
}

ColumnSet& ColumnEncoder::Set(size_t kind) {
  if (sets_[kind] == nullptr) sets_[kind] = std::make_unique<ColumnSet>();
  ColumnSet& set = *sets_[kind];
  if (set.encoded() == 0) set.Begin(base_time_ns_);
  return set;
}

void ColumnEncoder::EncodePending() {
  if (!kernels_.empty()) EncodeKernels();
  if (!api_calls_.empty()) EncodeApiCalls();
  if (!memcpys_.empty()) EncodeMemcpys();
  if (!memsets_.empty()) EncodeMemsets();
  if (!syncs_.empty()) EncodeSyncs();
  if (!cuda_events_.empty()) EncodeCudaEvents();
  if (!nvtx_.empty()) EncodeNvtx();
  if (!host_ranges_.empty()) EncodeHostRanges();
  if (!collectives_.empty()) EncodeCollectives();
  if (!gemm_calls_.empty()) EncodeGemmCalls();
}

uint64_t ColumnEncoder::EncodeAndClear(int64_t base_time_ns, WireBuffer* out) {
  base_time_ns_ = base_time_ns;
  EncodePending();
  static constexpr uint32_t kFields[kKinds] = {
      pf::kKernelColumns,     pf::kApiCallColumns,   pf::kMemcpyColumns, pf::kMemsetColumns,
      pf::kSyncColumns,       pf::kCudaEventColumns, pf::kNvtxColumns,   pf::kHostRangeColumns,
      pf::kCollectiveColumns, pf::kGemmCallColumns};
  uint64_t packets = 0;
  for (size_t kind = 0; kind < kKinds; ++kind) {
    if (sets_[kind] == nullptr || sets_[kind]->encoded() == 0) continue;
    sets_[kind]->Finish(kFields[kind], &body_, out);
    ++packets;
  }
  events_ = 0;
  kinds_with_events_ = 0;
  return packets;
}

}  // namespace lumos::schema
