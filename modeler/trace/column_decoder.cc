#include "modeler/trace/column_decoder.h"

#include <cstring>

#include "schema/format.h"
#include "schema/varint.h"
#include "schema/writer/trace_events.h"

namespace lumos::modeler {
namespace {

namespace pf = schema::packet_field;
namespace cf = schema::column_field;
using namespace ::lumos::schema;  // NOLINT(google-build-using-namespace): the enum mirrors.

// Decodes one varint at p without bounds checks: the caller guarantees 10 readable bytes.
// Returns the byte after it, or nullptr for a varint longer than 10 bytes.
inline const uint8_t* ReadVarintUnchecked(const uint8_t* p, uint64_t* value) {
  // Columns hold mostly 1- to 3-byte values: those cases unrolled.
  uint64_t b0 = p[0];
  if (b0 < 0x80) {
    *value = b0;
    return p + 1;
  }
  uint64_t b1 = p[1];
  if (b1 < 0x80) {
    *value = (b0 & 0x7F) | b1 << 7;
    return p + 2;
  }
  uint64_t b2 = p[2];
  if (b2 < 0x80) {
    *value = (b0 & 0x7F) | (b1 & 0x7F) << 7 | b2 << 14;
    return p + 3;
  }
  uint64_t result = 0;
  for (int i = 0; i < 10; ++i) {
    uint64_t byte = p[i];
    result |= (byte & 0x7F) << (7 * i);
    if (byte < 0x80) {
      *value = result;
      return p + i + 1;
    }
  }
  return nullptr;
}

// True when any of the n bytes at p has its high bit set (a varint continues).
inline bool AnyHighBit(const uint8_t* p, size_t n) {
  uint64_t bits = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, p + i, 8);
    bits |= word;
  }
  for (; i < n; ++i) bits |= p[i];
  return (bits & 0x8080808080808080ull) != 0;
}

const char* KindName(uint32_t packet_field) {
  switch (packet_field) {
    case pf::kKernelColumns:
      return "KernelColumns";
    case pf::kApiCallColumns:
      return "ApiCallColumns";
    case pf::kMemcpyColumns:
      return "MemcpyColumns";
    case pf::kMemsetColumns:
      return "MemsetColumns";
    case pf::kSyncColumns:
      return "SyncColumns";
    case pf::kCudaEventColumns:
      return "CudaEventRecordColumns";
    case pf::kNvtxColumns:
      return "NvtxRangeColumns";
    case pf::kHostRangeColumns:
      return "HostRangeColumns";
    case pf::kCollectiveColumns:
      return "NcclCollectiveColumns";
    case pf::kGemmCallColumns:
      return "GemmCallColumns";
    default:
      return "?";
  }
}

template <typename T>
T As(uint64_t v) {
  return static_cast<T>(v);
}

}  // namespace

bool ColumnDecoder::IsColumnsField(uint32_t packet_field) {
  return (packet_field >= pf::kKernelColumns && packet_field <= pf::kCollectiveColumns) ||
         packet_field == pf::kGemmCallColumns;
}

// Finds the columns of the message; decodes nothing yet.
Status ColumnDecoder::Split(const uint8_t* data, size_t size, uint64_t max_events) {
  for (Column& column : columns_) column = Column();
  bool has_count = false;
  const uint8_t* p = data;
  const uint8_t* end = data + size;
  while (p < end) {
    uint64_t tag = 0;
    if (!ReadVarint(&p, end, &tag)) return ErrorStatus("%s: malformed field tag", kind_);
    uint64_t field = tag >> 3;
    uint32_t wire_type = tag & 7;
    uint64_t value = 0;
    switch (wire_type) {
      case 0:
        if (!ReadVarint(&p, end, &value)) return ErrorStatus("%s: malformed varint", kind_);
        if (field == cf::kCount) {
          count_ = value;
          has_count = true;
        } else if (field < kMaxColumn) {
          return ErrorStatus("%s: column %llu is not packed", kind_,
                             static_cast<unsigned long long>(field));
        }
        break;
      case 1:
      case 5: {
        size_t n = wire_type == 1 ? 8 : 4;
        if (static_cast<size_t>(end - p) < n) return ErrorStatus("%s: truncated field", kind_);
        p += n;
        break;
      }
      case 2:
        if (!ReadVarint(&p, end, &value) || value > static_cast<uint64_t>(end - p)) {
          return ErrorStatus("%s: field %llu runs past the end of the packet", kind_,
                             static_cast<unsigned long long>(field));
        }
        if (field > 0 && field < kMaxColumn) {
          if (columns_[field].present) {
            return ErrorStatus("%s: column %llu appears twice", kind_,
                               static_cast<unsigned long long>(field));
          }
          columns_[field].present = true;
          columns_[field].next = p;
          columns_[field].end = p + value;
        }
        p += value;
        break;
      default:
        return ErrorStatus("%s: field %llu has wire type %u", kind_,
                           static_cast<unsigned long long>(field), wire_type);
    }
  }
  if (!has_count) return ErrorStatus("%s: no count", kind_);
  // The writer always sends the start column, so a count is bounded by the packet's bytes
  // (a hostile count cannot make the reader allocate more than the data justifies).
  const Column& start = columns_[cf::kStartDeltaNs];
  if (!start.present || count_ > static_cast<uint64_t>(start.end - start.next)) {
    return ErrorStatus("%s: start_delta_ns does not hold count (%llu) values", kind_,
                       static_cast<unsigned long long>(count_));
  }
  // That bound is not enough: each event becomes a struct of ~140 bytes, and a frame of a few
  // KB can decompress to 1 GiB of start column (zstd RLE blocks), so the reader also caps the
  // events of a frame.
  if (count_ > max_events) {
    return ErrorStatus("%s: count (%llu) is more events than the frame may still hold (%llu)",
                       kind_, static_cast<unsigned long long>(count_),
                       static_cast<unsigned long long>(max_events));
  }
  // One value where count > 1 means every event has it (the start column never does that).
  for (uint32_t field = 1; field < kMaxColumn; ++field) {
    Column& column = columns_[field];
    if (!column.present || count_ < 2 || field == cf::kStartDeltaNs) continue;
    const uint8_t* q = column.next;
    uint64_t value = 0;
    if (ReadVarint(&q, column.end, &value) && q == column.end) {
      column.constant = true;
      column.value = value;
    }
  }
  present_count_ = 0;
  for (uint32_t field = 1; field < kMaxColumn; ++field) {
    if (columns_[field].present) present_[present_count_++] = field;
  }
  return Status::Ok();
}

Status ColumnDecoder::DecodeBlock(size_t m) {
  for (size_t k = 0; k < present_count_; ++k) {
    const uint32_t field = present_[k];
    Column& column = columns_[field];
    uint64_t* values = Block(field);
    if (column.constant) {
      if (!column.delta) continue;  // Filled once in Decode().
      std::fill_n(values, m, column.value);
    } else {
      const uint8_t* p = column.next;
      const uint8_t* end = column.end;
      size_t i = 0;
      if (static_cast<size_t>(end - p) >= m && !AnyHighBit(p, m)) {
        // The next m values are one byte each (common: enums, small ids, deltas of 1): a
        // widening copy the compiler vectorises.
        for (; i < m; ++i) values[i] = p[i];
        p += m;
      }
      // Unchecked while 10 bytes are left, checked near the end of the column.
      for (; i < m && end - p >= 10; ++i) {
        p = ReadVarintUnchecked(p, &values[i]);
        if (p == nullptr) return ErrorStatus("%s: column %u: malformed varint", kind_, field);
      }
      for (; i < m && p < end; ++i) {
        if (!ReadVarint(&p, end, &values[i])) {
          return ErrorStatus("%s: column %u: malformed varint", kind_, field);
        }
      }
      if (i != m) {
        return ErrorStatus("%s: column %u holds fewer values than count (%llu)", kind_, field,
                           static_cast<unsigned long long>(count_));
      }
      column.next = p;
    }
    if (column.delta) {
      uint64_t last = column.last;
      for (size_t i = 0; i < m; ++i) {
        last += static_cast<uint64_t>(ZigZagDecode(values[i]));  // Wrapping, like the writer.
        values[i] = last;
      }
      column.last = last;
    }
  }
  // Start times: each the previous event's end plus its delta (wrapping, like the writer).
  uint64_t* start = Block(cf::kStartDeltaNs);
  const uint64_t* duration = duration_field_ != 0 ? Values(duration_field_) : kZeros;
  uint64_t end = previous_end_;
  bool beyond = false;
  for (size_t i = 0; i < m; ++i) {
    start[i] = end + static_cast<uint64_t>(ZigZagDecode(start[i]));
    end = start[i] + duration[i];
    beyond |= !schema::EndsInTimeRange(static_cast<int64_t>(start[i]), duration[i]);
  }
  previous_end_ = end;
  // No writer makes such an event (the agent's durations are end - start of its own clock
  // readings): refused here, every later start + duration in the modeler is in range.
  if (beyond) {
    for (size_t i = 0; i < m; ++i) {
      if (schema::EndsInTimeRange(static_cast<int64_t>(start[i]), duration[i])) continue;
      return ErrorStatus(
          "%s: an event ends beyond the 64-bit time range (start %lld ns, "
          "duration %llu ns)",
          kind_, static_cast<long long>(start[i]), static_cast<unsigned long long>(duration[i]));
    }
  }
  return Status::Ok();
}

Status ColumnDecoder::CheckConsumed() const {
  for (uint32_t field = 1; field < kMaxColumn; ++field) {
    const Column& column = columns_[field];
    if (column.present && !column.constant && column.next != column.end) {
      return ErrorStatus("%s: column %u holds more values than count (%llu)", kind_, field,
                         static_cast<unsigned long long>(count_));
    }
  }
  return Status::Ok();
}

Status ColumnDecoder::Decode(uint32_t packet_field, const uint8_t* data, size_t size,
                             int64_t base_time_ns, uint64_t max_events, const InternTable& strings,
                             FrameEvents* out) {
  kind_ = KindName(packet_field);
  LUMOS_RETURN_IF_ERROR(Split(data, size, max_events));
  if (blocks_.empty()) blocks_.assign(kMaxColumn * kBlock, 0);
  // Start times chain through the previous event's end (see StartColumn in the writer).
  previous_end_ = static_cast<uint64_t>(base_time_ns);
  duration_field_ = packet_field == pf::kCudaEventColumns ? 0 : 1;
  for (uint32_t field = 1; field < kMaxColumn; ++field) {
    if (columns_[field].constant) std::fill_n(Block(field), kBlock, columns_[field].value);
  }
  // Block pointers stay put from block to block: the per-kind code takes them once.
  const uint64_t* start = Values(cf::kStartDeltaNs);
  auto c = [this](uint32_t field) { return Values(field); };
  auto name = [&strings](uint64_t iid) { return strings.Get(iid); };

  switch (packet_field) {
    case pf::kKernelColumns:
      Delta({2, 19});
      return DecodeKind(&out->kernels, [&](schema::KernelEvent* events, size_t n) {
        const uint64_t *dur = c(1), *corr = c(2), *stream = c(3), *nm = c(4), *dev = c(5);
        const uint64_t *gx = c(6), *gy = c(7), *gz = c(8), *bx = c(9), *by = c(10), *bz = c(11);
        const uint64_t *regs = c(12), *ssm = c(13), *dsm = c(14), *ctx = c(15), *graph = c(16);
        const uint64_t *node = c(17), *launch = c(18), *ext = c(19);
        const uint64_t *cx = c(20), *cy = c(21), *cz = c(22);
        for (size_t i = 0; i < n; ++i) {
          schema::KernelEvent& e = events[i];
          e.start_ns = static_cast<int64_t>(start[i]);
          e.duration_ns = dur[i];
          e.correlation_id = corr[i];
          e.stream_id = stream[i];
          e.name = name(nm[i]);
          e.device_id = As<uint32_t>(dev[i]);
          e.grid = {As<uint32_t>(gx[i]), As<uint32_t>(gy[i]), As<uint32_t>(gz[i])};
          e.block = {As<uint32_t>(bx[i]), As<uint32_t>(by[i]), As<uint32_t>(bz[i])};
          e.cluster = {As<uint32_t>(cx[i]), As<uint32_t>(cy[i]), As<uint32_t>(cz[i])};
          e.registers_per_thread = As<uint32_t>(regs[i]);
          e.static_shared_memory_bytes = As<uint32_t>(ssm[i]);
          e.dynamic_shared_memory_bytes = As<uint32_t>(dsm[i]);
          e.context_id = As<uint32_t>(ctx[i]);
          e.graph_id = graph[i];
          e.graph_node_id = node[i];
          e.launch_type = As<LaunchType>(launch[i]);
          e.external_id = ext[i];
        }
      });
    case pf::kApiCallColumns:
      Delta({3, 10});
      return DecodeKind(&out->api_calls, [&](schema::ApiCallEvent* events, size_t n) {
        const uint64_t *dur = c(1), *thread = c(2), *corr = c(3), *kind = c(4), *cbid = c(5);
        const uint64_t *nm = c(6), *stream = c(7), *event = c(8), *domain = c(9), *ext = c(10);
        const uint64_t *graph = c(11), *rc = c(12);
        for (size_t i = 0; i < n; ++i) {
          schema::ApiCallEvent& e = events[i];
          e.start_ns = static_cast<int64_t>(start[i]);
          e.duration_ns = dur[i];
          e.thread_id = As<uint32_t>(thread[i]);
          e.correlation_id = corr[i];
          e.kind = As<ApiKind>(kind[i]);
          e.cbid = As<uint32_t>(cbid[i]);
          e.name = name(nm[i]);
          e.stream_id = stream[i];
          e.event_id = event[i];
          e.domain = As<ApiDomain>(domain[i]);
          e.external_id = ext[i];
          e.graph_id = graph[i];
          e.return_code = static_cast<int32_t>(ZigZagDecode(rc[i]));
        }
      });
    case pf::kMemcpyColumns:
      Delta({2, 13});
      return DecodeKind(&out->memcpys, [&](schema::MemcpyEvent* events, size_t n) {
        const uint64_t *dur = c(1), *corr = c(2), *stream = c(3), *bytes = c(4), *kind = c(5);
        const uint64_t *dev = c(6), *src = c(7), *dst = c(8), *src_dev = c(9), *dst_dev = c(10);
        const uint64_t *ctx = c(11), *node = c(12), *ext = c(13);
        for (size_t i = 0; i < n; ++i) {
          schema::MemcpyEvent& e = events[i];
          e.start_ns = static_cast<int64_t>(start[i]);
          e.duration_ns = dur[i];
          e.correlation_id = corr[i];
          e.stream_id = stream[i];
          e.bytes = bytes[i];
          e.copy_kind = As<CopyKind>(kind[i]);
          e.device_id = As<uint32_t>(dev[i]);
          e.src_kind = As<MemoryKind>(src[i]);
          e.dst_kind = As<MemoryKind>(dst[i]);
          e.src_device_id = As<uint32_t>(src_dev[i]);
          e.dst_device_id = As<uint32_t>(dst_dev[i]);
          e.context_id = As<uint32_t>(ctx[i]);
          e.graph_node_id = node[i];
          e.external_id = ext[i];
        }
      });
    case pf::kMemsetColumns:
      Delta({2, 10});
      return DecodeKind(&out->memsets, [&](schema::MemsetEvent* events, size_t n) {
        const uint64_t *dur = c(1), *corr = c(2), *stream = c(3), *bytes = c(4), *value = c(5);
        const uint64_t *dev = c(6), *kind = c(7), *ctx = c(8), *node = c(9), *ext = c(10);
        for (size_t i = 0; i < n; ++i) {
          schema::MemsetEvent& e = events[i];
          e.start_ns = static_cast<int64_t>(start[i]);
          e.duration_ns = dur[i];
          e.correlation_id = corr[i];
          e.stream_id = stream[i];
          e.bytes = bytes[i];
          e.value = As<uint32_t>(value[i]);
          e.device_id = As<uint32_t>(dev[i]);
          e.memory_kind = As<MemoryKind>(kind[i]);
          e.context_id = As<uint32_t>(ctx[i]);
          e.graph_node_id = node[i];
          e.external_id = ext[i];
        }
      });
    case pf::kSyncColumns:
      Delta({3, 6, 8, 12});
      return DecodeKind(&out->syncs, [&](schema::SyncEvent* events, size_t n) {
        const uint64_t *dur = c(1), *type = c(2), *corr = c(3), *stream = c(4), *event = c(5);
        const uint64_t *sync_id = c(6), *wait_on = c(7), *record_corr = c(8), *dev = c(9);
        const uint64_t *ctx = c(10), *thread = c(11), *ext = c(12);
        for (size_t i = 0; i < n; ++i) {
          schema::SyncEvent& e = events[i];
          e.start_ns = static_cast<int64_t>(start[i]);
          e.duration_ns = dur[i];
          e.sync_type = As<SyncType>(type[i]);
          e.correlation_id = corr[i];
          e.stream_id = stream[i];
          e.event_id = event[i];
          e.cuda_event_sync_id = sync_id[i];
          e.wait_on_stream_id = wait_on[i];
          e.event_record_correlation_id = record_corr[i];
          e.device_id = As<uint32_t>(dev[i]);
          e.context_id = As<uint32_t>(ctx[i]);
          e.thread_id = As<uint32_t>(thread[i]);
          e.external_id = ext[i];
        }
      });
    case pf::kCudaEventColumns:
      Delta({1, 4});
      return DecodeKind(&out->cuda_events, [&](schema::CudaEventRecordEvent* events, size_t n) {
        const uint64_t *corr = c(1), *event = c(2), *stream = c(3), *sync_id = c(4);
        const uint64_t *dev = c(5), *ctx = c(6), *device_time = c(7);
        for (size_t i = 0; i < n; ++i) {
          schema::CudaEventRecordEvent& e = events[i];
          e.start_ns = static_cast<int64_t>(start[i]);
          e.correlation_id = corr[i];
          e.event_id = event[i];
          e.stream_id = stream[i];
          e.cuda_event_sync_id = sync_id[i];
          e.device_id = As<uint32_t>(dev[i]);
          e.context_id = As<uint32_t>(ctx[i]);
          e.has_device_timestamp = device_time[i] != 0;
        }
      });
    case pf::kNvtxColumns:
      return DecodeKind(&out->nvtx, [&](schema::NvtxEvent* events, size_t n) {
        const uint64_t *dur = c(1), *thread = c(2), *nm = c(3), *domain = c(4), *kind = c(5);
        const uint64_t *depth = c(6), *color = c(7), *category = c(8), *range = c(9);
        const uint64_t* end_thread = c(10);
        for (size_t i = 0; i < n; ++i) {
          schema::NvtxEvent& e = events[i];
          e.start_ns = static_cast<int64_t>(start[i]);
          e.duration_ns = dur[i];
          e.thread_id = As<uint32_t>(thread[i]);
          e.name = name(nm[i]);
          e.domain = name(domain[i]);
          e.kind = As<NvtxKind>(kind[i]);
          e.depth = As<uint32_t>(depth[i]);
          e.color_argb = As<uint32_t>(color[i]);
          e.category = As<uint32_t>(category[i]);
          e.range_id = range[i];
          e.end_thread_id = As<uint32_t>(end_thread[i]);
        }
      });
    case pf::kHostRangeColumns:
      Delta({5, 6});
      return DecodeKind(&out->host_ranges, [&](schema::HostRangeEvent* events, size_t n) {
        const uint64_t *dur = c(1), *thread = c(2), *nm = c(3), *category = c(4), *ext = c(5);
        const uint64_t *seq = c(6), *fwd = c(7), *stream = c(8), *dev = c(9), *step = c(10);
        const uint64_t* has_step = c(11);
        for (size_t i = 0; i < n; ++i) {
          schema::HostRangeEvent& e = events[i];
          e.start_ns = static_cast<int64_t>(start[i]);
          e.duration_ns = dur[i];
          e.thread_id = As<uint32_t>(thread[i]);
          e.name = name(nm[i]);
          e.category = As<HostRangeCategory>(category[i]);
          e.external_id = ext[i];
          e.sequence_number = seq[i];
          e.forward_thread_id = As<uint32_t>(fwd[i]);
          e.stream_id = stream[i];
          e.device_id = As<uint32_t>(dev[i]);
          e.has_step_number = has_step[i] != 0;
          e.step_number = e.has_step_number ? ZigZagDecode(step[i]) : 0;
        }
      });
    case pf::kCollectiveColumns:
      Delta({3, 18});
      return DecodeKind(&out->collectives, [&](schema::CollectiveEvent* events, size_t n) {
        const uint64_t *dur = c(1), *comm = c(2), *seq = c(3), *op = c(4), *count = c(5);
        const uint64_t *dtype = c(6), *bytes = c(7), *root = c(8), *peer = c(9), *stream = c(10);
        const uint64_t *gpu_offset = c(11), *gpu_dur = c(12), *algo = c(13), *proto = c(14);
        const uint64_t *channels = c(15), *dev = c(16), *reduce = c(17), *corr = c(18);
        const uint64_t *thread = c(19), *comm_size = c(20), *host_time = c(21);
        // Optional ranks: 0 = absent (-1 in CollectiveEvent), else rank + 1. Subtracted as
        // uint32: 2^31 (the writer's code for rank INT32_MAX, or hostile input) would overflow
        // int32 (undefined behaviour); this way every value maps to the rank the writer coded.
        auto rank = [](uint64_t plus_1) {
          return static_cast<int32_t>(static_cast<uint32_t>(plus_1) - 1u);
        };
        for (size_t i = 0; i < n; ++i) {
          schema::CollectiveEvent& e = events[i];
          e.start_ns = static_cast<int64_t>(start[i]);
          e.duration_ns = dur[i];
          e.comm_id = comm[i];
          e.seq_number = seq[i];
          e.op = As<CollectiveOp>(op[i]);
          e.count = count[i];
          e.data_type = As<DataType>(dtype[i]);
          e.bytes = bytes[i];
          e.root_rank = rank(root[i]);
          e.peer_rank = rank(peer[i]);
          e.stream_id = stream[i];
          e.gpu_start_offset_ns = ZigZagDecode(gpu_offset[i]);
          e.gpu_duration_ns = gpu_dur[i];
          e.algorithm = As<NcclAlgorithm>(algo[i]);
          e.protocol = As<NcclProtocol>(proto[i]);
          e.channels = As<uint32_t>(channels[i]);
          e.device_id = As<uint32_t>(dev[i]);
          e.reduce_op = As<ReduceOp>(reduce[i]);
          e.correlation_id = corr[i];
          e.thread_id = As<uint32_t>(thread[i]);
          e.comm_size = As<uint32_t>(comm_size[i]);
          e.has_host_time = host_time[i] != 0;
        }
      });
    case pf::kGemmCallColumns:
      Delta({19, 20});
      return DecodeKind(&out->gemm_calls, [&](schema::GemmCallEvent* events, size_t n) {
        const uint64_t *dur = c(1), *thread = c(2), *api = c(3), *m = c(4), *n_ = c(5), *k = c(6);
        const uint64_t *batch = c(7), *ta = c(8), *tb = c(9), *at = c(10), *bt = c(11);
        const uint64_t *ct = c(12), *dt = c(13), *compute = c(14), *math = c(15), *stream = c(16);
        const uint64_t *rc = c(17), *nm = c(18), *ext = c(19), *corr = c(20);
        const uint64_t *heads = c(21), *kv_heads = c(22), *dim_v = c(23), *mask = c(24);
        for (size_t i = 0; i < n; ++i) {
          schema::GemmCallEvent& e = events[i];
          e.start_ns = static_cast<int64_t>(start[i]);
          e.duration_ns = dur[i];
          e.thread_id = As<uint32_t>(thread[i]);
          e.api = As<GemmApi>(api[i]);
          e.m = m[i];
          e.n = n_[i];
          e.k = k[i];
          e.batch_count = batch[i];
          e.transa = As<GemmTranspose>(ta[i]);
          e.transb = As<GemmTranspose>(tb[i]);
          e.a_type = As<DataType>(at[i]);
          e.b_type = As<DataType>(bt[i]);
          e.c_type = As<DataType>(ct[i]);
          e.d_type = As<DataType>(dt[i]);
          e.compute_type = As<GemmComputeType>(compute[i]);
          e.math_mode = As<GemmMathMode>(math[i]);
          e.stream_id = stream[i];
          e.return_code = static_cast<int32_t>(ZigZagDecode(rc[i]));
          e.name = name(nm[i]);
          e.external_id = ext[i];
          e.correlation_id = corr[i];
          e.heads = As<uint32_t>(heads[i]);
          e.kv_heads = As<uint32_t>(kv_heads[i]);
          e.head_dim_v = dim_v[i];
          e.mask = As<AttentionMask>(mask[i]);
        }
      });
    default:
      return ErrorStatus("TracePacket field %u holds no columns", packet_field);
  }
}

}  // namespace lumos::modeler
