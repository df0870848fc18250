// API events (CollApi/P2pApi), their GroupApi, and an operation's link to its API parent: every
// transition one CAS on the API slot's link word (nccl_plugin_pool.h, nccl_plugin_events.h).
#include <cstring>

#include "agent/nccl/nccl_channel.h"
#include "agent/nccl/nccl_plugin_events.h"
#include "schema/nccl_names.h"

namespace lumos::agent::nccl_plugin {
namespace {

std::atomic<uint32_t> g_group_counter{0};

// The API events started on this thread inside its open GroupApi (NCCL's API state is
// per thread): at the group's stop, those that got no Coll/P2p child get none any more.
constexpr uint32_t kMaxGroupApis = 64;  // Beyond: the sweep frees them.
struct ThreadGroup {
  uint64_t handle = 0;
  uint32_t count = 0;
  uint64_t apis[kMaxGroupApis];
};
thread_local ThreadGroup t_group;

}  // namespace

void SeeCall(ProfilerContext* context) {
  NcclCallContext& call = t_nccl_call;
  if (call.active) {
    call.plugin_saw = true;
    call.plugin_comm_id = context->comm_id;
    call.plugin_wrote_record = true;
  }
  // Relaxed first: the flag is almost always false; WritePendingContextRecord re-checks.
  if (!context->record_pending.load(std::memory_order_relaxed)) return;
  if (call.active && call.wrapper_record_pending) {
    if (context->record_pending.exchange(false, std::memory_order_acq_rel)) {
      call.plugin_wrote_record = false;
    }
  } else if (call.active || !context->v4) {
    WritePendingContextRecord(context);
  }
}

uint64_t StartApi(ProfilerContext* context, uint64_t parent, const ApiFields& fields) {
  // Seen even without a slot: NCCL still starts the call's Coll/P2p (it checks only the
  // activation mask), which then is the call's one record (or its counted loss).
  SeeCall(context);
  // NCCL gives a collective no Coll event on a one-rank communicator (ncclLaunchOneRank) or
  // when it is empty (dropped). The first becomes a record of its own, from this event.
  const bool one_rank = fields.collective && context->comm_size == 1;
  const bool childless = one_rank || (fields.collective && fields.count == 0);
  const auto op_index = static_cast<uint32_t>(schema::CollectiveOpFromNcclName(fields.func));
  // Relaxed: a counter; only its values matter. Taken also when the record is lost, so the
  // numbers stay one per call.
  const uint64_t api_only_seq =
      one_rank && op_index < kCollectiveOpCount
          ? context->api_only_seq[op_index].fetch_add(1, std::memory_order_relaxed)
          : 0;
  uint64_t handle = 0;
  EventSlot* api = Allocate(context, SlotType::kApi, &handle);
  if (api == nullptr) return 0;
  api->host_start_ns = MonotonicNowNs();
  api->api_end_ns.store(0, std::memory_order_relaxed);
  api->stream = reinterpret_cast<uint64_t>(fields.stream);
  api->thread_id = CurrentThreadId();
  api->child_handle.store(0, std::memory_order_relaxed);  // Published by the link store.
  const NcclCallContext& call = t_nccl_call;
  api->reduce_op = call.active ? call.reduce_op : 0;  // NCCL's descriptors lack it.
  std::memset(static_cast<void*>(&api->head), 0, sizeof(api->head));
  std::memset(static_cast<void*>(&api->extension), 0, sizeof(api->extension));
  if (one_rank) {
    const schema::CollectiveOp op = schema::CollectiveOpFromNcclName(fields.func);
    const schema::DataType data_type = schema::DataTypeFromNcclName(fields.datatype);
    api->head.kind = RecordKind::kCollective;
    api->head.payload.collective = {
        .comm_id = context->comm_id,
        .seq_number = api_only_seq,
        .count = fields.count,
        .op = static_cast<uint8_t>(op),
        .data_type = static_cast<uint8_t>(data_type),
    };
    api->extension.kind = RecordKind::kExtension;
    api->extension.payload.collective_ext = {
        .bytes = fields.count * schema::DataTypeBytes(data_type),
        .root_rank = IsRooted(op) ? fields.root : -1,
        .peer_rank = -1,
        .comm_size = context->comm_size,
    };
  }
  api->last_activity_ns.store(api->host_start_ns, std::memory_order_relaxed);
  api->link.store(Link(GenerationOf(handle), 0, kRunning), std::memory_order_release);
  // Settled when its group stops; any other API event waits for its child (or the sweep).
  ThreadGroup& group = t_group;
  if (childless && parent != 0 && parent == group.handle && group.count < kMaxGroupApis) {
    group.apis[group.count++] = handle;
  }
  return handle;
}

void RetireUnlinkedApi(EventSlot* api, RecordSink* sink) {
  Record head = api->head;
  Record extension = api->extension;
  head.start_ns = api->host_start_ns;
  const int64_t end = api->api_end_ns.load(std::memory_order_relaxed);
  head.end_ns = end >= head.start_ns ? end : head.start_ns;
  head.flags |= kRecordFlagHasHostTime;
  head.thread_id = api->thread_id;
  head.payload.collective.stream_id = api->stream;
  head.payload.collective.reduce_op = api->reduce_op;
  Release(api);
  if (head.kind != RecordKind::kCollective) return;  // No record of its own (see StartApi).
  if (sink != nullptr) {
    sink->Add(head, &extension);
  } else if (Enabled()) {
    PushCollectiveRecord(&head, extension);
  }
}

bool ClaimStoppedApi(EventSlot* api, uint32_t generation) {
  uint64_t expected = Link(generation, 0, kStopped);
  return api->link.compare_exchange_strong(expected, Link(generation, 0, kDone),
                                           std::memory_order_acq_rel, std::memory_order_relaxed);
}

void StopApi(EventSlot* api, uint64_t handle) {
  const uint32_t generation = GenerationOf(handle);
  const int64_t now = MonotonicNowNs();
  api->api_end_ns.store(now, std::memory_order_relaxed);  // Published by the CAS below.
  api->last_activity_ns.store(now, std::memory_order_relaxed);
  uint64_t current = api->link.load(std::memory_order_acquire);
  while ((current >> 32) == generation) {
    const uint64_t state = current & 3;
    if (state == kRunning) {
      // No child yet (its Coll/P2p starts at the group's launch, or never: one-rank
      // communicators, empty collectives). Kept until its GroupApi stops (or the sweep).
      if (api->link.compare_exchange_weak(current, Link(generation, 0, kStopped),
                                          std::memory_order_acq_rel)) {
        return;
      }
    } else if (state == kLinked) {
      if (api->link.compare_exchange_weak(current, Link(generation, 0, kDone),
                                          std::memory_order_acq_rel)) {
        // acq_rel: pairs with the linker's exchange (its handle; our end time).
        const uint64_t child_handle =
            api->child_handle.exchange(kApiStopSeen, std::memory_order_acq_rel);
        if (child_handle == 0) return;  // The linker finishes the link (LinkToApi).
        EventSlot* child = &g_slots[((current >> 2) & 0x3fffffff) - 1];
        child->api_end_ns.store(now, std::memory_order_relaxed);  // Published by FinishPart.
        Release(api);
        FinishPart(child, GenerationOf(child_handle));
        return;
      }
    } else {
      return;
    }
  }
}

// Finalize: takes the API slot of generation `generation` whatever its state, by one CAS on
// its link word, and frees it only then. A failed CAS means another claim (the sweep, a
// GroupApi's stop, a child's start) took it first and may have freed it for another event:
// never free it then. Stopped without a child: retired as the sweep would. Running (never
// stopped): freed. Linked: freed; its operation is written by finalize's ClaimOp.
void SettleApiAtFinalize(EventSlot* api, uint32_t generation) {
  uint64_t current = api->link.load(std::memory_order_acquire);
  while ((current >> 32) == generation && (current & 3) != kDone) {
    const uint64_t state = current & 3;
    if (api->link.compare_exchange_weak(current, Link(generation, 0, kDone),
                                        std::memory_order_acq_rel, std::memory_order_acquire)) {
      if (state == kStopped) {
        RetireUnlinkedApi(api, nullptr);
      } else if (state == kRunning ||
                 api->child_handle.exchange(kApiStopSeen, std::memory_order_acq_rel) != 0) {
        Release(api);  // Linked: unless its linker has yet to write, then it frees the slot.
      }
      return;
    }
  }
}

// A GroupApi started on this thread: the childless API events that follow inside it are
// remembered.
uint64_t StartGroupApi() {
  // Relaxed: only distinct values matter.
  const uint64_t handle =
      kGroupHandleBit | (g_group_counter.fetch_add(1, std::memory_order_relaxed) & 0x7fffffff);
  t_group.handle = handle;
  t_group.count = 0;
  return handle;
}

// The GroupApi stopped: its childless API events (which NCCL never gives a Coll/P2p) are
// settled. Only those: whether NCCL starts a group's Coll events before its GroupApi stops
// depends on the launch mode, so the others keep waiting for their child.
void StopGroupApi(uint64_t handle) {
  ThreadGroup& group = t_group;
  if (group.handle != handle) return;  // Stopped on another thread: the sweep takes them.
  for (uint32_t i = 0; i < group.count; ++i) {
    EventSlot* api = Lookup(group.apis[i]);
    if (api == nullptr || api->type.load(std::memory_order_relaxed) != SlotType::kApi) continue;
    if (ClaimStoppedApi(api, GenerationOf(group.apis[i]))) RetireUnlinkedApi(api, nullptr);
  }
  group.handle = 0;
  group.count = 0;
}

// Takes host start, stream and thread (and the end, when the API already stopped) from the
// API parent, linking the operation to it. `base` = parts the operation has without a parent.
void LinkToApi(EventSlot* op, uint64_t op_handle, EventSlot* api, uint64_t api_handle,
               uint64_t base) {
  const uint32_t generation = GenerationOf(api_handle);
  const uint32_t op_generation = GenerationOf(op_handle);
  const uint64_t op_index = op_handle & 0xffffffff;
  // Read before the CAS: afterwards the API's stop may free its slot. Before it, only this
  // (first) child can free it.
  const int64_t start = api->host_start_ns;
  const uint64_t stream = api->stream;
  const uint32_t thread_id = api->thread_id;
  const uint8_t reduce_op = api->reduce_op;
  if (TestHook hook = g_link_hook.load(std::memory_order_relaxed)) hook();
  // The API's stop is a part too; published by the CAS.
  op->state.store(OpState(op_generation, base + 1), std::memory_order_relaxed);
  uint64_t current = api->link.load(std::memory_order_acquire);
  while ((current >> 32) == generation) {
    const uint64_t state = current & 3;
    if (state == kRunning) {
      if (api->link.compare_exchange_weak(current, Link(generation, op_index, kLinked),
                                          std::memory_order_acq_rel)) {
        op->has_api = true;
        op->host_start_ns = start;
        op->stream = stream;
        op->thread_id = thread_id;
        op->reduce_op = reduce_op;
        // Only now, owning the link: before the CAS the API slot may have been freed and
        // reused. The API's stop reads it after taking kLinked to kDone (one exchange each).
        if (api->child_handle.exchange(op_handle, std::memory_order_acq_rel) != kApiStopSeen) {
          return;  // The state word keeps base + 1 (the API's stop takes that part).
        }
        // The API stopped in between and left its part to us.
        op->api_end_ns.store(api->api_end_ns.load(std::memory_order_relaxed),
                             std::memory_order_relaxed);
        Release(api);
        break;
      }
    } else if (state == kStopped) {
      if (api->link.compare_exchange_weak(current, Link(generation, 0, kDone),
                                          std::memory_order_acq_rel)) {
        op->has_api = true;
        op->host_start_ns = start;
        op->stream = stream;
        op->thread_id = thread_id;
        op->reduce_op = reduce_op;
        op->api_end_ns.store(api->api_end_ns.load(std::memory_order_relaxed),
                             std::memory_order_relaxed);
        Release(api);
        break;
      }
    } else {
      break;  // Already linked to another operation, or done: the op keeps its own times.
    }
  }
  op->state.store(OpState(op_generation, base), std::memory_order_release);
}

}  // namespace lumos::agent::nccl_plugin
