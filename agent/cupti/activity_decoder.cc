#include "agent/cupti/activity_decoder.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "agent/core/string_table.h"
#include "agent/cupti/cupti_clock.h"

namespace lumos::agent::cupti {
namespace {

// CUPTI's "no value" for ids in sync records.
constexpr uint32_t kInvalid32 = CUPTI_SYNCHRONIZATION_INVALID_VALUE;

uint64_t ValidId(uint32_t id) { return id == kInvalid32 ? 0 : id; }
uint16_t Clamp16(int64_t value) {
  return static_cast<uint16_t>(std::clamp<int64_t>(value, 0, UINT16_MAX));
}
uint32_t Clamp32(int64_t value) {
  return static_cast<uint32_t>(std::clamp<int64_t>(value, 0, UINT32_MAX));
}

schema::CopyKind CopyKindOf(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return schema::CopyKind::kHtod;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return schema::CopyKind::kDtoh;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return schema::CopyKind::kDtod;  // Arrays are device memory.
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return schema::CopyKind::kHtoh;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return schema::CopyKind::kPtop;
    default:
      return schema::CopyKind::kUnspecified;
  }
}

schema::MemoryKind MemoryKindOf(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return schema::MemoryKind::kPageable;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return schema::MemoryKind::kPinned;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return schema::MemoryKind::kDevice;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return schema::MemoryKind::kArray;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return schema::MemoryKind::kManaged;
    default:
      return schema::MemoryKind::kUnspecified;
  }
}

schema::LaunchType LaunchTypeOf(const CUpti_ActivityKernel10& kernel) {
  if (kernel.launchType == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE ||
      kernel.launchType == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE) {
    return schema::LaunchType::kCooperative;
  }
  if (uint64_t{kernel.clusterX} * kernel.clusterY * kernel.clusterZ > 1) {
    return schema::LaunchType::kCluster;
  }
  return schema::LaunchType::kRegular;
}

schema::SyncType SyncTypeOf(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return schema::SyncType::kEventSynchronize;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return schema::SyncType::kStreamWaitEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return schema::SyncType::kStreamSynchronize;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return schema::SyncType::kContextSynchronize;
    default:
      return schema::SyncType::kUnspecified;
  }
}

Record GpuRecord(RecordKind kind, uint32_t device_id, uint64_t start, uint64_t end,
                 int64_t offset_ns) {
  Record record{};
  record.kind = kind;
  record.device_id = Clamp16(device_id);
  record.start_ns = CuptiClock::ToMonotonic(start, offset_ns);
  record.end_ns = CuptiClock::ToMonotonic(end, offset_ns);
  return record;
}

Record Extension() {
  Record extension{};
  extension.kind = RecordKind::kExtension;
  return extension;
}

}  // namespace

ActivityDecoder::ActivityDecoder(const CuptiApi* api)
    : api_(api), external_(new ExternalSlot[kJoinSlots]), events_(new EventSlot[kJoinSlots]) {}

uint64_t ActivityDecoder::ExternalId(uint32_t correlation_id) const {
  const ExternalSlot& slot = external_[correlation_id % kJoinSlots];
  return slot.correlation_id == correlation_id && correlation_id != 0 ? slot.external_id : 0;
}

uint16_t ActivityDecoder::DeviceOfContext(uint32_t context_id) const {
  auto it = context_devices_.find(context_id);
  return it == context_devices_.end() ? 0 : it->second;
}

void ActivityDecoder::NoteContext(uint32_t context_id, uint32_t device_id) {
  if (context_devices_.size() < 4096) context_devices_.emplace(context_id, Clamp16(device_id));
}

uint32_t ActivityDecoder::KernelNameId(const char* name, RecordSink& sink) {
  if (name == nullptr) return 0;
  auto it = kernel_names_.find(name);
  if (it != kernel_names_.end()) return it->second;
  int status = -1;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  const uint32_t id = sink.strings().Intern(status == 0 && demangled != nullptr ? demangled : name);
  std::free(demangled);
  kernel_names_.emplace(name, id);
  return id;
}

void ActivityDecoder::Decode(const uint8_t* buffer, size_t valid_bytes, int64_t offset_ns,
                             RecordSink& sink) {
  if (buffer == nullptr || valid_bytes == 0 || api_->activity_get_next_record == nullptr) return;
  auto* bytes = const_cast<uint8_t*>(buffer);  // CUPTI's signature; it only reads.
  for (int pass = 0; pass < 2; ++pass) {
    CUpti_Activity* activity = nullptr;
    CUptiResult result;
    while ((result = api_->activity_get_next_record(bytes, valid_bytes, &activity)) ==
           CUPTI_SUCCESS) {
      const bool external = activity->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
      if (pass == 0 && external) {
        const auto& x = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(activity);
        external_[x.correlationId % kJoinSlots] = {x.correlationId, x.externalId};
        ++stats_.external_correlations;
      } else if (pass == 1 && !external) {
        DecodeRecord(activity, offset_ns, sink);
      }
    }
    if (pass == 0 && result != CUPTI_ERROR_MAX_LIMIT_REACHED) ++stats_.walk_errors;
  }
}

void ActivityDecoder::DecodeRecord(const CUpti_Activity* activity, int64_t offset_ns,
                                   RecordSink& sink) {
  switch (activity->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& k = *reinterpret_cast<const CUpti_ActivityKernel10*>(activity);
      NoteContext(k.contextId, k.deviceId);
      Record head = GpuRecord(RecordKind::kKernel, k.deviceId, k.start, k.end, offset_ns);
      KernelPayload& p = head.payload.kernel;
      p.stream_id = k.streamId;
      p.correlation_id = k.correlationId;
      p.name_id = KernelNameId(k.name, sink);
      p.grid_x = Clamp32(k.gridX);
      p.grid_y = Clamp16(k.gridY);
      p.grid_z = Clamp16(k.gridZ);
      p.block_x = Clamp16(k.blockX);
      p.block_y = Clamp16(k.blockY);
      p.block_z = Clamp16(k.blockZ);
      p.registers_per_thread = k.registersPerThread;
      p.static_shared_memory_bytes = Clamp32(k.staticSharedMemory);
      p.dynamic_shared_memory_bytes = Clamp32(k.dynamicSharedMemory);
      Record extension = Extension();
      KernelExtension& x = extension.payload.kernel_ext;
      x.graph_id = k.graphId;
      x.graph_node_id = k.graphNodeId;
      x.external_id = ExternalId(k.correlationId);
      x.context_id = k.contextId;
      x.cluster_x = Clamp16(k.clusterX);
      x.cluster_y = Clamp16(k.clusterY);
      x.cluster_z = Clamp16(k.clusterZ);
      x.launch_type = static_cast<uint8_t>(LaunchTypeOf(k));
      sink.Add(head, &extension);
      ++stats_.kernels;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(activity);
      NoteContext(m.contextId, m.deviceId);
      Record head = GpuRecord(RecordKind::kMemcpy, m.deviceId, m.start, m.end, offset_ns);
      MemcpyPayload& p = head.payload.memcpy;
      p.stream_id = m.streamId;
      p.bytes = m.bytes;
      p.graph_node_id = m.graphNodeId;
      p.correlation_id = m.correlationId;
      p.context_id = m.contextId;
      p.src_device_id = p.dst_device_id = Clamp16(m.deviceId);
      p.copy_kind = static_cast<uint8_t>(CopyKindOf(m.copyKind));
      p.src_kind = static_cast<uint8_t>(MemoryKindOf(m.srcKind));
      p.dst_kind = static_cast<uint8_t>(MemoryKindOf(m.dstKind));
      Record extension = Extension();
      extension.payload.external_ext.external_id = ExternalId(m.correlationId);
      sink.Add(head, extension.payload.external_ext.external_id != 0 ? &extension : nullptr);
      ++stats_.memcpys;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(activity);
      NoteContext(m.contextId, m.deviceId);
      Record head = GpuRecord(RecordKind::kMemcpy, m.deviceId, m.start, m.end, offset_ns);
      MemcpyPayload& p = head.payload.memcpy;
      p.stream_id = m.streamId;
      p.bytes = m.bytes;
      p.graph_node_id = m.graphNodeId;
      p.correlation_id = m.correlationId;
      p.context_id = m.contextId;
      p.src_device_id = Clamp16(m.srcDeviceId);
      p.dst_device_id = Clamp16(m.dstDeviceId);
      // MEMCPY2 records are peer copies even when CUPTI's copyKind says DTOD.
      p.copy_kind = static_cast<uint8_t>(schema::CopyKind::kPtop);
      p.src_kind = static_cast<uint8_t>(MemoryKindOf(m.srcKind));
      p.dst_kind = static_cast<uint8_t>(MemoryKindOf(m.dstKind));
      Record extension = Extension();
      extension.payload.external_ext.external_id = ExternalId(m.correlationId);
      sink.Add(head, extension.payload.external_ext.external_id != 0 ? &extension : nullptr);
      ++stats_.memcpys;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = *reinterpret_cast<const CUpti_ActivityMemset4*>(activity);
      NoteContext(m.contextId, m.deviceId);
      Record head = GpuRecord(RecordKind::kMemset, m.deviceId, m.start, m.end, offset_ns);
      MemsetPayload& p = head.payload.memset;
      p.stream_id = m.streamId;
      p.bytes = m.bytes;
      p.graph_node_id = m.graphNodeId;
      p.correlation_id = m.correlationId;
      p.context_id = m.contextId;
      p.value = m.value;
      p.memory_kind = static_cast<uint8_t>(MemoryKindOf(m.memoryKind));
      Record extension = Extension();
      extension.payload.external_ext.external_id = ExternalId(m.correlationId);
      sink.Add(head, extension.payload.external_ext.external_id != 0 ? &extension : nullptr);
      ++stats_.memsets;
      return;
    }
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
      const auto& e = *reinterpret_cast<const CUpti_ActivityCudaEvent2*>(activity);
      NoteContext(e.contextId, e.deviceId);
      Record head = GpuRecord(RecordKind::kCudaEventRecord, e.deviceId, e.deviceTimestamp,
                              e.deviceTimestamp, offset_ns);
      // Without device timestamps the time stays 0 ("unknown"): the record call's host time is
      // the ApiCall with the same correlation id.
      if (e.deviceTimestamp != 0) head.flags |= kRecordFlagDeviceTimestamp;
      CudaEventRecordPayload& p = head.payload.cuda_event;
      p.event_id = e.eventId;
      p.stream_id = e.streamId;
      p.cuda_event_sync_id = e.cudaEventSyncId;
      p.correlation_id = e.correlationId;
      p.context_id = e.contextId;
      if (e.cudaEventSyncId != 0) {
        events_[e.cudaEventSyncId % kJoinSlots] = {e.cudaEventSyncId, e.streamId, e.correlationId};
      }
      Record extension = Extension();
      extension.payload.external_ext.external_id = ExternalId(e.correlationId);
      sink.Add(head, extension.payload.external_ext.external_id != 0 ? &extension : nullptr);
      ++stats_.cuda_events;
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& s = *reinterpret_cast<const CUpti_ActivitySynchronization2*>(activity);
      Record head =
          GpuRecord(RecordKind::kSync, DeviceOfContext(s.contextId), s.start, s.end, offset_ns);
      SyncPayload& p = head.payload.sync;
      p.stream_id = ValidId(s.streamId);
      p.event_id = ValidId(s.cudaEventId);
      p.cuda_event_sync_id = s.cudaEventSyncId == ~uint64_t{0} ? 0 : s.cudaEventSyncId;
      p.correlation_id = s.correlationId;
      p.context_id = s.contextId;
      p.sync_type = static_cast<uint8_t>(SyncTypeOf(s.type));
      Record extension = Extension();
      SyncExtension& x = extension.payload.sync_ext;
      x.external_id = ExternalId(s.correlationId);
      if (p.cuda_event_sync_id != 0) {
        const EventSlot& event = events_[p.cuda_event_sync_id % kJoinSlots];
        if (event.cuda_event_sync_id == p.cuda_event_sync_id) {
          x.wait_on_stream_id = event.stream_id;
          p.event_record_correlation_id = event.correlation_id;
        }
      }
      const bool extended = x.external_id != 0 || x.wait_on_stream_id != 0;
      sink.Add(head, extended ? &extension : nullptr);
      ++stats_.syncs;
      return;
    }
    default:
      ++stats_.skipped;
      return;
  }
}

}  // namespace lumos::agent::cupti
