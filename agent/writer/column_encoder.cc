#include "agent/writer/column_encoder.h"

#include <algorithm>

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

// Builds one *Columns message from `n` events, block by block: the per-kind code calls
// Column() for each of its columns once per block of kBlock events, so each pass reads a few
// KiB of events still in cache (passes over a whole frame of 136-byte events missed it). Each
// column collects its varints in its own buffer; Finish() writes the message.
class ColumnsBuilder {
 public:
  static constexpr size_t kBlock = 256;
  static constexpr uint32_t kColumns = ColumnEncoder::kMaxColumn;

  ColumnsBuilder(size_t n, WireBuffer* columns, WireBuffer* body)
      : n_(n), columns_(columns), body_(body) {}

  // Runs encode_block(builder) for each block of events.
  template <typename EncodeBlock>
  void EncodeBlocks(EncodeBlock encode_block) {
    for (lo_ = 0; lo_ < n_; lo_ += kBlock) {
      hi_ = std::min(n_, lo_ + kBlock);
      encode_block(*this);
    }
  }

  // Writes value(i) of column `field` for each event i of the block (in order, once each).
  // Unless `always` (the start column): the column is left out when every value is 0 and
  // holds one value when all are equal.
  template <typename Value>
  void Column(uint32_t field, Value value, bool always = false) {
    State& s = state_[field];
    WireBuffer& bytes = columns_[field];
    if (lo_ == 0) {
      s = State();
      s.always = always;
      bytes.Clear();
      order_[used_++] = field;
    }
    bytes.EnsureRoom((hi_ - lo_) * 10);
    uint8_t* out = bytes.cursor();
    size_t i = lo_;
    if (i == 0) {
      s.first = value(0);
      s.any = s.first;
      out = WireBuffer::PutVarint(out, s.first);
      ++i;
    }
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

  // A column of differences to the previous value (the first: to `first`), zigzag-coded.
  template <typename Value>
  void DeltaColumn(uint32_t field, Value value, uint64_t first = 0, bool always = false) {
    uint64_t& last = state_[field].last;
    if (lo_ == 0) last = first;  // Column() resets the rest of the state.
    uint64_t previous = last;
    Column(
        field,
        [&](size_t i) {
          uint64_t v = value(i);
          // Unsigned subtraction: wraps instead of overflowing for values far apart.
          auto delta = static_cast<int64_t>(v - previous);
          previous = v;
          return ZigZag(delta);
        },
        always);
    state_[field].last = previous;
  }

  // Writes TracePacket { <kind_field>: *Columns { count, columns... } } into `out`.
  void Finish(uint32_t kind_field, WireBuffer* out) {
    body_->Clear();
    body_->EnsureRoom(kMaxScalarFieldBytes);
    body_->PutUintAlways(schema::column_field::kCount, n_);
    for (size_t k = 0; k < used_; ++k) {
      uint32_t field = order_[k];
      const State& s = state_[field];
      WireBuffer& bytes = columns_[field];
      if (!s.always && s.any == 0) continue;
      if (!s.always && s.differ == 0 && n_ > 1) {
        bytes.Clear();
        bytes.EnsureRoom(kMaxScalarFieldBytes);
        bytes.PutVarint(s.first);
      }
      body_->EnsureRoom(bytes.size() + 2 * kMaxScalarFieldBytes);
      body_->PutTag(field, WireType::kLength);
      body_->PutVarint(bytes.size());
      body_->PutRaw(bytes.data(), bytes.size());
    }
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
  struct State {
    bool always = false;
    uint64_t first = 0;   // Value of event 0.
    uint64_t any = 0;     // OR of all values.
    uint64_t differ = 0;  // OR of (value ^ first).
    uint64_t last = 0;    // Delta columns: the previous value.
  };
  size_t n_;
  size_t lo_ = 0, hi_ = 0;
  WireBuffer* columns_;
  WireBuffer* body_;
  State state_[kColumns];
  uint32_t order_[kColumns] = {};  // Columns in the order of their first Column() call.
  size_t used_ = 0;
};

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
template <typename Event>
void StartColumn(ColumnsBuilder* b, const std::vector<Event>& events, int64_t base_time_ns) {
  b->Column(
      cf::kStartDeltaNs,
      [&](size_t i) {
        uint64_t previous_end = i == 0 ? static_cast<uint64_t>(base_time_ns) : EndOf(events[i - 1]);
        return ZigZag(
            static_cast<int64_t>(static_cast<uint64_t>(events[i].start_ns) - previous_end));
      },
      /*always=*/true);
}

}  // namespace

uint64_t ColumnEncoder::packets() const {
  return static_cast<uint64_t>(!kernels_.empty()) + !api_calls_.empty() + !memcpys_.empty() +
         !memsets_.empty() + !syncs_.empty() + !cuda_events_.empty() + !nvtx_.empty() +
         !host_ranges_.empty() + !collectives_.empty();
}

size_t ColumnEncoder::estimated_bytes() const { return events_ * kEstimatedBytesPerEvent; }

uint64_t ColumnEncoder::EncodeAndClear(int64_t base, WireBuffer* out) {
  uint64_t packets = 0;
  if (!kernels_.empty()) {
    const auto& v = kernels_;
    ColumnsBuilder builder(v.size(), column_bytes_, &body_);
    builder.EncodeBlocks([&](ColumnsBuilder& b) {
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
    });
    builder.Finish(pf::kKernelColumns, out);
    ++packets;
  }
  if (!api_calls_.empty()) {
    const auto& v = api_calls_;
    ColumnsBuilder builder(v.size(), column_bytes_, &body_);
    builder.EncodeBlocks([&](ColumnsBuilder& b) {
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
    });
    builder.Finish(pf::kApiCallColumns, out);
    ++packets;
  }
  if (!memcpys_.empty()) {
    const auto& v = memcpys_;
    ColumnsBuilder builder(v.size(), column_bytes_, &body_);
    builder.EncodeBlocks([&](ColumnsBuilder& b) {
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
    });
    builder.Finish(pf::kMemcpyColumns, out);
    ++packets;
  }
  if (!memsets_.empty()) {
    const auto& v = memsets_;
    ColumnsBuilder builder(v.size(), column_bytes_, &body_);
    builder.EncodeBlocks([&](ColumnsBuilder& b) {
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
    });
    builder.Finish(pf::kMemsetColumns, out);
    ++packets;
  }
  if (!syncs_.empty()) {
    const auto& v = syncs_;
    ColumnsBuilder builder(v.size(), column_bytes_, &body_);
    builder.EncodeBlocks([&](ColumnsBuilder& b) {
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
    });
    builder.Finish(pf::kSyncColumns, out);
    ++packets;
  }
  if (!cuda_events_.empty()) {
    const auto& v = cuda_events_;
    ColumnsBuilder builder(v.size(), column_bytes_, &body_);
    builder.EncodeBlocks([&](ColumnsBuilder& b) {
      StartColumn(&b, v, base);
      b.DeltaColumn(1, [&](size_t i) { return v[i].correlation_id; });
      b.Column(2, [&](size_t i) { return v[i].event_id; });
      b.Column(3, [&](size_t i) { return v[i].stream_id; });
      b.DeltaColumn(4, [&](size_t i) { return v[i].cuda_event_sync_id; });
      b.Column(5, [&](size_t i) { return U(v[i].device_id); });
      b.Column(6, [&](size_t i) { return U(v[i].context_id); });
      b.Column(7, [&](size_t i) { return U(v[i].has_device_timestamp); });
    });
    builder.Finish(pf::kCudaEventColumns, out);
    ++packets;
  }
  if (!nvtx_.empty()) {
    const auto& v = nvtx_;
    ColumnsBuilder builder(v.size(), column_bytes_, &body_);
    builder.EncodeBlocks([&](ColumnsBuilder& b) {
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
    });
    builder.Finish(pf::kNvtxColumns, out);
    ++packets;
  }
  if (!host_ranges_.empty()) {
    const auto& v = host_ranges_;
    ColumnsBuilder builder(v.size(), column_bytes_, &body_);
    builder.EncodeBlocks([&](ColumnsBuilder& b) {
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
    });
    builder.Finish(pf::kHostRangeColumns, out);
    ++packets;
  }
  if (!collectives_.empty()) {
    const auto& v = collectives_;
    // Optional ranks: 0 = absent, else rank + 1 (CollectiveEvent uses -1 for absent).
    auto plus_1 = [](int32_t rank) { return rank >= 0 ? static_cast<uint64_t>(rank) + 1 : 0; };
    ColumnsBuilder builder(v.size(), column_bytes_, &body_);
    builder.EncodeBlocks([&](ColumnsBuilder& b) {
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
    });
    builder.Finish(pf::kCollectiveColumns, out);
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
  events_ = 0;
  return packets;
}

}  // namespace lumos::agent
