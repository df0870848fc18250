#include "agent/writer/column_encoder.h"

#include "schema/format.h"

namespace lumos::agent {
namespace {

namespace pf = schema::packet_field;
namespace cf = schema::column_field;

// Raw column bytes per event on the synthetic agent mix (docs/performance.md): the frame-size
// trigger uses this instead of encoding every event twice.
constexpr size_t kEstimatedBytesPerEvent = 24;

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

template <typename E>
uint64_t U(E value) {
  return static_cast<uint64_t>(value);
}

// Builds one *Columns message in `body` from `n` events; `column` is scratch space.
class ColumnsBuilder {
 public:
  ColumnsBuilder(size_t n, WireBuffer* body, WireBuffer* column)
      : n_(n), body_(body), column_(column) {
    body_->Clear();
    body_->EnsureRoom(kMaxScalarFieldBytes);
    body_->PutUintAlways(cf::kCount, n);
  }

  // Writes column `field` with value(i) for each event i (in order, once each). Unless
  // `always` (the start column): skipped when every value is 0, one value when all are equal.
  template <typename Value>
  void Column(uint32_t field, Value value, bool always = false) {
    column_->Clear();
    column_->EnsureRoom(n_ * 10);
    uint64_t any = 0, differ = 0, first = 0;
    for (size_t i = 0; i < n_; ++i) {
      uint64_t v = value(i);
      if (i == 0) first = v;
      any |= v;
      differ |= v ^ first;
      column_->PutVarint(v);
    }
    if (!always && any == 0) return;
    if (!always && differ == 0 && n_ > 1) {
      column_->Clear();
      column_->PutVarint(first);
    }
    body_->EnsureRoom(column_->size() + 2 * kMaxScalarFieldBytes);
    body_->PutTag(field, WireType::kLength);
    body_->PutVarint(column_->size());
    body_->PutRaw(column_->data(), column_->size());
  }

  // A column of differences to the previous value (the first: to `first`), zigzag-coded.
  template <typename Value>
  void DeltaColumn(uint32_t field, Value value, uint64_t first = 0, bool always = false) {
    uint64_t last = first;
    Column(
        field,
        [&](size_t i) {
          uint64_t v = value(i);
          // Unsigned subtraction: wraps instead of overflowing for values far apart.
          auto delta = static_cast<int64_t>(v - last);
          last = v;
          return ZigZag(delta);
        },
        always);
  }

  // Wraps the message as TracePacket { <kind_field>: body } into `out`.
  void Finish(uint32_t kind_field, WireBuffer* out) {
    size_t inner = WireBuffer::VarintSize((uint64_t{kind_field} << 3) | 2) +
                   WireBuffer::VarintSize(body_->size()) + body_->size();
    out->EnsureRoom(inner + 2 * kMaxScalarFieldBytes);
    out->PutTag(1, WireType::kLength);
    out->PutVarint(inner);
    out->PutTag(kind_field, WireType::kLength);
    out->PutVarint(body_->size());
    out->PutRaw(body_->data(), body_->size());
  }

 private:
  size_t n_;
  WireBuffer* body_;
  WireBuffer* column_;
};

// The start column shared by every kind; always written, so readers can bound `count` by it.
template <typename Event>
void StartColumn(ColumnsBuilder* b, const std::vector<Event>& events, int64_t base_time_ns) {
  b->DeltaColumn(
      cf::kStartDeltaNs, [&](size_t i) { return static_cast<uint64_t>(events[i].start_ns); },
      static_cast<uint64_t>(base_time_ns), /*always=*/true);
}

}  // namespace

uint64_t ColumnEncoder::events() const {
  return kernels_.size() + api_calls_.size() + memcpys_.size() + memsets_.size() + syncs_.size() +
         cuda_events_.size() + nvtx_.size() + host_ranges_.size() + collectives_.size();
}

uint64_t ColumnEncoder::packets() const {
  return static_cast<uint64_t>(!kernels_.empty()) + !api_calls_.empty() + !memcpys_.empty() +
         !memsets_.empty() + !syncs_.empty() + !cuda_events_.empty() + !nvtx_.empty() +
         !host_ranges_.empty() + !collectives_.empty();
}

size_t ColumnEncoder::estimated_bytes() const { return events() * kEstimatedBytesPerEvent; }

uint64_t ColumnEncoder::EncodeAndClear(int64_t base, WireBuffer* out) {
  uint64_t packets = 0;
  if (!kernels_.empty()) {
    const auto& v = kernels_;
    ColumnsBuilder b(v.size(), &body_, &column_);
    StartColumn(&b, v, base);
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
    b.Finish(pf::kKernelColumns, out);
    ++packets;
  }
  if (!api_calls_.empty()) {
    const auto& v = api_calls_;
    ColumnsBuilder b(v.size(), &body_, &column_);
    StartColumn(&b, v, base);
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
    b.Column(12, [&](size_t i) { return ZigZag(v[i].return_code); });
    b.Finish(pf::kApiCallColumns, out);
    ++packets;
  }
  if (!memcpys_.empty()) {
    const auto& v = memcpys_;
    ColumnsBuilder b(v.size(), &body_, &column_);
    StartColumn(&b, v, base);
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
    b.Finish(pf::kMemcpyColumns, out);
    ++packets;
  }
  if (!memsets_.empty()) {
    const auto& v = memsets_;
    ColumnsBuilder b(v.size(), &body_, &column_);
    StartColumn(&b, v, base);
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
    b.Finish(pf::kMemsetColumns, out);
    ++packets;
  }
  if (!syncs_.empty()) {
    const auto& v = syncs_;
    ColumnsBuilder b(v.size(), &body_, &column_);
    StartColumn(&b, v, base);
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
    b.Finish(pf::kSyncColumns, out);
    ++packets;
  }
  if (!cuda_events_.empty()) {
    const auto& v = cuda_events_;
    ColumnsBuilder b(v.size(), &body_, &column_);
    StartColumn(&b, v, base);
    b.DeltaColumn(1, [&](size_t i) { return v[i].correlation_id; });
    b.Column(2, [&](size_t i) { return v[i].event_id; });
    b.Column(3, [&](size_t i) { return v[i].stream_id; });
    b.DeltaColumn(4, [&](size_t i) { return v[i].cuda_event_sync_id; });
    b.Column(5, [&](size_t i) { return U(v[i].device_id); });
    b.Column(6, [&](size_t i) { return U(v[i].context_id); });
    b.Column(7, [&](size_t i) { return U(v[i].has_device_timestamp); });
    b.Finish(pf::kCudaEventColumns, out);
    ++packets;
  }
  if (!nvtx_.empty()) {
    const auto& v = nvtx_;
    ColumnsBuilder b(v.size(), &body_, &column_);
    StartColumn(&b, v, base);
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
    b.Finish(pf::kNvtxColumns, out);
    ++packets;
  }
  if (!host_ranges_.empty()) {
    const auto& v = host_ranges_;
    ColumnsBuilder b(v.size(), &body_, &column_);
    StartColumn(&b, v, base);
    b.Column(1, [&](size_t i) { return v[i].duration_ns; });
    b.Column(2, [&](size_t i) { return U(v[i].thread_id); });
    b.Column(3, [&](size_t i) { return host_range_names_[i]; });
    b.Column(4, [&](size_t i) { return U(v[i].category); });
    b.DeltaColumn(5, [&](size_t i) { return v[i].external_id; });
    b.DeltaColumn(6, [&](size_t i) { return v[i].sequence_number; });
    b.Column(7, [&](size_t i) { return U(v[i].forward_thread_id); });
    b.Column(8, [&](size_t i) { return v[i].stream_id; });
    b.Column(9, [&](size_t i) { return U(v[i].device_id); });
    b.Column(10, [&](size_t i) { return v[i].has_step_number ? ZigZag(v[i].step_number) : 0; });
    b.Column(11, [&](size_t i) { return U(v[i].has_step_number); });
    b.Finish(pf::kHostRangeColumns, out);
    ++packets;
  }
  if (!collectives_.empty()) {
    const auto& v = collectives_;
    // Optional ranks: 0 = absent, else rank + 1 (CollectiveEvent uses -1 for absent).
    auto plus_1 = [](int32_t rank) { return rank >= 0 ? static_cast<uint64_t>(rank) + 1 : 0; };
    ColumnsBuilder b(v.size(), &body_, &column_);
    StartColumn(&b, v, base);
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
    b.Column(11, [&](size_t i) { return ZigZag(v[i].gpu_start_offset_ns); });
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
    b.Finish(pf::kCollectiveColumns, out);
    ++packets;
  }
  kernels_.clear();
  kernel_names_.clear();
  api_calls_.clear();
  api_call_names_.clear();
  memcpys_.clear();
  memsets_.clear();
  syncs_.clear();
  cuda_events_.clear();
  nvtx_.clear();
  nvtx_names_.clear();
  nvtx_domains_.clear();
  host_ranges_.clear();
  host_range_names_.clear();
  collectives_.clear();
  return packets;
}

}  // namespace lumos::agent
