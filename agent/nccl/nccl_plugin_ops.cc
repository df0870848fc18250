// Operations (Coll/P2p) and their kernel channels: parts counted down on the operation's state
// word, the record written by whoever takes it to 0 (nccl_plugin_events.h).
#include <time.h>

#include <cstring>

#include "agent/nccl/nccl_channel.h"
#include "agent/nccl/nccl_plugin_events.h"

namespace lumos::agent::nccl_plugin {
namespace {

int64_t RealtimeMinusMonotonicNs() {
  timespec realtime{};
  clock_gettime(CLOCK_REALTIME, &realtime);
  const int64_t realtime_ns =
      static_cast<int64_t>(realtime.tv_sec) * 1'000'000'000 + realtime.tv_nsec;
  return realtime_ns - ReadMonotonicNs();  // Exact: a clock-domain offset.
}

}  // namespace

void TakeRecordAndRelease(EventSlot* op, Record* head, Record* extension) {
  *head = op->head;
  *extension = op->extension;
  const int64_t api_end = op->api_end_ns.load(std::memory_order_relaxed);
  const int64_t end =
      op->has_api && api_end != 0 ? api_end : op->op_end_ns.load(std::memory_order_relaxed);
  head->start_ns = op->host_start_ns;
  head->end_ns = end >= head->start_ns ? end : head->start_ns;
  head->flags |= kRecordFlagHasHostTime;
  head->thread_id = op->thread_id;
  head->payload.collective.stream_id = op->stream;
  head->payload.collective.reduce_op = op->reduce_op;
  const uint64_t gpu_start = op->gpu_start.load(std::memory_order_relaxed);
  const uint64_t gpu_stop = op->gpu_stop.load(std::memory_order_relaxed);
  if (gpu_start != ~uint64_t{0} && gpu_stop >= gpu_start) {
    CollectiveExtension& x = extension->payload.collective_ext;
    x.gpu_duration_ns = gpu_stop - gpu_start;
    const int64_t offset =
        static_cast<int64_t>(gpu_start) - RealtimeMinusMonotonicNs() - head->start_ns;
    constexpr int64_t kEarliest = -1'000'000'000, kLatest = 600'000'000'000;
    if (offset >= kEarliest && offset <= kLatest) x.gpu_start_offset_ns = offset;
  }
  Release(op);
}

void EmitAndRelease(EventSlot* op) {
  Record head, extension;
  TakeRecordAndRelease(op, &head, &extension);
  if (Enabled()) PushCollectiveRecord(&head, extension);
}

bool ClaimOp(EventSlot* op, uint32_t generation, bool only_stopped, int64_t idle_since) {
  uint64_t current = op->state.load(std::memory_order_acquire);
  while ((current >> 32) == generation && (current & 0xffffffff) != 0) {
    if (only_stopped && (current & kOpStopPending) != 0) return false;
    if (op->last_activity_ns.load(std::memory_order_relaxed) > idle_since) return false;
    if (op->state.compare_exchange_weak(current, OpState(generation, 0), std::memory_order_acq_rel,
                                        std::memory_order_acquire)) {
      if (op->op_end_ns.load(std::memory_order_relaxed) == 0) {
        op->op_end_ns.store(MonotonicNowNs(), std::memory_order_relaxed);
      }
      return true;
    }
  }
  return false;
}

uint64_t StartOp(ProfilerContext* context, void* parent, const OpFields& fields) {
  // v4 has no API events: a call made through a wrapper on this thread is this one (an
  // ungrouped call; a grouped one starts its Coll at ncclGroupEnd, outside the call).
  if (context->v4) SeeCall(context);
  uint64_t handle = 0;
  EventSlot* op = Allocate(context, SlotType::kOp, &handle);
  if (op == nullptr) return 0;
  op->expected_kernels = context->waits_for_kernels ? fields.channels : 0;
  op->kernels_started.store(0, std::memory_order_relaxed);
  op->gpu_start.store(~uint64_t{0}, std::memory_order_relaxed);
  op->gpu_stop.store(0, std::memory_order_relaxed);
  op->has_api = false;
  op->host_start_ns = MonotonicNowNs();
  op->last_activity_ns.store(op->host_start_ns, std::memory_order_relaxed);
  op->api_end_ns.store(0, std::memory_order_relaxed);
  op->op_end_ns.store(0, std::memory_order_relaxed);
  op->stream = 0;
  op->reduce_op = 0;
  op->thread_id = CurrentThreadId();
  std::memset(static_cast<void*>(&op->head), 0, sizeof(op->head));
  std::memset(static_cast<void*>(&op->extension), 0, sizeof(op->extension));
  op->head.kind = RecordKind::kCollective;
  op->head.payload.collective = {
      .comm_id = context->comm_id,
      .seq_number = fields.seq_number,
      .count = fields.count,
      .stream_id = 0,
      .op = static_cast<uint8_t>(fields.op),
      .data_type = static_cast<uint8_t>(fields.data_type),
      .reduce_op = 0,  // NCCL's descriptors do not carry it: from the wrapper, when it ran.
      .algorithm = static_cast<uint8_t>(fields.algorithm),
      .protocol = static_cast<uint8_t>(fields.protocol),
      .reserved = 0,
      .channels = fields.channels,
  };
  op->extension.kind = RecordKind::kExtension;
  op->extension.payload.collective_ext = {
      .bytes = fields.count * schema::DataTypeBytes(fields.data_type),
      .gpu_start_offset_ns = 0,
      .gpu_duration_ns = 0,
      .root_rank = IsRooted(fields.op) ? fields.root_rank : -1,
      .peer_rank = fields.peer_rank,
      .correlation_id = 0,
      .comm_size = context->comm_size,
  };
  const uint64_t base = kOpStopPending | op->expected_kernels;
  const uint64_t parent_handle = reinterpret_cast<uint64_t>(parent);
  EventSlot* api = (parent_handle & kKernelHandleBit) == 0 ? Lookup(parent_handle) : nullptr;
  if (api != nullptr && api->type.load(std::memory_order_relaxed) == SlotType::kApi) {
    LinkToApi(op, handle, api, parent_handle, base);
  } else {
    // No API parent (v4; v5 whose API event found the pool full): a call made through a
    // wrapper on this thread is this one (an ungrouped call; a grouped one starts its Coll at
    // ncclGroupEnd, outside the call).
    const NcclCallContext& call = t_nccl_call;
    if (call.active) {
      op->host_start_ns = call.start_ns;
      op->stream = call.stream;
      op->reduce_op = call.reduce_op;
    }
    op->state.store(OpState(GenerationOf(handle), base), std::memory_order_release);
  }
  return handle;
}

uint64_t StartKernel(void* parent, uint64_t timer) {
  const uint64_t parent_handle = reinterpret_cast<uint64_t>(parent);
  EventSlot* op = Lookup(parent_handle);
  if (op == nullptr || op->type.load(std::memory_order_relaxed) != SlotType::kOp) return 0;
  // Only the channels the operation announced are waited for; any further one is ignored.
  if (op->kernels_started.fetch_add(1, std::memory_order_relaxed) >= op->expected_kernels) {
    return 0;
  }
  AtomicMin(&op->gpu_start, timer);
  op->last_activity_ns.store(MonotonicNowNs(), std::memory_order_relaxed);
  return parent_handle | kKernelHandleBit;
}

}  // namespace lumos::agent::nccl_plugin
