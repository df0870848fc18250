#include "modeler/trace/event_packets.h"

namespace lumos::modeler {
namespace {

// Row -> struct, one function per kind. Enums share their numbers with the proto enums.

schema::KernelEvent KernelFromRow(const pb::KernelEvent& r, int64_t start_ns,
                                  const InternTable& strings) {
  schema::KernelEvent e;
  e.start_ns = start_ns;
  e.duration_ns = r.duration_ns();
  e.correlation_id = r.correlation_id();
  e.stream_id = r.stream_id();
  e.name = strings.Get(r.name_iid());
  e.device_id = r.device_id();
  e.grid = {r.grid_x(), r.grid_y(), r.grid_z()};
  e.block = {r.block_x(), r.block_y(), r.block_z()};
  e.cluster = {r.cluster_x(), r.cluster_y(), r.cluster_z()};
  e.registers_per_thread = r.registers_per_thread();
  e.static_shared_memory_bytes = r.static_shared_memory_bytes();
  e.dynamic_shared_memory_bytes = r.dynamic_shared_memory_bytes();
  e.context_id = r.context_id();
  e.graph_id = r.graph_id();
  e.graph_node_id = r.graph_node_id();
  e.launch_type = static_cast<schema::LaunchType>(r.launch_type());
  e.external_id = r.external_id();
  return e;
}

schema::ApiCallEvent ApiCallFromRow(const pb::ApiCall& r, int64_t start_ns,
                                    const InternTable& strings) {
  schema::ApiCallEvent e;
  e.start_ns = start_ns;
  e.duration_ns = r.duration_ns();
  e.thread_id = r.thread_id();
  e.correlation_id = r.correlation_id();
  e.kind = static_cast<schema::ApiKind>(r.kind());
  e.cbid = r.cbid();
  e.name = strings.Get(r.name_iid());
  e.stream_id = r.stream_id();
  e.event_id = r.event_id();
  e.domain = static_cast<schema::ApiDomain>(r.domain());
  e.external_id = r.external_id();
  e.graph_id = r.graph_id();
  e.return_code = r.return_code();
  return e;
}

schema::MemcpyEvent MemcpyFromRow(const pb::MemcpyEvent& r, int64_t start_ns) {
  schema::MemcpyEvent e;
  e.start_ns = start_ns;
  e.duration_ns = r.duration_ns();
  e.correlation_id = r.correlation_id();
  e.stream_id = r.stream_id();
  e.bytes = r.bytes();
  e.copy_kind = static_cast<schema::CopyKind>(r.copy_kind());
  e.device_id = r.device_id();
  e.src_kind = static_cast<schema::MemoryKind>(r.src_kind());
  e.dst_kind = static_cast<schema::MemoryKind>(r.dst_kind());
  e.src_device_id = r.src_device_id();
  e.dst_device_id = r.dst_device_id();
  e.context_id = r.context_id();
  e.graph_node_id = r.graph_node_id();
  e.external_id = r.external_id();
  return e;
}

schema::MemsetEvent MemsetFromRow(const pb::MemsetEvent& r, int64_t start_ns) {
  schema::MemsetEvent e;
  e.start_ns = start_ns;
  e.duration_ns = r.duration_ns();
  e.correlation_id = r.correlation_id();
  e.stream_id = r.stream_id();
  e.bytes = r.bytes();
  e.value = r.value();
  e.device_id = r.device_id();
  e.memory_kind = static_cast<schema::MemoryKind>(r.memory_kind());
  e.context_id = r.context_id();
  e.graph_node_id = r.graph_node_id();
  e.external_id = r.external_id();
  return e;
}

schema::SyncEvent SyncFromRow(const pb::SyncEvent& r, int64_t start_ns) {
  schema::SyncEvent e;
  e.start_ns = start_ns;
  e.duration_ns = r.duration_ns();
  e.sync_type = static_cast<schema::SyncType>(r.sync_type());
  e.correlation_id = r.correlation_id();
  e.stream_id = r.stream_id();
  e.event_id = r.event_id();
  e.cuda_event_sync_id = r.cuda_event_sync_id();
  e.wait_on_stream_id = r.wait_on_stream_id();
  e.event_record_correlation_id = r.event_record_correlation_id();
  e.device_id = r.device_id();
  e.context_id = r.context_id();
  e.thread_id = r.thread_id();
  e.external_id = r.external_id();
  return e;
}

schema::CudaEventRecordEvent CudaEventFromRow(const pb::CudaEventRecord& r, int64_t start_ns) {
  schema::CudaEventRecordEvent e;
  e.start_ns = start_ns;
  e.correlation_id = r.correlation_id();
  e.event_id = r.event_id();
  e.stream_id = r.stream_id();
  e.cuda_event_sync_id = r.cuda_event_sync_id();
  e.device_id = r.device_id();
  e.context_id = r.context_id();
  e.has_device_timestamp = r.has_device_timestamp();
  return e;
}

schema::NvtxEvent NvtxFromRow(const pb::NvtxRange& r, int64_t start_ns,
                              const InternTable& strings) {
  schema::NvtxEvent e;
  e.start_ns = start_ns;
  e.duration_ns = r.duration_ns();
  e.thread_id = r.thread_id();
  e.name = strings.Get(r.name_iid());
  e.domain = strings.Get(r.domain_iid());
  e.kind = static_cast<schema::NvtxKind>(r.kind());
  e.depth = r.depth();
  e.color_argb = r.color_argb();
  e.category = r.category();
  e.range_id = r.range_id();
  e.end_thread_id = r.end_thread_id();
  return e;
}

schema::HostRangeEvent HostRangeFromRow(const pb::HostRange& r, int64_t start_ns,
                                        const InternTable& strings) {
  schema::HostRangeEvent e;
  e.start_ns = start_ns;
  e.duration_ns = r.duration_ns();
  e.thread_id = r.thread_id();
  e.name = strings.Get(r.name_iid());
  e.category = static_cast<schema::HostRangeCategory>(r.category());
  e.external_id = r.external_id();
  e.sequence_number = r.sequence_number();
  e.forward_thread_id = r.forward_thread_id();
  e.stream_id = r.stream_id();
  e.device_id = r.device_id();
  e.has_step_number = r.has_step_number();
  e.step_number = r.step_number();
  return e;
}

schema::CollectiveEvent CollectiveFromRow(const pb::NcclCollective& r, int64_t start_ns) {
  schema::CollectiveEvent e;
  e.start_ns = start_ns;
  e.duration_ns = r.duration_ns();
  e.comm_id = r.comm_id();
  e.seq_number = r.seq_number();
  e.op = static_cast<schema::CollectiveOp>(r.op());
  e.count = r.count();
  e.data_type = static_cast<schema::DataType>(r.data_type());
  e.bytes = r.bytes();
  e.root_rank = r.has_root_rank() ? r.root_rank() : -1;
  e.peer_rank = r.has_peer_rank() ? r.peer_rank() : -1;
  e.stream_id = r.stream_id();
  e.gpu_start_offset_ns = r.gpu_start_offset_ns();
  e.gpu_duration_ns = r.gpu_duration_ns();
  e.algorithm = static_cast<schema::NcclAlgorithm>(r.algorithm());
  e.protocol = static_cast<schema::NcclProtocol>(r.protocol());
  e.channels = r.channels();
  e.device_id = r.device_id();
  e.reduce_op = static_cast<schema::ReduceOp>(r.reduce_op());
  e.correlation_id = r.correlation_id();
  e.thread_id = r.thread_id();
  e.comm_size = r.comm_size();
  e.has_host_time = r.has_host_time();
  return e;
}

schema::GemmCallEvent GemmCallFromRow(const pb::GemmCall& r, int64_t start_ns,
                                      const InternTable& strings) {
  schema::GemmCallEvent e;
  e.start_ns = start_ns;
  e.duration_ns = r.duration_ns();
  e.thread_id = r.thread_id();
  e.api = static_cast<schema::GemmApi>(r.api());
  e.m = r.m();
  e.n = r.n();
  e.k = r.k();
  e.batch_count = r.batch_count();
  e.transa = static_cast<schema::GemmTranspose>(r.transa());
  e.transb = static_cast<schema::GemmTranspose>(r.transb());
  e.a_type = static_cast<schema::DataType>(r.a_type());
  e.b_type = static_cast<schema::DataType>(r.b_type());
  e.c_type = static_cast<schema::DataType>(r.c_type());
  e.d_type = static_cast<schema::DataType>(r.d_type());
  e.compute_type = static_cast<schema::GemmComputeType>(r.compute_type());
  e.math_mode = static_cast<schema::GemmMathMode>(r.math_mode());
  e.stream_id = r.stream_id();
  e.return_code = r.return_code();
  e.name = strings.Get(r.name_iid());
  e.external_id = r.external_id();
  e.correlation_id = r.correlation_id();
  e.heads = r.heads();
  e.kv_heads = r.kv_heads();
  e.head_dim_v = r.head_dim_v();
  e.mask = static_cast<schema::AttentionMask>(r.mask());
  return e;
}

}  // namespace

bool AppendEventFromPacket(const pb::TracePacket& packet, int64_t start_ns,
                           const InternTable& strings, FrameEvents* out) {
  switch (packet.data_case()) {
    case pb::TracePacket::kKernel:
      out->kernels.push_back(KernelFromRow(packet.kernel(), start_ns, strings));
      return true;
    case pb::TracePacket::kApiCall:
      out->api_calls.push_back(ApiCallFromRow(packet.api_call(), start_ns, strings));
      return true;
    case pb::TracePacket::kMemcpy:
      out->memcpys.push_back(MemcpyFromRow(packet.memcpy(), start_ns));
      return true;
    case pb::TracePacket::kMemset:
      out->memsets.push_back(MemsetFromRow(packet.memset(), start_ns));
      return true;
    case pb::TracePacket::kSync:
      out->syncs.push_back(SyncFromRow(packet.sync(), start_ns));
      return true;
    case pb::TracePacket::kCudaEvent:
      out->cuda_events.push_back(CudaEventFromRow(packet.cuda_event(), start_ns));
      return true;
    case pb::TracePacket::kNvtx:
      out->nvtx.push_back(NvtxFromRow(packet.nvtx(), start_ns, strings));
      return true;
    case pb::TracePacket::kHostRange:
      out->host_ranges.push_back(HostRangeFromRow(packet.host_range(), start_ns, strings));
      return true;
    case pb::TracePacket::kCollective:
      out->collectives.push_back(CollectiveFromRow(packet.collective(), start_ns));
      return true;
    case pb::TracePacket::kGemmCall:
      out->gemm_calls.push_back(GemmCallFromRow(packet.gemm_call(), start_ns, strings));
      return true;
    default:
      return false;
  }
}

// Struct -> row, one overload per kind.

void EventToPacket(const schema::KernelEvent& e, const InternTable& strings, int64_t start_delta_ns,
                   pb::TracePacket* packet) {
  packet->Clear();
  packet->set_start_delta_ns(start_delta_ns);
  pb::KernelEvent* r = packet->mutable_kernel();
  r->set_duration_ns(e.duration_ns);
  r->set_correlation_id(e.correlation_id);
  r->set_stream_id(e.stream_id);
  r->set_name_iid(strings.IidOf(e.name));
  r->set_device_id(e.device_id);
  r->set_grid_x(e.grid.x);
  r->set_grid_y(e.grid.y);
  r->set_grid_z(e.grid.z);
  r->set_block_x(e.block.x);
  r->set_block_y(e.block.y);
  r->set_block_z(e.block.z);
  r->set_registers_per_thread(e.registers_per_thread);
  r->set_static_shared_memory_bytes(e.static_shared_memory_bytes);
  r->set_dynamic_shared_memory_bytes(e.dynamic_shared_memory_bytes);
  r->set_context_id(e.context_id);
  r->set_graph_id(e.graph_id);
  r->set_graph_node_id(e.graph_node_id);
  r->set_launch_type(static_cast<pb::LaunchType>(e.launch_type));
  r->set_external_id(e.external_id);
  r->set_cluster_x(e.cluster.x);
  r->set_cluster_y(e.cluster.y);
  r->set_cluster_z(e.cluster.z);
}

void EventToPacket(const schema::ApiCallEvent& e, const InternTable& strings,
                   int64_t start_delta_ns, pb::TracePacket* packet) {
  packet->Clear();
  packet->set_start_delta_ns(start_delta_ns);
  pb::ApiCall* r = packet->mutable_api_call();
  r->set_duration_ns(e.duration_ns);
  r->set_thread_id(e.thread_id);
  r->set_correlation_id(e.correlation_id);
  r->set_kind(static_cast<pb::ApiKind>(e.kind));
  r->set_cbid(e.cbid);
  r->set_name_iid(strings.IidOf(e.name));
  r->set_stream_id(e.stream_id);
  r->set_event_id(e.event_id);
  r->set_domain(static_cast<pb::ApiDomain>(e.domain));
  r->set_external_id(e.external_id);
  r->set_graph_id(e.graph_id);
  r->set_return_code(e.return_code);
}

void EventToPacket(const schema::MemcpyEvent& e, const InternTable& /*strings*/,
                   int64_t start_delta_ns, pb::TracePacket* packet) {
  packet->Clear();
  packet->set_start_delta_ns(start_delta_ns);
  pb::MemcpyEvent* r = packet->mutable_memcpy();
  r->set_duration_ns(e.duration_ns);
  r->set_correlation_id(e.correlation_id);
  r->set_stream_id(e.stream_id);
  r->set_bytes(e.bytes);
  r->set_copy_kind(static_cast<pb::CopyKind>(e.copy_kind));
  r->set_device_id(e.device_id);
  r->set_src_kind(static_cast<pb::MemoryKind>(e.src_kind));
  r->set_dst_kind(static_cast<pb::MemoryKind>(e.dst_kind));
  r->set_src_device_id(e.src_device_id);
  r->set_dst_device_id(e.dst_device_id);
  r->set_context_id(e.context_id);
  r->set_graph_node_id(e.graph_node_id);
  r->set_external_id(e.external_id);
}

void EventToPacket(const schema::MemsetEvent& e, const InternTable& /*strings*/,
                   int64_t start_delta_ns, pb::TracePacket* packet) {
  packet->Clear();
  packet->set_start_delta_ns(start_delta_ns);
  pb::MemsetEvent* r = packet->mutable_memset();
  r->set_duration_ns(e.duration_ns);
  r->set_correlation_id(e.correlation_id);
  r->set_stream_id(e.stream_id);
  r->set_bytes(e.bytes);
  r->set_value(e.value);
  r->set_device_id(e.device_id);
  r->set_memory_kind(static_cast<pb::MemoryKind>(e.memory_kind));
  r->set_context_id(e.context_id);
  r->set_graph_node_id(e.graph_node_id);
  r->set_external_id(e.external_id);
}

void EventToPacket(const schema::SyncEvent& e, const InternTable& /*strings*/,
                   int64_t start_delta_ns, pb::TracePacket* packet) {
  packet->Clear();
  packet->set_start_delta_ns(start_delta_ns);
  pb::SyncEvent* r = packet->mutable_sync();
  r->set_duration_ns(e.duration_ns);
  r->set_sync_type(static_cast<pb::SyncType>(e.sync_type));
  r->set_correlation_id(e.correlation_id);
  r->set_stream_id(e.stream_id);
  r->set_event_id(e.event_id);
  r->set_cuda_event_sync_id(e.cuda_event_sync_id);
  r->set_wait_on_stream_id(e.wait_on_stream_id);
  r->set_event_record_correlation_id(e.event_record_correlation_id);
  r->set_device_id(e.device_id);
  r->set_context_id(e.context_id);
  r->set_thread_id(e.thread_id);
  r->set_external_id(e.external_id);
}

void EventToPacket(const schema::CudaEventRecordEvent& e, const InternTable& /*strings*/,
                   int64_t start_delta_ns, pb::TracePacket* packet) {
  packet->Clear();
  packet->set_start_delta_ns(start_delta_ns);
  pb::CudaEventRecord* r = packet->mutable_cuda_event();
  r->set_correlation_id(e.correlation_id);
  r->set_event_id(e.event_id);
  r->set_stream_id(e.stream_id);
  r->set_cuda_event_sync_id(e.cuda_event_sync_id);
  r->set_device_id(e.device_id);
  r->set_context_id(e.context_id);
  r->set_has_device_timestamp(e.has_device_timestamp);
}

void EventToPacket(const schema::NvtxEvent& e, const InternTable& strings, int64_t start_delta_ns,
                   pb::TracePacket* packet) {
  packet->Clear();
  packet->set_start_delta_ns(start_delta_ns);
  pb::NvtxRange* r = packet->mutable_nvtx();
  r->set_duration_ns(e.duration_ns);
  r->set_thread_id(e.thread_id);
  r->set_name_iid(strings.IidOf(e.name));
  r->set_domain_iid(strings.IidOf(e.domain));
  r->set_kind(static_cast<pb::NvtxKind>(e.kind));
  r->set_depth(e.depth);
  r->set_color_argb(e.color_argb);
  r->set_category(e.category);
  r->set_range_id(e.range_id);
  r->set_end_thread_id(e.end_thread_id);
}

void EventToPacket(const schema::HostRangeEvent& e, const InternTable& strings,
                   int64_t start_delta_ns, pb::TracePacket* packet) {
  packet->Clear();
  packet->set_start_delta_ns(start_delta_ns);
  pb::HostRange* r = packet->mutable_host_range();
  r->set_duration_ns(e.duration_ns);
  r->set_thread_id(e.thread_id);
  r->set_name_iid(strings.IidOf(e.name));
  r->set_category(static_cast<pb::HostRangeCategory>(e.category));
  r->set_external_id(e.external_id);
  r->set_sequence_number(e.sequence_number);
  r->set_forward_thread_id(e.forward_thread_id);
  r->set_stream_id(e.stream_id);
  r->set_device_id(e.device_id);
  if (e.has_step_number) r->set_step_number(e.step_number);
}

void EventToPacket(const schema::CollectiveEvent& e, const InternTable& /*strings*/,
                   int64_t start_delta_ns, pb::TracePacket* packet) {
  packet->Clear();
  packet->set_start_delta_ns(start_delta_ns);
  pb::NcclCollective* r = packet->mutable_collective();
  r->set_duration_ns(e.duration_ns);
  r->set_comm_id(e.comm_id);
  r->set_seq_number(e.seq_number);
  r->set_op(static_cast<pb::CollectiveOp>(e.op));
  r->set_count(e.count);
  r->set_data_type(static_cast<pb::DataType>(e.data_type));
  r->set_bytes(e.bytes);
  // Negative ranks (-1) mean "absent", as in the writer's encoders.
  if (e.root_rank >= 0) r->set_root_rank(e.root_rank);
  if (e.peer_rank >= 0) r->set_peer_rank(e.peer_rank);
  r->set_stream_id(e.stream_id);
  r->set_gpu_start_offset_ns(e.gpu_start_offset_ns);
  r->set_gpu_duration_ns(e.gpu_duration_ns);
  r->set_algorithm(static_cast<pb::NcclAlgorithm>(e.algorithm));
  r->set_protocol(static_cast<pb::NcclProtocol>(e.protocol));
  r->set_channels(e.channels);
  r->set_device_id(e.device_id);
  r->set_reduce_op(static_cast<pb::ReduceOp>(e.reduce_op));
  r->set_correlation_id(e.correlation_id);
  r->set_thread_id(e.thread_id);
  r->set_comm_size(e.comm_size);
  r->set_has_host_time(e.has_host_time);
}

void EventToPacket(const schema::GemmCallEvent& e, const InternTable& strings,
                   int64_t start_delta_ns, pb::TracePacket* packet) {
  packet->Clear();
  packet->set_start_delta_ns(start_delta_ns);
  pb::GemmCall* r = packet->mutable_gemm_call();
  r->set_duration_ns(e.duration_ns);
  r->set_thread_id(e.thread_id);
  r->set_api(static_cast<pb::GemmApi>(e.api));
  r->set_m(e.m);
  r->set_n(e.n);
  r->set_k(e.k);
  r->set_batch_count(e.batch_count);
  r->set_transa(static_cast<pb::GemmTranspose>(e.transa));
  r->set_transb(static_cast<pb::GemmTranspose>(e.transb));
  r->set_a_type(static_cast<pb::DataType>(e.a_type));
  r->set_b_type(static_cast<pb::DataType>(e.b_type));
  r->set_c_type(static_cast<pb::DataType>(e.c_type));
  r->set_d_type(static_cast<pb::DataType>(e.d_type));
  r->set_compute_type(static_cast<pb::GemmComputeType>(e.compute_type));
  r->set_math_mode(static_cast<pb::GemmMathMode>(e.math_mode));
  r->set_stream_id(e.stream_id);
  r->set_return_code(e.return_code);
  r->set_name_iid(strings.IidOf(e.name));
  r->set_external_id(e.external_id);
  r->set_correlation_id(e.correlation_id);
  r->set_heads(e.heads);
  r->set_kv_heads(e.kv_heads);
  r->set_head_dim_v(e.head_dim_v);
  r->set_mask(static_cast<pb::AttentionMask>(e.mask));
}

}  // namespace lumos::modeler
