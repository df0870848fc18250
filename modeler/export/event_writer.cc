#include "modeler/export/event_writer.h"

#include <cstdio>
#include <string>

#include "base/logging.h"
#include "modeler/export/names.h"

namespace lumos::modeler::internal {
namespace {

template <typename Enum>
void KeyEnum(io::JsonWriter* json, std::string_view key, Enum value) {
  if (static_cast<int>(value) == 0) return;  // *_UNSPECIFIED: nothing known.
  const char* name = NameOf(value);
  json->Key(key);
  if (name != nullptr) {
    json->String(name);
  } else {
    json->Int(static_cast<int>(value));  // A value from a newer schema minor.
  }
}

void KeyUintIfSet(io::JsonWriter* json, std::string_view key, uint64_t value) {
  if (value != 0) json->KeyUint(key, value);
}

void KeyDim3(io::JsonWriter* json, std::string_view key, uint32_t x, uint32_t y, uint32_t z) {
  json->Key(key);
  json->BeginArray();
  json->Uint(x);
  json->Uint(y);
  json->Uint(z);
  json->EndArray();
}

std::string Hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(value));
  return buf;
}

// bytes per ns = GB/s.
void KeyBandwidth(io::JsonWriter* json, uint64_t bytes, EventSpan span) {
  if (bytes == 0 || span.end_ns <= span.start_ns) return;
  json->Key("bandwidth_gbps");
  json->Fixed(static_cast<double>(bytes) / static_cast<double>(span.end_ns - span.start_ns), 3);
}

std::string OrDefault(std::string_view value, std::string_view fallback) {
  return std::string(value.empty() ? fallback : value);
}

}  // namespace

uint64_t RelativeNs(int64_t ns, int64_t origin_ns) {
  // Unsigned difference: exact even when the span of the trace exceeds int64.
  return ns <= origin_ns ? 0 : static_cast<uint64_t>(ns) - static_cast<uint64_t>(origin_ns);
}

EventWriter::EventWriter(io::JsonWriter* json, const ProcessLayout& layout,
                         const std::vector<uint32_t>& packet_track, int64_t origin_ns)
    : json_(json), layout_(layout), packet_track_(packet_track), origin_ns_(origin_ns) {}

void EventWriter::BeginEvent(bool slice, std::string_view category, std::string_view name,
                             const OutputTrack& row, EventSpan span) {
  json_->BeginObject();
  json_->KeyString("ph", slice ? "X" : "i");
  json_->KeyString("cat", category);
  json_->KeyString("name", name);
  json_->KeyUint("pid", layout_.pid);
  json_->KeyUint("tid", row.tid);
  json_->KeyMicros("ts", RelativeNs(span.start_ns, origin_ns_));
  if (slice) {
    json_->KeyMicros("dur",
                     static_cast<uint64_t>(span.end_ns) - static_cast<uint64_t>(span.start_ns));
  } else {
    json_->KeyString("s", "t");  // Thread-scoped: drawn on its row.
  }
  json_->Key("args");
  json_->BeginObject();
}

void EventWriter::EndEvent() {
  json_->EndObject();  // args
  json_->EndObject();
  ++events_;
}

void WriteFlow(io::JsonWriter* json, const Flow& flow, const std::vector<ProcessLayout>& layouts,
               const std::vector<FileIndex>& files, int64_t origin_ns) {
  for (const FlowEnd* end : {&flow.from, &flow.to}) {
    const ProcessLayout& layout = layouts[end->file];
    uint32_t row_index = files[end->file].packet_track[end->packet];
    LUMOS_CHECK(row_index < layout.tracks.size());  // The linker joins drawn events only.
    const OutputTrack& row = layout.tracks[row_index];
    bool start = end == &flow.from;
    json->BeginObject();
    json->KeyString("ph", start ? "s" : "f");
    if (!start) json->KeyString("bp", "e");  // Bind to the enclosing slice, not the next one.
    // Perfetto keys v1 flows by (id, cat, name): both ends carry the same three.
    json->KeyString("cat", FlowKindName(flow.kind));
    json->KeyString("name", FlowKindName(flow.kind));
    json->KeyUint("id", flow.id);
    json->KeyUint("pid", layout.pid);
    json->KeyUint("tid", row.tid);
    json->KeyMicros("ts", RelativeNs(end->ts_ns, origin_ns));
    json->EndObject();
  }
}

void EventWriter::Write(const pb::TracePacket& packet, const PacketContext& context,
                        uint32_t packet_index) {
  if (packet_index >= packet_track_.size() || !packet.has_start_delta_ns()) return;
  uint32_t row_index = packet_track_[packet_index];
  if (row_index == kNoTrack || row_index >= layout_.tracks.size()) return;
  const OutputTrack& row = layout_.tracks[row_index];
  EventSpan span = SpanOf(packet, context.start_ns);

  switch (packet.data_case()) {
    case pb::TracePacket::kKernel:
      BeginEvent(true, "kernel", OrDefault(context.String(packet.kernel().name_iid()), "kernel"),
                 row, span);
      Kernel(packet.kernel());
      break;
    case pb::TracePacket::kMemcpy: {
      const pb::MemcpyEvent& m = packet.memcpy();
      const char* kind = CopyKindLabel(m.copy_kind());
      std::string name = std::string("Memcpy ") + (kind != nullptr ? kind : "") +
                         (kind != nullptr ? " " : "") + FormatBytes(m.bytes());
      BeginEvent(true, "gpu_memcpy", name, row, span);
      Memcpy(m, span);
      break;
    }
    case pb::TracePacket::kMemset:
      BeginEvent(true, "gpu_memset", "Memset " + FormatBytes(packet.memset().bytes()), row, span);
      Memset(packet.memset(), span);
      break;
    case pb::TracePacket::kApiCall: {
      const pb::ApiCall& call = packet.api_call();
      const char* kind = NameOf(call.kind());
      std::string fallback = call.kind() != pb::API_KIND_UNSPECIFIED && kind != nullptr
                                 ? std::string(kind)
                                 : "CUDA API";
      BeginEvent(true, call.domain() == pb::API_DOMAIN_DRIVER ? "cuda_driver" : "cuda_runtime",
                 OrDefault(context.String(call.name_iid()), fallback), row, span);
      ApiCallArgs(call);
      break;
    }
    case pb::TracePacket::kSync:
      BeginEvent(true, "cuda_sync", SyncLabel(packet.sync().sync_type()), row, span);
      SyncArgs(packet.sync());
      break;
    case pb::TracePacket::kCudaEvent:
      BeginEvent(true, "cuda_event", "Event Record", row, span);
      CudaEventArgs(packet.cuda_event());
      break;
    case pb::TracePacket::kNvtx: {
      const pb::NvtxRange& range = packet.nvtx();
      BeginEvent(range.kind() != pb::NVTX_KIND_MARK, "nvtx",
                 OrDefault(context.String(range.name_iid()), "(unnamed range)"), row, span);
      NvtxArgs(range, context);
      break;
    }
    case pb::TracePacket::kHostRange: {
      const pb::HostRange& range = packet.host_range();
      BeginEvent(true, HostRangeCategoryLabel(range.category()),
                 OrDefault(context.String(range.name_iid()), "(unnamed range)"), row, span);
      HostRangeArgs(range);
      break;
    }
    case pb::TracePacket::kCollective:
      BeginEvent(true, "nccl", CollectiveLabel(packet.collective()), row, span);
      CollectiveArgs(packet.collective());
      break;
    case pb::TracePacket::kCommunicator: {
      const pb::Communicator& c = packet.communicator();
      BeginEvent(false, "nccl", "Communicator " + (c.name().empty() ? Hex(c.comm_id()) : c.name()),
                 row, span);
      CommunicatorArgs(c);
      break;
    }
    case pb::TracePacket::kLoss: {
      const pb::LossRecord& loss = packet.loss();
      const char* source = NameOf(loss.source());
      std::string name = "Lost " + std::to_string(loss.count()) + " events";
      if (source != nullptr && loss.source() != pb::LOSS_SOURCE_UNSPECIFIED) {
        name += std::string(" (") + source + ")";
      }
      BeginEvent(span.end_ns > span.start_ns, "lumos_loss", name, row, span);
      KeyEnum(json_, "source", loss.source());
      json_->KeyUint("count", loss.count());
      KeyUintIfSet(json_, "thread_id", loss.thread_id());
      if (!loss.detail().empty()) json_->KeyString("detail", loss.detail());
      break;
    }
    case pb::TracePacket::kCaptureWindow: {
      const pb::CaptureWindow& window = packet.capture_window();
      BeginEvent(true, "lumos_capture", "Capture window " + std::to_string(window.window_index()),
                 row, span);
      json_->KeyUint("window_index", window.window_index());
      KeyEnum(json_, "trigger", window.trigger());
      if (window.iteration_count() > 0) {
        json_->KeyUint("first_iteration", window.first_iteration());
        json_->KeyUint("iterations", window.iteration_count());
      }
      if (!window.requested_by().empty()) json_->KeyString("requested_by", window.requested_by());
      if (!window.target().empty()) json_->KeyString("target", window.target());
      if (!window.missed_target().empty()) {
        json_->KeyString("missed_target", window.missed_target());
      }
      break;
    }
    default:
      return;  // Not drawn (the index never gives these a row).
  }
  EndEvent();
}

void EventWriter::Kernel(const pb::KernelEvent& k) {
  json_->KeyUint("correlation", k.correlation_id());
  KeyUintIfSet(json_, "external_id", k.external_id());
  json_->KeyUint("device", k.device_id());
  json_->KeyUint("stream", k.stream_id());
  KeyDim3(json_, "grid", k.grid_x(), k.grid_y(), k.grid_z());
  KeyDim3(json_, "block", k.block_x(), k.block_y(), k.block_z());
  if (k.cluster_x() != 0) KeyDim3(json_, "cluster", k.cluster_x(), k.cluster_y(), k.cluster_z());
  json_->KeyUint("registers_per_thread", k.registers_per_thread());
  json_->KeyUint("shared_memory_static_bytes", k.static_shared_memory_bytes());
  json_->KeyUint("shared_memory_dynamic_bytes", k.dynamic_shared_memory_bytes());
  KeyUintIfSet(json_, "context", k.context_id());
  KeyUintIfSet(json_, "graph_id", k.graph_id());
  KeyUintIfSet(json_, "graph_node_id", k.graph_node_id());
  KeyEnum(json_, "launch_type", k.launch_type());
}

void EventWriter::Memcpy(const pb::MemcpyEvent& m, EventSpan span) {
  json_->KeyUint("correlation", m.correlation_id());
  KeyUintIfSet(json_, "external_id", m.external_id());
  json_->KeyUint("device", m.device_id());
  json_->KeyUint("stream", m.stream_id());
  json_->KeyUint("bytes", m.bytes());
  if (const char* kind = CopyKindLabel(m.copy_kind())) json_->KeyString("kind", kind);
  KeyEnum(json_, "src_kind", m.src_kind());
  KeyEnum(json_, "dst_kind", m.dst_kind());
  if (m.copy_kind() == pb::COPY_KIND_PTOP || m.src_device_id() != m.dst_device_id()) {
    json_->KeyUint("src_device", m.src_device_id());
    json_->KeyUint("dst_device", m.dst_device_id());
  }
  KeyUintIfSet(json_, "context", m.context_id());
  KeyUintIfSet(json_, "graph_node_id", m.graph_node_id());
  KeyBandwidth(json_, m.bytes(), span);
}

void EventWriter::Memset(const pb::MemsetEvent& m, EventSpan span) {
  json_->KeyUint("correlation", m.correlation_id());
  KeyUintIfSet(json_, "external_id", m.external_id());
  json_->KeyUint("device", m.device_id());
  json_->KeyUint("stream", m.stream_id());
  json_->KeyUint("bytes", m.bytes());
  json_->KeyUint("value", m.value());
  KeyEnum(json_, "memory_kind", m.memory_kind());
  KeyUintIfSet(json_, "context", m.context_id());
  KeyUintIfSet(json_, "graph_node_id", m.graph_node_id());
  KeyBandwidth(json_, m.bytes(), span);
}

void EventWriter::ApiCallArgs(const pb::ApiCall& call) {
  json_->KeyUint("correlation", call.correlation_id());
  KeyEnum(json_, "kind", call.kind());
  KeyUintIfSet(json_, "cbid", call.cbid());
  KeyEnum(json_, "domain", call.domain());
  KeyUintIfSet(json_, "stream", call.stream_id());
  KeyUintIfSet(json_, "event_id", call.event_id());
  KeyUintIfSet(json_, "external_id", call.external_id());
  KeyUintIfSet(json_, "graph_id", call.graph_id());
  if (call.return_code() != 0) json_->KeyInt("return_code", call.return_code());
}

void EventWriter::SyncArgs(const pb::SyncEvent& sync) {
  KeyEnum(json_, "sync_type", sync.sync_type());
  KeyUintIfSet(json_, "correlation", sync.correlation_id());
  KeyUintIfSet(json_, "device", sync.device_id());
  KeyUintIfSet(json_, "stream", sync.stream_id());
  KeyUintIfSet(json_, "event_id", sync.event_id());
  KeyUintIfSet(json_, "cuda_event_sync_id", sync.cuda_event_sync_id());
  KeyUintIfSet(json_, "wait_on_stream", sync.wait_on_stream_id());
  KeyUintIfSet(json_, "event_record_correlation", sync.event_record_correlation_id());
  KeyUintIfSet(json_, "thread_id", sync.thread_id());
  KeyUintIfSet(json_, "external_id", sync.external_id());
}

void EventWriter::CudaEventArgs(const pb::CudaEventRecord& record) {
  json_->KeyUint("correlation", record.correlation_id());
  KeyUintIfSet(json_, "event_id", record.event_id());
  json_->KeyUint("device", record.device_id());
  json_->KeyUint("stream", record.stream_id());
  KeyUintIfSet(json_, "cuda_event_sync_id", record.cuda_event_sync_id());
  json_->KeyString("time", record.has_device_timestamp() ? "gpu" : "host");
}

void EventWriter::NvtxArgs(const pb::NvtxRange& range, const PacketContext& context) {
  std::string_view domain = context.String(range.domain_iid());
  if (!domain.empty()) json_->KeyString("domain", domain);
  KeyEnum(json_, "kind", range.kind());
  if (range.kind() == pb::NVTX_KIND_PUSH_POP) json_->KeyUint("depth", range.depth());
  if (range.color_argb() != 0) {
    char color[16];
    std::snprintf(color, sizeof(color), "#%08x", range.color_argb());
    json_->KeyString("color_argb", color);
  }
  KeyUintIfSet(json_, "category", range.category());
  KeyUintIfSet(json_, "range_id", range.range_id());
  KeyUintIfSet(json_, "end_thread_id", range.end_thread_id());
}

void EventWriter::HostRangeArgs(const pb::HostRange& range) {
  KeyEnum(json_, "category", range.category());
  KeyUintIfSet(json_, "external_id", range.external_id());
  KeyUintIfSet(json_, "sequence_number", range.sequence_number());
  KeyUintIfSet(json_, "forward_thread_id", range.forward_thread_id());
  if (range.has_step_number()) json_->KeyInt("step", range.step_number());
  if (range.category() == pb::HOST_RANGE_CATEGORY_GPU_ANNOTATION) {
    json_->KeyUint("device", range.device_id());
    json_->KeyUint("stream", range.stream_id());
  }
}

void EventWriter::CollectiveArgs(const pb::NcclCollective& c) {
  json_->KeyString("comm_id", Hex(c.comm_id()));  // A hash: hex, and never rounded.
  json_->KeyUint("seq", c.seq_number());
  KeyEnum(json_, "op", c.op());
  json_->KeyUint("count", c.count());
  KeyEnum(json_, "dtype", c.data_type());
  json_->KeyUint("bytes", c.bytes());
  KeyEnum(json_, "reduce_op", c.reduce_op());
  if (c.has_root_rank()) json_->KeyInt("root", c.root_rank());
  if (c.has_peer_rank()) json_->KeyInt("peer", c.peer_rank());
  KeyEnum(json_, "algorithm", c.algorithm());
  KeyEnum(json_, "protocol", c.protocol());
  KeyUintIfSet(json_, "channels", c.channels());
  KeyUintIfSet(json_, "comm_size", c.comm_size());
  json_->KeyUint("device", c.device_id());
  json_->KeyUint("stream", c.stream_id());
  KeyUintIfSet(json_, "correlation", c.correlation_id());
  KeyUintIfSet(json_, "thread_id", c.thread_id());
  json_->KeyString("time", c.gpu_duration_ns() > 0 ? "gpu" : "host");
  if (c.has_host_time()) json_->KeyUint("host_duration_ns", c.duration_ns());
  KeyUintIfSet(json_, "gpu_duration_ns", c.gpu_duration_ns());
}

void EventWriter::CommunicatorArgs(const pb::Communicator& c) {
  json_->KeyString("comm_id", Hex(c.comm_id()));
  json_->KeyInt("rank", c.rank());
  json_->KeyUint("comm_size", c.comm_size());
  json_->KeyUint("device", c.device_id());
  if (!c.name().empty()) json_->KeyString("name", c.name());
  if (c.global_ranks_size() > 0) {
    json_->Key("global_ranks");
    json_->BeginArray();
    for (int32_t rank : c.global_ranks()) json_->Int(rank);
    json_->EndArray();
  }
  if (c.parent_comm_id() != 0) json_->KeyString("parent_comm_id", Hex(c.parent_comm_id()));
}

void WriteProcessMetadata(io::JsonWriter* json, const ProcessLayout& layout) {
  auto meta = [&](std::string_view name, uint32_t tid, bool has_tid, std::string_view key,
                  const std::string* text, uint32_t number) {
    json->BeginObject();
    json->KeyString("ph", "M");
    json->KeyString("name", name);
    json->KeyUint("pid", layout.pid);
    if (has_tid) json->KeyUint("tid", tid);
    json->Key("args");
    json->BeginObject();
    json->Key(key);
    if (text != nullptr) {
      json->String(*text);
    } else {
      json->Uint(number);
    }
    json->EndObject();
    json->EndObject();
  };
  meta("process_name", 0, false, "name", &layout.name, 0);
  meta("process_sort_index", 0, false, "sort_index", nullptr, layout.sort_index);
  if (!layout.labels.empty()) meta("process_labels", 0, false, "labels", &layout.labels, 0);
  for (const OutputTrack& row : layout.tracks) {
    meta("thread_name", row.tid, true, "name", &row.name, 0);
    meta("thread_sort_index", row.tid, true, "sort_index", nullptr, row.sort_index);
  }
}

}  // namespace lumos::modeler::internal
