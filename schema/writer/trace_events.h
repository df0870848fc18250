// Design: the events the trace writer accepts, one plain struct per TracePacket kind of
// schema/lumos/trace.proto (field meanings are documented there). Strings are string_views
// that only need to live until the Add*() call returns: the writer interns them per frame.
// Times are integer ns in the trace's default clock; 0 in a field means "not known"
// (proto3 default) unless a comment says otherwise. The modeler's reader hands the frequent
// kinds back in the same structs (modeler/trace/frame_events.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schema/enums.h"

namespace lumos::schema {

// Whether an event that starts at `start_ns` and lasts `duration_ns` ends inside the int64 range
// of times. The modeler's reader refuses an event that does not (a hostile or damaged trace), so
// code downstream of it adds start and duration freely; code that meets events before that check
// (an importer) uses EventEndNs.
inline bool EndsInTimeRange(int64_t start_ns, uint64_t duration_ns) {
  int64_t end = 0;
  return duration_ns <= static_cast<uint64_t>(INT64_MAX) &&
         !__builtin_add_overflow(start_ns, static_cast<int64_t>(duration_ns), &end);
}

// The end of such an event, INT64_MAX where it lies beyond the range.
inline int64_t EventEndNs(int64_t start_ns, uint64_t duration_ns) {
  return EndsInTimeRange(start_ns, duration_ns) ? start_ns + static_cast<int64_t>(duration_ns)
                                                : INT64_MAX;
}

struct Dim3 {
  uint32_t x = 0, y = 0, z = 0;
  bool operator==(const Dim3&) const = default;
};

struct KernelEvent {
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint64_t correlation_id = 0;
  uint64_t stream_id = 0;
  std::string_view name;
  uint32_t device_id = 0;
  Dim3 grid, block, cluster;
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_memory_bytes = 0;
  uint32_t dynamic_shared_memory_bytes = 0;
  uint32_t context_id = 0;
  uint64_t graph_id = 0;
  uint64_t graph_node_id = 0;
  LaunchType launch_type = LaunchType::kUnspecified;
  uint64_t external_id = 0;
  // Field by field; names compare by content.
  bool operator==(const KernelEvent&) const = default;
};

struct ApiCallEvent {
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint32_t thread_id = 0;
  uint64_t correlation_id = 0;
  ApiKind kind = ApiKind::kUnspecified;
  uint32_t cbid = 0;
  std::string_view name;
  uint64_t stream_id = 0;
  uint64_t event_id = 0;
  ApiDomain domain = ApiDomain::kUnspecified;
  uint64_t external_id = 0;
  uint64_t graph_id = 0;
  int32_t return_code = 0;
  // Field by field; names compare by content.
  bool operator==(const ApiCallEvent&) const = default;
};

struct MemcpyEvent {
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint64_t correlation_id = 0;
  uint64_t stream_id = 0;
  uint64_t bytes = 0;
  CopyKind copy_kind = CopyKind::kUnspecified;
  uint32_t device_id = 0;
  MemoryKind src_kind = MemoryKind::kUnspecified;
  MemoryKind dst_kind = MemoryKind::kUnspecified;
  uint32_t src_device_id = 0;
  uint32_t dst_device_id = 0;
  uint32_t context_id = 0;
  uint64_t graph_node_id = 0;
  uint64_t external_id = 0;
  // Field by field; names compare by content.
  bool operator==(const MemcpyEvent&) const = default;
};

struct MemsetEvent {
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint64_t correlation_id = 0;
  uint64_t stream_id = 0;
  uint64_t bytes = 0;
  uint32_t value = 0;
  uint32_t device_id = 0;
  MemoryKind memory_kind = MemoryKind::kUnspecified;
  uint32_t context_id = 0;
  uint64_t graph_node_id = 0;
  uint64_t external_id = 0;
  // Field by field; names compare by content.
  bool operator==(const MemsetEvent&) const = default;
};

struct SyncEvent {
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
  SyncType sync_type = SyncType::kUnspecified;
  uint64_t correlation_id = 0;
  uint64_t stream_id = 0;
  uint64_t event_id = 0;
  uint64_t cuda_event_sync_id = 0;
  uint64_t wait_on_stream_id = 0;
  uint64_t event_record_correlation_id = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t thread_id = 0;
  uint64_t external_id = 0;
  // Field by field; names compare by content.
  bool operator==(const SyncEvent&) const = default;
};

struct CudaEventRecordEvent {
  int64_t start_ns = 0;
  uint64_t correlation_id = 0;
  uint64_t event_id = 0;
  uint64_t stream_id = 0;
  uint64_t cuda_event_sync_id = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  bool has_device_timestamp = false;
  // Field by field; names compare by content.
  bool operator==(const CudaEventRecordEvent&) const = default;
};

struct NvtxEvent {
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint32_t thread_id = 0;
  std::string_view name;
  std::string_view domain;  // Empty: the default domain.
  NvtxKind kind = NvtxKind::kUnspecified;
  uint32_t depth = 0;
  uint32_t color_argb = 0;
  uint32_t category = 0;
  uint64_t range_id = 0;
  uint32_t end_thread_id = 0;
  // Field by field; names compare by content.
  bool operator==(const NvtxEvent&) const = default;
};

struct HostRangeEvent {
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint32_t thread_id = 0;
  std::string_view name;
  HostRangeCategory category = HostRangeCategory::kUnspecified;
  uint64_t external_id = 0;
  uint64_t sequence_number = 0;
  uint32_t forward_thread_id = 0;
  uint64_t stream_id = 0;
  uint32_t device_id = 0;
  bool has_step_number = false;
  int64_t step_number = 0;
  // Field by field; names compare by content.
  bool operator==(const HostRangeEvent&) const = default;
};

struct CollectiveEvent {
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint64_t comm_id = 0;
  uint64_t seq_number = 0;
  CollectiveOp op = CollectiveOp::kUnspecified;
  uint64_t count = 0;
  DataType data_type = DataType::kUnspecified;
  uint64_t bytes = 0;
  int32_t root_rank = -1;  // -1: not a rooted op (field left absent).
  int32_t peer_rank = -1;  // -1: not point-to-point (field left absent).
  uint64_t stream_id = 0;
  int64_t gpu_start_offset_ns = 0;
  uint64_t gpu_duration_ns = 0;
  NcclAlgorithm algorithm = NcclAlgorithm::kUnspecified;
  NcclProtocol protocol = NcclProtocol::kUnspecified;
  uint32_t channels = 0;
  uint32_t device_id = 0;
  ReduceOp reduce_op = ReduceOp::kUnspecified;
  uint64_t correlation_id = 0;
  uint32_t thread_id = 0;
  uint32_t comm_size = 0;
  bool has_host_time = false;
  // Field by field; names compare by content.
  bool operator==(const CollectiveEvent&) const = default;
};

// A GEMM problem (GemmCall, schema 2.2): D = op(A) op(B) (+ C), op(A) m x k, op(B) k x n,
// batch_count times; the call's host span on thread_id.
struct GemmCallEvent {
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint32_t thread_id = 0;
  GemmApi api = GemmApi::kUnspecified;
  uint64_t m = 0, n = 0, k = 0;
  uint64_t batch_count = 0;
  GemmTranspose transa = GemmTranspose::kUnspecified;
  GemmTranspose transb = GemmTranspose::kUnspecified;
  DataType a_type = DataType::kUnspecified;
  DataType b_type = DataType::kUnspecified;
  DataType c_type = DataType::kUnspecified;
  DataType d_type = DataType::kUnspecified;
  GemmComputeType compute_type = GemmComputeType::kUnspecified;
  GemmMathMode math_mode = GemmMathMode::kUnspecified;
  uint64_t stream_id = 0;
  int32_t return_code = 0;
  std::string_view name;  // Imported: the operator; empty for the agent's.
  uint64_t external_id = 0;
  uint64_t correlation_id = 0;  // The launch it made, when known (0: linked by span).
  // Attention problems only (api kFrameworkAttention*; trace.proto has the meaning).
  uint32_t heads = 0;
  uint32_t kv_heads = 0;
  uint64_t head_dim_v = 0;
  AttentionMask mask = AttentionMask::kUnspecified;
  // Field by field; names compare by content.
  bool operator==(const GemmCallEvent&) const = default;
};

struct CommunicatorEvent {
  int64_t start_ns = 0;
  uint64_t comm_id = 0;
  int32_t rank = 0;
  uint32_t comm_size = 0;
  uint32_t device_id = 0;
  std::string_view name;
  std::vector<int32_t> global_ranks;
  uint64_t parent_comm_id = 0;
};

// A capture window (trace.proto CaptureWindow). Owns its strings: it also goes into the header.
struct CaptureWindowEvent {
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint64_t window_index = 0;
  WindowTrigger trigger = WindowTrigger::kUnspecified;
  uint64_t first_iteration = 0;
  uint64_t iteration_count = 0;
  std::string iteration_marker;
  std::string requested_by;
  uint64_t request_id = 0;
  std::string target;
  std::string missed_target;
  uint64_t start_realtime_ns = 0;
  uint64_t requested_iterations = 0;
  uint64_t requested_duration_ns = 0;
};

struct LossEvent {
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
  LossSource source = LossSource::kUnspecified;
  uint64_t count = 0;
  uint32_t thread_id = 0;
  std::string_view detail;
};

struct ThreadEvent {
  uint32_t thread_id = 0;
  std::string_view name;
  uint32_t pid = 0;
};

struct ClockReading {
  ClockId clock_id = ClockId::kUnspecified;
  uint64_t value_ns = 0;
};

// The file header (TraceHeader). schema_major/minor are filled in by the writer.
struct DeviceInfo {
  uint32_t device_id = 0;
  std::string name;
  uint32_t sm_count = 0;
  uint32_t sm_clock_khz = 0;
  uint32_t memory_clock_khz = 0;
  uint64_t memory_bytes = 0;
  std::string pci_bus_id;
  uint32_t compute_major = 0;
  uint32_t compute_minor = 0;
  std::string uuid;
  uint32_t memory_bus_width_bits = 0;
};

struct ClockDomainInfo {
  ClockId clock_id = ClockId::kUnspecified;
  std::string name;
  uint64_t resolution_ns = 0;
};

struct CaptureConfigInfo {
  std::vector<schema::Channel> channels;
  std::vector<schema::Channel> channels_failed;
  uint64_t ring_bytes = 0;
  uint64_t activity_buffer_bytes = 0;
  uint32_t activity_buffer_count = 0;
  uint64_t flush_interval_ns = 0;
  uint64_t frame_bytes = 0;
  uint64_t max_file_bytes = 0;
  int32_t zstd_level = 0;
};

struct HeaderInfo {
  std::string agent_version;
  schema::Producer producer = schema::Producer::kUnspecified;
  std::string host_name;
  uint32_t pid = 0;
  std::string job_id;
  bool has_rank = false, has_local_rank = false, has_world_size = false;
  int32_t rank = 0, local_rank = 0, world_size = 0;
  std::vector<DeviceInfo> devices;
  uint32_t cuda_runtime_version = 0;
  uint32_t cuda_driver_version = 0;
  uint32_t cupti_version = 0;
  std::string nccl_version;
  std::vector<ClockDomainInfo> clock_domains;
  ClockId default_clock_id = ClockId::kUnspecified;
  CaptureConfigInfo capture_config;
  std::string source_path;
  uint64_t start_time_ns = 0;
  std::string command_line;
  // Periodic / on-demand capture: the file's window as known at its start (start_ns unused).
  bool has_capture_window = false;
  CaptureWindowEvent capture_window;
};

// What a producer learned after the header was written, for the Trailer (TraceFileWriter::Close).
struct TrailerInfo {
  // Trailer.rank / world_size: the job's rank and size from the NCCL world communicator.
  bool has_rank = false, has_world_size = false;
  int32_t rank = 0, world_size = 0;
  // Trailer.devices and versions (2.4): what the header could not name at start-up.
  std::vector<DeviceInfo> devices;
  uint32_t cuda_runtime_version = 0;
  uint32_t cuda_driver_version = 0;
  std::string nccl_version;
};

}  // namespace lumos::schema
