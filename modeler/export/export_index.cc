#include "modeler/export/export_index.h"

#include <limits>

namespace lumos::modeler::internal {
namespace {

constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max();

// Durations are external bytes: saturate instead of overflowing on hostile values.
int64_t AddDuration(int64_t start_ns, uint64_t duration_ns) {
  int64_t end = 0;
  if (duration_ns > static_cast<uint64_t>(kMaxNs) ||
      __builtin_add_overflow(start_ns, static_cast<int64_t>(duration_ns), &end)) {
    return kMaxNs;
  }
  return end;
}

int64_t AddOffset(int64_t start_ns, int64_t offset_ns) {
  int64_t result = 0;
  if (__builtin_add_overflow(start_ns, offset_ns, &result)) {
    return offset_ns < 0 ? std::numeric_limits<int64_t>::min() : kMaxNs;
  }
  return result;
}

// Which of several API calls with one correlation id draws the launch arrow: a call that does
// something to a stream beats queries, and the runtime call beats the driver call it makes.
int ApiScore(const pb::ApiCall& call) {
  int score = 0;
  if (call.kind() != pb::API_KIND_UNSPECIFIED && call.kind() != pb::API_KIND_OTHER) score += 2;
  if (call.domain() == pb::API_DOMAIN_RUNTIME) score += 1;
  return score;
}

class IndexBuilder {
 public:
  explicit IndexBuilder(FileIndex* index) : index_(index) {}

  Status Add(const pb::TracePacket& packet, const PacketContext& context) {
    if (index_->packets >= std::numeric_limits<uint32_t>::max() - 1) {
      return Status::Error(index_->path + ": more than 4 billion packets; split the trace");
    }
    uint32_t p = index_->packets++;
    index_->packet_track.push_back(kNoTrack);
    if (packet.has_thread() && !packet.thread().name().empty()) {
      index_->thread_names[packet.thread().thread_id()] = packet.thread().name();
    }
    if (!packet.has_start_delta_ns()) return Status::Ok();
    EventSpan span = SpanOf(packet, context.start_ns);
    switch (packet.data_case()) {
      case pb::TracePacket::kKernel:
        AddGpuOp(p, span, packet.kernel().correlation_id(), packet.kernel().device_id(),
                 packet.kernel().stream_id());
        break;
      case pb::TracePacket::kMemcpy:
        AddGpuOp(p, span, packet.memcpy().correlation_id(), packet.memcpy().device_id(),
                 packet.memcpy().stream_id());
        break;
      case pb::TracePacket::kMemset:
        AddGpuOp(p, span, packet.memset().correlation_id(), packet.memset().device_id(),
                 packet.memset().stream_id());
        break;
      case pb::TracePacket::kApiCall:
        AddApiCall(p, span, packet.api_call());
        break;
      case pb::TracePacket::kSync:
        AddSync(p, span, packet.sync());
        break;
      case pb::TracePacket::kCudaEvent: {
        const pb::CudaEventRecord& r = packet.cuda_event();
        // Placed in Finish(): whether it gets its own slice depends on its record call.
        index_->records.push_back(EventRecordRef{p, span.start_ns, r.correlation_id(),
                                                 r.cuda_event_sync_id(), r.device_id(),
                                                 r.stream_id(), r.has_device_timestamp(), false});
        break;
      }
      case pb::TracePacket::kNvtx:
        Place({TrackKind::kThread, packet.nvtx().thread_id(), 0}, span, p);
        break;
      case pb::TracePacket::kHostRange: {
        const pb::HostRange& r = packet.host_range();
        if (r.category() == pb::HOST_RANGE_CATEGORY_GPU_ANNOTATION) {
          Place({TrackKind::kStream, r.device_id(), r.stream_id()}, span, p);
        } else {
          Place({TrackKind::kThread, r.thread_id(), 0}, span, p);
        }
        break;
      }
      case pb::TracePacket::kCollective: {
        const pb::NcclCollective& c = packet.collective();
        Place({TrackKind::kNccl, 0, 0}, span, p);
        index_->collectives.push_back(CollectiveRef{
            p, span.start_ns, span.end_ns, c.comm_id(), c.seq_number(),
            static_cast<schema::CollectiveOp>(c.op()), c.has_peer_rank() ? c.peer_rank() : -1});
        break;
      }
      case pb::TracePacket::kCommunicator:
        Place({TrackKind::kNccl, 0, 0}, span, p);
        index_->communicator_ranks.emplace_back(packet.communicator().comm_id(),
                                                packet.communicator().rank());
        break;
      case pb::TracePacket::kLoss:
      case pb::TracePacket::kCaptureWindow:
        Place({TrackKind::kLumos, 0, 0}, span, p);
        break;
      default:
        break;  // Bookkeeping packets are not drawn.
    }
    return Status::Ok();
  }

  // Places what needed the whole file to decide.
  void Finish() {
    for (const PendingSync& sync : pending_syncs_) {
      auto api = index_->api_by_correlation.find(sync.correlation_id);
      if (sync.correlation_id != 0 && api != index_->api_by_correlation.end()) {
        Place({TrackKind::kThread, api->second.thread_id, 0}, sync.span, sync.packet);
      } else if (sync.stream_scoped) {
        Place({TrackKind::kStream, sync.device_id, sync.stream_id}, sync.span, sync.packet);
      } else {
        Place({TrackKind::kThread, 0, 0}, sync.span, sync.packet);
      }
    }
    for (EventRecordRef& record : index_->records) {
      bool has_call = record.correlation_id != 0 &&
                      index_->api_by_correlation.count(record.correlation_id) != 0;
      // A host-timed record duplicates its cudaEventRecord call: show it only without one.
      record.has_slice = record.device_time || !has_call;
      if (record.has_slice) {
        Place({TrackKind::kStream, record.device_id, record.stream_id},
              EventSpan{record.ts_ns, record.ts_ns}, record.packet);
      }
    }
  }

 private:
  struct PendingSync {
    uint32_t packet = 0;
    EventSpan span;
    uint64_t correlation_id = 0;
    uint64_t device_id = 0;
    uint64_t stream_id = 0;
    bool stream_scoped = false;
  };

  void Place(const TrackKey& key, EventSpan span, uint32_t packet) {
    auto [it, inserted] = index_->track_ids.try_emplace(key, index_->tracks.size());
    if (inserted) {
      index_->tracks.push_back(key);
      index_->slices.emplace_back();
    }
    index_->slices[it->second].push_back(SliceKey{span.start_ns, span.end_ns, packet});
    index_->packet_track[packet] = it->second;
    if (!index_->has_events || span.start_ns < index_->min_start_ns) {
      index_->min_start_ns = span.start_ns;
    }
    index_->has_events = true;
  }

  void AddGpuOp(uint32_t p, EventSpan span, uint64_t correlation_id, uint64_t device_id,
                uint64_t stream_id) {
    Place({TrackKind::kStream, device_id, stream_id}, span, p);
    index_->gpu_ops.push_back(
        GpuOpRef{p, span.start_ns, correlation_id, device_id, stream_id, span.end_ns});
  }

  void AddApiCall(uint32_t p, EventSpan span, const pb::ApiCall& call) {
    Place({TrackKind::kThread, call.thread_id(), 0}, span, p);
    if (call.correlation_id() == 0) return;
    ApiRef candidate{p, span.start_ns, call.thread_id(), ApiScore(call)};
    auto [it, inserted] = index_->api_by_correlation.try_emplace(call.correlation_id(), candidate);
    const ApiRef& best = it->second;
    // Deterministic choice: score, then the outer (earlier) call, then file order.
    if (!inserted && (candidate.score > best.score ||
                      (candidate.score == best.score && candidate.start_ns < best.start_ns))) {
      it->second = candidate;
    }
  }

  void AddSync(uint32_t p, EventSpan span, const pb::SyncEvent& sync) {
    if (sync.sync_type() == pb::SYNC_TYPE_STREAM_WAIT_EVENT) {
      index_->waits.push_back(StreamWaitRef{p, span.start_ns, sync.cuda_event_sync_id(),
                                            sync.event_record_correlation_id(), sync.device_id(),
                                            sync.stream_id()});
    }
    if (sync.thread_id() != 0) {
      Place({TrackKind::kThread, sync.thread_id(), 0}, span, p);
      return;
    }
    bool stream_scoped =
        sync.stream_id() != 0 && (sync.sync_type() == pb::SYNC_TYPE_STREAM_WAIT_EVENT ||
                                  sync.sync_type() == pb::SYNC_TYPE_STREAM_SYNCHRONIZE);
    pending_syncs_.push_back(PendingSync{p, span, sync.correlation_id(), sync.device_id(),
                                         sync.stream_id(), stream_scoped});
  }

  FileIndex* index_;
  std::vector<PendingSync> pending_syncs_;  // Thread unknown until every API call is seen.
};

}  // namespace

EventSpan SpanOf(const pb::TracePacket& packet, int64_t start_ns) {
  uint64_t duration = 0;
  switch (packet.data_case()) {
    case pb::TracePacket::kKernel:
      duration = packet.kernel().duration_ns();
      break;
    case pb::TracePacket::kApiCall:
      duration = packet.api_call().duration_ns();
      break;
    case pb::TracePacket::kMemcpy:
      duration = packet.memcpy().duration_ns();
      break;
    case pb::TracePacket::kMemset:
      duration = packet.memset().duration_ns();
      break;
    case pb::TracePacket::kSync:
      duration = packet.sync().duration_ns();
      break;
    case pb::TracePacket::kNvtx:
      duration = packet.nvtx().duration_ns();
      break;
    case pb::TracePacket::kHostRange:
      duration = packet.host_range().duration_ns();
      break;
    case pb::TracePacket::kLoss:
      duration = packet.loss().duration_ns();
      break;
    case pb::TracePacket::kCaptureWindow:
      duration = packet.capture_window().duration_ns();
      break;
    case pb::TracePacket::kCollective: {
      const pb::NcclCollective& c = packet.collective();
      if (c.gpu_duration_ns() > 0) {  // GPU time is what the collective really took.
        int64_t gpu_start = AddOffset(start_ns, c.gpu_start_offset_ns());
        return EventSpan{gpu_start, AddDuration(gpu_start, c.gpu_duration_ns())};
      }
      duration = c.duration_ns();
      break;
    }
    default:
      break;  // Instants.
  }
  return EventSpan{start_ns, AddDuration(start_ns, duration)};
}

Status BuildFileIndex(TraceReader* reader, FileIndex* index) {
  index->path = reader->path();
  index->header = reader->header();
  IndexBuilder builder(index);
  LUMOS_RETURN_IF_ERROR(reader->ReadPackets(
      [&](const pb::TracePacket& packet, const PacketContext& context) {
        return builder.Add(packet, context);
      },
      &index->read));
  builder.Finish();
  return Status::Ok();
}

}  // namespace lumos::modeler::internal
