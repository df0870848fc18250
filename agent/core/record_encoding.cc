#include "agent/core/record_encoding.h"

#include "agent/core/string_table.h"
#include "schema/writer/trace_file_writer.h"

namespace lumos::agent {
namespace {

uint64_t DurationNs(const Record& record) {
  // A producer whose clock stepped backwards gets 0, not a huge unsigned duration.
  return record.end_ns >= record.start_ns
             ? static_cast<uint64_t>(record.end_ns) - static_cast<uint64_t>(record.start_ns)
             : 0;
}

}  // namespace

const char* RecordKindName(RecordKind kind) {
  switch (kind) {
    case RecordKind::kApiCall:
      return "api_call";
    case RecordKind::kKernel:
      return "kernel";
    case RecordKind::kMemcpy:
      return "memcpy";
    case RecordKind::kMemset:
      return "memset";
    case RecordKind::kSync:
      return "sync";
    case RecordKind::kCudaEventRecord:
      return "cuda_event_record";
    case RecordKind::kNvtxRange:
      return "nvtx_range";
    case RecordKind::kCollective:
      return "collective";
    case RecordKind::kExtension:
      return "extension";
    case RecordKind::kCommunicator:
      return "communicator";
    case RecordKind::kGemmCall:
      return "gemm_call";
    case RecordKind::kInvalid:
      break;
  }
  return "invalid";
}

schema::ApiCallEvent ToApiCallEvent(const Record& head, const Record* extension,
                                    const StringTable& strings) {
  const ApiCallPayload& p = head.payload.api_call;
  return schema::ApiCallEvent{
      .start_ns = head.start_ns,
      .duration_ns = DurationNs(head),
      .thread_id = head.thread_id,
      .correlation_id = p.correlation_id,
      .kind = static_cast<schema::ApiKind>(p.api_kind),
      .cbid = p.cbid,
      .name = strings.Lookup(p.name_id),
      .stream_id = p.stream_id,
      .event_id = p.event_id,
      .domain = static_cast<schema::ApiDomain>(p.domain),
      .external_id = extension != nullptr ? extension->payload.api_call_ext.external_id : 0,
      .graph_id = p.graph_id,
      .return_code = p.return_code,
  };
}

schema::KernelEvent ToKernelEvent(const Record& head, const Record* extension,
                                  const StringTable& strings) {
  const KernelPayload& p = head.payload.kernel;
  schema::KernelEvent event{
      .start_ns = head.start_ns,
      .duration_ns = DurationNs(head),
      .correlation_id = p.correlation_id,
      .stream_id = p.stream_id,
      .name = strings.Lookup(p.name_id),
      .device_id = head.device_id,
      .grid = {p.grid_x, p.grid_y, p.grid_z},
      .block = {p.block_x, p.block_y, p.block_z},
      .registers_per_thread = p.registers_per_thread,
      .static_shared_memory_bytes = p.static_shared_memory_bytes,
      .dynamic_shared_memory_bytes = p.dynamic_shared_memory_bytes,
  };
  if (extension != nullptr) {
    const KernelExtension& x = extension->payload.kernel_ext;
    event.cluster = {x.cluster_x, x.cluster_y, x.cluster_z};
    event.context_id = x.context_id;
    event.graph_id = x.graph_id;
    event.graph_node_id = x.graph_node_id;
    event.launch_type = static_cast<schema::LaunchType>(x.launch_type);
    event.external_id = x.external_id;
  }
  return event;
}

schema::MemcpyEvent ToMemcpyEvent(const Record& head, const Record* extension) {
  const MemcpyPayload& p = head.payload.memcpy;
  return schema::MemcpyEvent{
      .start_ns = head.start_ns,
      .duration_ns = DurationNs(head),
      .correlation_id = p.correlation_id,
      .stream_id = p.stream_id,
      .bytes = p.bytes,
      .copy_kind = static_cast<schema::CopyKind>(p.copy_kind),
      .device_id = head.device_id,
      .src_kind = static_cast<schema::MemoryKind>(p.src_kind),
      .dst_kind = static_cast<schema::MemoryKind>(p.dst_kind),
      .src_device_id = p.src_device_id,
      .dst_device_id = p.dst_device_id,
      .context_id = p.context_id,
      .graph_node_id = p.graph_node_id,
      .external_id = extension != nullptr ? extension->payload.external_ext.external_id : 0,
  };
}

schema::MemsetEvent ToMemsetEvent(const Record& head, const Record* extension) {
  const MemsetPayload& p = head.payload.memset;
  return schema::MemsetEvent{
      .start_ns = head.start_ns,
      .duration_ns = DurationNs(head),
      .correlation_id = p.correlation_id,
      .stream_id = p.stream_id,
      .bytes = p.bytes,
      .value = p.value,
      .device_id = head.device_id,
      .memory_kind = static_cast<schema::MemoryKind>(p.memory_kind),
      .context_id = p.context_id,
      .graph_node_id = p.graph_node_id,
      .external_id = extension != nullptr ? extension->payload.external_ext.external_id : 0,
  };
}

schema::SyncEvent ToSyncEvent(const Record& head, const Record* extension) {
  const SyncPayload& p = head.payload.sync;
  return schema::SyncEvent{
      .start_ns = head.start_ns,
      .duration_ns = DurationNs(head),
      .sync_type = static_cast<schema::SyncType>(p.sync_type),
      .correlation_id = p.correlation_id,
      .stream_id = p.stream_id,
      .event_id = p.event_id,
      .cuda_event_sync_id = p.cuda_event_sync_id,
      .wait_on_stream_id = extension != nullptr ? extension->payload.sync_ext.wait_on_stream_id : 0,
      .event_record_correlation_id = p.event_record_correlation_id,
      .device_id = head.device_id,
      .context_id = p.context_id,
      .thread_id = head.thread_id,
      .external_id = extension != nullptr ? extension->payload.sync_ext.external_id : 0,
  };
}

schema::CudaEventRecordEvent ToCudaEventRecordEvent(const Record& head,
                                                    const Record* /*extension*/) {
  const CudaEventRecordPayload& p = head.payload.cuda_event;
  return schema::CudaEventRecordEvent{
      .start_ns = head.start_ns,
      .correlation_id = p.correlation_id,
      .event_id = p.event_id,
      .stream_id = p.stream_id,
      .cuda_event_sync_id = p.cuda_event_sync_id,
      .device_id = head.device_id,
      .context_id = p.context_id,
      .has_device_timestamp = (head.flags & kRecordFlagDeviceTimestamp) != 0,
  };
}

schema::CollectiveEvent ToCollectiveEvent(const Record& head, const Record* extension) {
  const CollectivePayload& p = head.payload.collective;
  const auto data_type = static_cast<schema::DataType>(p.data_type);
  schema::CollectiveEvent event{
      .start_ns = head.start_ns,
      .duration_ns = DurationNs(head),
      .comm_id = p.comm_id,
      .seq_number = p.seq_number,
      .op = static_cast<schema::CollectiveOp>(p.op),
      .count = p.count,
      .data_type = data_type,
      .bytes = p.count * schema::DataTypeBytes(data_type),
      .stream_id = p.stream_id,
      .algorithm = static_cast<schema::NcclAlgorithm>(p.algorithm),
      .protocol = static_cast<schema::NcclProtocol>(p.protocol),
      .channels = p.channels,
      .device_id = head.device_id,
      .reduce_op = static_cast<schema::ReduceOp>(p.reduce_op),
      .thread_id = head.thread_id,
      .has_host_time = (head.flags & kRecordFlagHasHostTime) != 0,
  };
  if (extension != nullptr) {
    const CollectiveExtension& x = extension->payload.collective_ext;
    if (x.bytes != 0) event.bytes = x.bytes;
    event.gpu_start_offset_ns = x.gpu_start_offset_ns;
    event.gpu_duration_ns = x.gpu_duration_ns;
    event.root_rank = x.root_rank;
    event.peer_rank = x.peer_rank;
    event.correlation_id = x.correlation_id;
    event.comm_size = x.comm_size;
  }
  return event;
}

schema::GemmCallEvent ToGemmCallEvent(const Record& head, const Record* extension) {
  const GemmPayload& p = head.payload.gemm;
  schema::GemmCallEvent event{
      .start_ns = head.start_ns,
      .duration_ns = DurationNs(head),
      .thread_id = head.thread_id,
      .api = static_cast<schema::GemmApi>(p.api),
      .m = p.m,
      .n = p.n,
      .k = p.k,
      .batch_count = p.batch_count,
      .transa = static_cast<schema::GemmTranspose>(p.transa),
      .transb = static_cast<schema::GemmTranspose>(p.transb),
      .a_type = static_cast<schema::DataType>(p.a_type),
      .b_type = static_cast<schema::DataType>(p.b_type),
      .c_type = static_cast<schema::DataType>(p.c_type),
      .d_type = static_cast<schema::DataType>(p.d_type),
      .compute_type = static_cast<schema::GemmComputeType>(p.compute_type),
      .math_mode = static_cast<schema::GemmMathMode>(p.math_mode),
      .stream_id = p.stream_id,
      .return_code = p.return_code,
  };
  if (extension != nullptr) {  // Dimensions beyond 32 bits.
    const GemmExtension& x = extension->payload.gemm_ext;
    event.m = x.m;
    event.n = x.n;
    event.k = x.k;
    event.batch_count = x.batch_count;
  }
  return event;
}

schema::CommunicatorEvent ToCommunicatorEvent(const Record& head, const StringTable& strings) {
  const CommunicatorPayload& p = head.payload.communicator;
  return schema::CommunicatorEvent{
      .start_ns = head.start_ns,
      .comm_id = p.comm_id,
      .rank = p.rank,
      .comm_size = p.comm_size,
      .device_id = head.device_id,
      .name = strings.Lookup(p.name_id),
      .global_ranks = {},
      .parent_comm_id = p.parent_comm_id,
  };
}

schema::NvtxEvent ToNvtxEvent(const Record& head, const Record* extension,
                              const StringTable& strings, std::string* scratch) {
  const NvtxPayload& p = head.payload.nvtx;
  std::string_view name;
  if (head.flags & kRecordFlagNameIsId) {
    name = strings.Lookup(p.name.string_id);
  } else if (head.flags & kRecordFlagNameTruncated) {
    scratch->assign(NvtxInlineName(head));
    scratch->append("...");
    name = *scratch;
  } else {
    name = NvtxInlineName(head);
  }
  schema::NvtxEvent event{
      .start_ns = head.start_ns,
      .duration_ns = DurationNs(head),
      .thread_id = head.thread_id,
      .name = name,
      .domain = strings.Lookup(p.domain_id),
      .kind = static_cast<schema::NvtxKind>(p.nvtx_kind),
      .depth = p.depth,
      .color_argb = p.color_argb,
      .category = p.category,
  };
  if (extension != nullptr) {
    event.range_id = extension->payload.nvtx_ext.range_id;
    event.end_thread_id = extension->payload.nvtx_ext.end_thread_id;
  }
  return event;
}

schema::LossEvent ToLossEvent(const RingDropReport& report) {
  return schema::LossEvent{
      .start_ns = report.first_drop_ns,
      .duration_ns = report.last_drop_ns > report.first_drop_ns
                         ? static_cast<uint64_t>(report.last_drop_ns - report.first_drop_ns)
                         : 0,
      .source = schema::LossSource::kRingFull,
      .count = report.count,
      .thread_id = report.thread_id,
      .detail =
          !report.has_ring ? "ring arena exhausted: thread has no ring" : "per-thread ring full",
  };
}

bool RecordEncoder::Add(const Record& head, const Record* extension) {
  if (extension != nullptr && extension->kind != RecordKind::kExtension) {
    ++malformed_;
    return false;
  }
  switch (head.kind) {
    case RecordKind::kApiCall:
      writer_->Add(ToApiCallEvent(head, extension, *strings_));
      break;
    case RecordKind::kKernel:
      writer_->Add(ToKernelEvent(head, extension, *strings_));
      break;
    case RecordKind::kMemcpy:
      writer_->Add(ToMemcpyEvent(head, extension));
      break;
    case RecordKind::kMemset:
      writer_->Add(ToMemsetEvent(head, extension));
      break;
    case RecordKind::kSync:
      writer_->Add(ToSyncEvent(head, extension));
      break;
    case RecordKind::kCudaEventRecord:
      writer_->Add(ToCudaEventRecordEvent(head, extension));
      break;
    case RecordKind::kNvtxRange:
      writer_->Add(ToNvtxEvent(head, extension, *strings_, &scratch_));
      break;
    case RecordKind::kCollective:
      writer_->Add(ToCollectiveEvent(head, extension));
      break;
    case RecordKind::kCommunicator:
      writer_->Add(ToCommunicatorEvent(head, *strings_));
      break;
    case RecordKind::kGemmCall:
      writer_->Add(ToGemmCallEvent(head, extension));
      break;
    case RecordKind::kExtension:  // An extension without its head.
    case RecordKind::kInvalid:
    default:
      ++malformed_;
      return false;
  }
  ++events_;
  return true;
}

void RecordEncoder::AddDrops(const std::vector<RingDropReport>& reports) {
  for (const RingDropReport& report : reports) writer_->Add(ToLossEvent(report));
}

}  // namespace lumos::agent
