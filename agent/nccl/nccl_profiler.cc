#include "agent/nccl/nccl_profiler.h"

#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "agent/core/counted_loss.h"
#include "agent/core/no_destructor.h"
#include "agent/core/record.h"
#include "agent/core/thread_rings.h"
#include "agent/nccl/comm_table.h"
#include "agent/nccl/nccl_channel.h"
#include "agent/nccl/nccl_names.h"
#include "agent/runtime/agent_runtime.h"
#include "agent/runtime/record_source.h"
#include "base/logging.h"

namespace lumos::agent {
namespace {

namespace abi = nccl_abi;

struct ProfilerContext {
  std::atomic<bool> in_use{false};
  uint64_t comm_id = 0;
  uint32_t comm_size = 0;
  bool v4 = false;
  bool waits_for_kernels = false;  // KernelCh was asked for: wait for each channel's stop.
  std::atomic<uint64_t> send_seq{0};
  std::atomic<uint64_t> recv_seq{0};
  // One-rank communicators: NCCL runs their collectives without Coll events
  // (ncclLaunchOneRank), so their records come from the API events, numbered here per op.
  std::atomic<uint64_t> api_only_seq[kCollectiveOpCount] = {};
  // Lazy link (nccl_channel.h): this communicator's record waits for its first API event.
  std::atomic<bool> record_pending{false};
  int32_t rank = -1;
  uint32_t name_id = 0;
};

// Writes the record a context kept pending, unless someone else took it already.
void WritePendingContextRecord(ProfilerContext* context) {
  // acq_rel: the fields were written before the release store of the flag at init.
  if (!context->record_pending.exchange(false, std::memory_order_acq_rel)) return;
  PushCommunicatorRecordNamed(context->comm_id, 0, context->rank, context->comm_size, 0,
                              context->name_id);
}

enum class SlotType : uint8_t { kFree, kApi, kOp };

// One event in flight. busy/generation guard ownership; the plain fields are written by the
// thread that claimed the slot before the slot's state (op) or link (API) word is published
// with release, and read by whoever takes the slot's last part (acquire/acq_rel on that word).
struct EventSlot {
  std::atomic<uint32_t> busy{0};
  std::atomic<uint32_t> generation{0};
  std::atomic<SlotType> type{SlotType::kFree};
  std::atomic<ProfilerContext*> context{nullptr};  // Atomic: finalize scans other slots.
  // API slots: see the link states below.
  std::atomic<uint64_t> link{0};
  // API slots: the linked operation's handle, written by the linker only after its CAS to
  // kLinked; exchanged with kApiStopSeen by whoever takes kLinked to kDone (see LinkToApi).
  std::atomic<uint64_t> child_handle{0};
  // Operation slots: see OpState below.
  std::atomic<uint64_t> state{0};
  std::atomic<uint32_t> kernels_started{0};
  std::atomic<uint64_t> gpu_start{~uint64_t{0}};
  std::atomic<uint64_t> gpu_stop{0};
  // Last event of this slot (start, stop, kernel): the sweep writes ops idle for kStaleNs.
  std::atomic<int64_t> last_activity_ns{0};
  uint32_t expected_kernels = 0;
  uint32_t thread_id = 0;
  bool has_api = false;
  int64_t host_start_ns = 0;
  std::atomic<int64_t> api_end_ns{0};  // The API's stop (its own slot, or the linked child's).
  std::atomic<int64_t> op_end_ns{0};   // Operation slots: the Coll/P2p stop (enqueued).
  uint64_t stream = 0;
  uint8_t reduce_op = 0;  // From the wrapper's call (t_nccl_call); 0 = unknown.
  Record head;
  Record extension;
};

// API link word: generation of the API slot (bits 32..62), linked child slot + 1 (bits 2..31),
// state (bits 0..1). Every transition is one CAS on this word, so the API's stop, its child's
// start, its GroupApi's stop and the sweep agree on who frees the API slot.
enum LinkState : uint64_t { kRunning = 0, kLinked = 1, kStopped = 2, kDone = 3 };
constexpr uint64_t Link(uint32_t generation, uint64_t child_plus_1, LinkState state) {
  return (uint64_t{generation} << 32) | (child_plus_1 << 2) | state;
}
// In child_handle: the API's stop (or finalize) took kLinked to kDone before the linker wrote
// the child's handle; the linker then finishes the link itself. Never a handle (index + 1 is
// at most kNcclEventPoolSize).
constexpr uint64_t kApiStopSeen = ~uint64_t{0};

// Operation state word: generation (bits 32..63), "own stop still to come" (bit 31), other
// parts outstanding (bits 0..30: kernel channels, API parent's stop). Every part is one CAS
// that checks the generation, so a part that arrives after the sweep or finalize took the
// operation (or after its slot was reused) changes nothing. The record is written by whoever
// takes the word to 0.
constexpr uint64_t kOpStopPending = uint64_t{1} << 31;
constexpr uint64_t OpState(uint32_t generation, uint64_t parts) {
  return (uint64_t{generation} << 32) | parts;
}

constexpr uint64_t kKernelHandleBit = uint64_t{1} << 63;
// GroupApi handles: generation 0 (never a slot's) and an index beyond any pool, so Lookup
// rejects them; the low 31 bits tell groups apart (a process-wide counter).
constexpr uint64_t kGroupHandleBit = uint64_t{1} << 31;
constexpr uint32_t kMaxProbes = 64;
// An operation whose own stop came and that saw no event for this long is written with what
// it has (NCCL 2.28 can announce more channels than it reports KernelCh events for).
constexpr int64_t kStaleNs = 1'000'000'000;
// An API event stopped without a child for this long is settled by the sweep (its GroupApi
// was stopped on another thread, or it was beyond kMaxGroupApis). Longer than kStaleNs: a
// grouped call's Coll starts only at ncclGroupEnd, which a job may call much later.
constexpr int64_t kStaleApiNs = 10'000'000'000;

using TestHook = void (*)();
// Tests only: called by Finalize between reading an API slot and claiming it.
std::atomic<TestHook> g_finalize_scan_hook{nullptr};
// Tests only: called by LinkToApi between reading the API parent's fields and linking to it.
std::atomic<TestHook> g_link_hook{nullptr};

EventSlot g_slots[kNcclEventPoolSize];
std::atomic<uint32_t> g_capacity{kNcclEventPoolSize};
std::atomic<uint32_t> g_cursor{0};
ProfilerContext g_contexts[kNcclMaxContexts];
std::atomic<uint32_t> g_group_counter{0};
// The agent, cached at the first init so event callbacks skip Agent::Get()'s guard.
std::atomic<Agent*> g_agent{nullptr};

// The API events started on this thread inside its open GroupApi (NCCL's API state is
// per thread): at the group's stop, those that got no Coll/P2p child get none any more.
constexpr uint32_t kMaxGroupApis = 64;  // Beyond: the sweep frees them.
struct ThreadGroup {
  uint64_t handle = 0;
  uint32_t count = 0;
  uint64_t apis[kMaxGroupApis];
};
thread_local ThreadGroup t_group;

// The hot-path entry check (STYLE.md 5.2): relaxed loads; see EnabledFlag for why that is safe.
inline bool Enabled() {
  Agent* agent = g_agent.load(std::memory_order_relaxed);
  return agent != nullptr && agent->enabled().enabled();
}

inline uint32_t CurrentThreadId() {
  Agent* agent = g_agent.load(std::memory_order_relaxed);
  ThreadRings* rings = agent != nullptr ? agent->rings() : nullptr;
  return rings != nullptr ? rings->CurrentThreadRing()->thread_id() : 0;
}

inline uint32_t GenerationOf(uint64_t handle) {
  return static_cast<uint32_t>(handle >> 32) & 0x7fffffff;
}
inline bool IsGroupHandle(uint64_t handle) {
  return (handle >> 32) == 0 && (handle & kGroupHandleBit) != 0;
}

EventSlot* Allocate(ProfilerContext* context, SlotType type, uint64_t* handle) {
  const uint32_t capacity = g_capacity.load(std::memory_order_relaxed);
  const uint32_t probes = capacity < kMaxProbes ? capacity : kMaxProbes;
  for (uint32_t i = 0; i < probes; ++i) {
    // Relaxed: the cursor only spreads claims; ownership is the CAS below.
    const uint32_t index = g_cursor.fetch_add(1, std::memory_order_relaxed) % capacity;
    EventSlot& slot = g_slots[index];
    uint32_t expected = 0;
    // Acquire: pairs with Release()'s store, so the previous owner is done with the slot.
    if (slot.busy.load(std::memory_order_relaxed) != 0 ||
        !slot.busy.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
      continue;
    }
    uint32_t generation = slot.generation.load(std::memory_order_relaxed) + 1;
    if (generation >= (1u << 31)) generation = 1;
    slot.type.store(type, std::memory_order_relaxed);
    slot.context.store(context, std::memory_order_relaxed);
    // Release, after type and context: a scan that reads this generation (acquire) reads them
    // as this event set them (Finalize's context check).
    slot.generation.store(generation, std::memory_order_release);
    *handle = (uint64_t{generation} << 32) | (index + 1);
    return &slot;
  }
  CountLoss(CountedLoss::kNcclEventPool);
  return nullptr;
}

// The live slot of `handle` (any type), or null for stale, foreign or malformed handles.
EventSlot* Lookup(uint64_t handle) {
  const uint64_t index_plus_1 = handle & 0xffffffff;
  if (index_plus_1 == 0 || index_plus_1 > kNcclEventPoolSize) return nullptr;
  EventSlot& slot = g_slots[index_plus_1 - 1];
  if (slot.busy.load(std::memory_order_acquire) == 0 ||
      slot.generation.load(std::memory_order_acquire) != GenerationOf(handle)) {
    return nullptr;
  }
  return &slot;
}

void Release(EventSlot* slot) {
  slot->type.store(SlotType::kFree, std::memory_order_relaxed);
  slot->context.store(nullptr, std::memory_order_relaxed);
  slot->busy.store(0, std::memory_order_release);
}

inline void AtomicMin(std::atomic<uint64_t>* value, uint64_t candidate) {
  uint64_t current = value->load(std::memory_order_relaxed);
  while (candidate < current &&
         !value->compare_exchange_weak(current, candidate, std::memory_order_relaxed)) {
  }
}
inline void AtomicMax(std::atomic<uint64_t>* value, uint64_t candidate) {
  uint64_t current = value->load(std::memory_order_relaxed);
  while (candidate > current &&
         !value->compare_exchange_weak(current, candidate, std::memory_order_relaxed)) {
  }
}

int64_t RealtimeMinusMonotonicNs() {
  timespec realtime{};
  clock_gettime(CLOCK_REALTIME, &realtime);
  const int64_t realtime_ns =
      static_cast<int64_t>(realtime.tv_sec) * 1'000'000'000 + realtime.tv_nsec;
  return realtime_ns - ReadMonotonicNs();  // Exact: a clock-domain offset.
}

// The record of an operation whose state word this thread took to 0, then frees its slot.
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

// Applies `change` to the state word of `op` (generation `generation`) unless the word is
// stale or already 0; the caller that takes it to 0 writes the record.
template <typename Change>
void UpdateOp(EventSlot* op, uint32_t generation, Change change) {
  uint64_t current = op->state.load(std::memory_order_acquire);
  while ((current >> 32) == generation && (current & 0xffffffff) != 0) {
    const uint64_t next = change(current);
    if (next == current) return;
    // acq_rel: every part's writes (end times, GPU timers) happen before the last part reads.
    if (op->state.compare_exchange_weak(current, next, std::memory_order_acq_rel,
                                        std::memory_order_acquire)) {
      if ((next & 0xffffffff) == 0) EmitAndRelease(op);
      return;
    }
  }
}

// One outstanding part (a kernel channel, the API parent's stop) of `op` is done.
void FinishPart(EventSlot* op, uint32_t generation) {
  UpdateOp(op, generation,
           [](uint64_t state) { return (state & (kOpStopPending - 1)) != 0 ? state - 1 : state; });
}
// The operation's own stop (NCCL: enqueued).
void FinishOwnStop(EventSlot* op, uint32_t generation) {
  UpdateOp(op, generation, [](uint64_t state) { return state & ~kOpStopPending; });
}

// Takes every outstanding part of `op` at once (sweep, finalize, final flush). With
// `only_stopped`, only an operation whose own stop came. True: the caller writes the record.
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

bool IsRooted(schema::CollectiveOp op) {
  return op == schema::CollectiveOp::kBroadcast || op == schema::CollectiveOp::kReduce ||
         op == schema::CollectiveOp::kGather || op == schema::CollectiveOp::kScatter;
}

// What a CollApi/P2pApi event tells about its call.
struct ApiFields {
  bool collective = false;  // CollApi (else P2pApi).
  const char* func = nullptr;
  size_t count = 0;
  const char* datatype = nullptr;
  int root = -1;
  void* stream = nullptr;
};

// The event NCCL starts on the user's thread inside a call (v5: the CollApi/P2pApi; v4: the
// Coll/P2p of an ungrouped call) marks the wrapper's call, if any, as this plugin's to record
// (nccl_channel.h), and settles this communicator's pending record: the lazy link when the
// wrapper's record is pending too (the wrapper writes the one record, with this comm id), else
// this record is written now. v4 keeps its pending record past events outside a call (a
// grouped call's Coll at ncclGroupEnd): a later ungrouped call may still link it.
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
  const auto op_index = static_cast<uint32_t>(CollectiveOpFromNcclName(fields.func));
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
    const schema::CollectiveOp op = CollectiveOpFromNcclName(fields.func);
    const schema::DataType data_type = DataTypeFromNcclName(fields.datatype);
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

// An API slot nobody will link any more (its link word taken to kDone by this thread): written
// when it is the only record of its operation (a one-rank communicator), then freed.
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

// Takes an API slot that stopped without a child; true: the caller retires it.
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

struct OpFields {
  schema::CollectiveOp op = schema::CollectiveOp::kUnspecified;
  uint64_t seq_number = 0;
  uint64_t count = 0;
  schema::DataType data_type = schema::DataType::kUnspecified;
  int32_t root_rank = -1;
  int32_t peer_rank = -1;
  uint8_t channels = 0;
  schema::NcclAlgorithm algorithm = schema::NcclAlgorithm::kUnspecified;
  schema::NcclProtocol protocol = schema::NcclProtocol::kUnspecified;
};

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

// Writes (sink) what waits too long, or everything at the end: operations whose own stop came
// and that saw no event for kStaleNs (or any time, with `everything`), and API events left
// without a child for kStaleApiNs (GroupApi stopped on another thread, more than
// kMaxGroupApis in a group).
void Sweep(RecordSink& sink, bool everything) {
  const int64_t now = MonotonicNowNs();
  const int64_t idle_since = everything ? INT64_MAX : now - kStaleNs;
  const int64_t api_idle_since = everything ? INT64_MAX : now - kStaleApiNs;
  const uint32_t capacity = g_capacity.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < capacity; ++i) {
    EventSlot& slot = g_slots[i];
    if (slot.busy.load(std::memory_order_acquire) == 0) continue;
    const uint32_t generation = slot.generation.load(std::memory_order_acquire);
    const SlotType type = slot.type.load(std::memory_order_relaxed);
    if (type == SlotType::kOp) {
      if (ClaimOp(&slot, generation, /*only_stopped=*/true, idle_since)) {
        Record head, extension;
        TakeRecordAndRelease(&slot, &head, &extension);
        sink.Add(head, &extension);
      }
    } else if (type == SlotType::kApi &&
               slot.last_activity_ns.load(std::memory_order_relaxed) <= api_idle_since &&
               ClaimStoppedApi(&slot, generation)) {
      RetireUnlinkedApi(&slot, &sink);
    }
  }
}

// The writer pulls what the sweep finds (agent/runtime/record_source.h).
class StaleEventSource : public RecordSource {
 public:
  void Drain(RecordSink& sink) override { Sweep(sink, final_.load(std::memory_order_acquire)); }
  // The job exits (with or without ncclCommDestroy): what still waits is written now.
  void FlushBeforeFinalDrain() override {
    final_.store(true, std::memory_order_release);
    // Before the final drain, into this thread's ring: communicators that made no call.
    for (ProfilerContext& context : g_contexts) {
      if (context.in_use.load(std::memory_order_acquire)) WritePendingContextRecord(&context);
    }
  }

 private:
  std::atomic<bool> final_{false};
};

void RegisterStaleEventSource(Agent& agent) {
  static NoDestructor<StaleEventSource> source;
  static std::once_flag once;
  std::call_once(once, [&] {
    if (!agent.AddRecordSource(&source.get())) {
      LUMOS_LOG(Warn,
                "nccl plugin: no record source left; operations that never get all "
                "their kernel events wait until their communicator is finalized");
    }
  });
}

ProfilerContext* ContextOf(void* context) { return static_cast<ProfilerContext*>(context); }

// Claims a context and registers with the agent; may throw (the agent's start-up allocates).
ProfilerContext* ClaimContext(uint64_t comm_id, const char* comm_name, int nranks, int rank,
                              bool v5) {
  Agent& agent = Agent::Get();
  g_agent.store(&agent, std::memory_order_relaxed);
  RegisterStaleEventSource(agent);
  // As the wrappers do (the plugin may run without them): the largest names the trace's rank.
  agent.NoteCommunicator(rank, nranks);
  ProfilerContext* claimed = nullptr;
  for (ProfilerContext& candidate : g_contexts) {
    bool expected = false;
    if (candidate.in_use.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      claimed = &candidate;
      break;
    }
  }
  CommInitCapture& capture = t_comm_init_capture;
  if (claimed == nullptr) {
    // Counted, and only this communicator goes without events: the wrappers record its calls.
    CountLoss(CountedLoss::kNcclContexts);
    if (capture.active) capture.route = PluginRoute::kNone;
    return nullptr;
  }
  claimed->comm_id = comm_id;
  claimed->comm_size = nranks > 0 ? static_cast<uint32_t>(nranks) : 0;
  claimed->v4 = !v5;
  claimed->waits_for_kernels = true;
  claimed->send_seq.store(0, std::memory_order_relaxed);
  claimed->recv_seq.store(0, std::memory_order_relaxed);
  for (auto& seq : claimed->api_only_seq) seq.store(0, std::memory_order_relaxed);
  claimed->record_pending.store(false, std::memory_order_relaxed);
  if (!v5 && claimed->comm_size != 1) g_plugin_v4_contexts.fetch_add(1, std::memory_order_relaxed);
  if (capture.active) {
    // A wrapper is running this communicator's init: it writes the one Communicator record.
    capture.plugin_saw_init = true;
    capture.route = v5 ? PluginRoute::kV5 : PluginRoute::kV4;
    capture.plugin_comm_id = comm_id;
  } else if ((v5 || claimed->comm_size != 1) &&
             g_wrapper_records_pending.load(std::memory_order_relaxed) > 0) {
    // A wrapper created a communicator whose init it did not see (grouped or non-blocking):
    // this may be it. The record waits for the lazy link (nccl_channel.h). Not a v4 one-rank
    // communicator: NCCL gives it no Coll event to link at.
    claimed->rank = rank;
    claimed->name_id = InternCommName(comm_name != nullptr ? comm_name : "");
    claimed->record_pending.store(true, std::memory_order_release);
  } else {
    PushCommunicatorRecord(comm_id, 0, rank, claimed->comm_size, 0,
                           comm_name != nullptr ? comm_name : "");
  }
  return claimed;
}

std::atomic<bool> g_init_failed{false};

ncclResult_t InitContext(void** context, int* activation_mask, uint64_t comm_id,
                         const char* comm_name, int nranks, int rank, bool v5) noexcept {
  if (context == nullptr || activation_mask == nullptr) return ncclInvalidArgument;
  *context = nullptr;
  *activation_mask = 0;  // Nothing asked for unless the channel is on.
  if (g_init_failed.load(std::memory_order_relaxed)) return ncclSuccess;
  ProfilerContext* claimed = nullptr;
  try {
    if (!NcclChannelOn(schema::Channel::kNcclPlugin)) return ncclSuccess;
    claimed = ClaimContext(comm_id, comm_name, nranks, rank, v5);
  } catch (...) {
    // Never into NCCL: the channel goes off for good, with one warning.
    if (!g_init_failed.exchange(true)) {
      LUMOS_LOG(Warn, "nccl plugin: set-up failed with an exception; the plugin records nothing");
    }
    return ncclSuccess;
  }
  // The mask is NCCL's, shared by all its communicators: the same for every init, even one
  // without a context (its events then start with a null context and are ignored).
  uint64_t mask = abi::kProfileColl | abi::kProfileP2p | abi::kProfileKernelCh;
  if (v5) mask |= abi::kProfileGroupApi | abi::kProfileCollApi | abi::kProfileP2pApi;
  *activation_mask = static_cast<int>(mask);
  *context = claimed;
  return ncclSuccess;
}

ncclResult_t InitV5(void** context, uint64_t comm_id, int* activation_mask, const char* comm_name,
                    int /*nodes*/, int nranks, int rank, abi::DebugLogger /*log*/) noexcept {
  return InitContext(context, activation_mask, comm_id, comm_name, nranks, rank, /*v5=*/true);
}

ncclResult_t InitV4(void** context, int* activation_mask, const char* comm_name, uint64_t comm_hash,
                    int /*nodes*/, int nranks, int rank, abi::DebugLogger /*log*/) noexcept {
  return InitContext(context, activation_mask, comm_hash, comm_name, nranks, rank, /*v5=*/false);
}

OpFields CollFields(uint64_t seq_number, const char* func, size_t count, int root,
                    const char* datatype, uint8_t channels, const char* algorithm,
                    const char* protocol) {
  return OpFields{.op = CollectiveOpFromNcclName(func),
                  .seq_number = seq_number,
                  .count = count,
                  .data_type = DataTypeFromNcclName(datatype),
                  .root_rank = root,
                  .peer_rank = -1,
                  .channels = channels,
                  .algorithm = AlgorithmFromNcclName(algorithm),
                  .protocol = ProtocolFromNcclName(protocol)};
}

OpFields P2pFields(ProfilerContext* context, const char* func, size_t count, int peer,
                   const char* datatype, uint8_t channels) {
  const schema::CollectiveOp op = CollectiveOpFromNcclName(func);
  std::atomic<uint64_t>& seq =
      op == schema::CollectiveOp::kRecv ? context->recv_seq : context->send_seq;
  return OpFields{.op = op,
                  .seq_number = seq.fetch_add(1, std::memory_order_relaxed),
                  .count = count,
                  .data_type = DataTypeFromNcclName(datatype),
                  .root_rank = -1,
                  .peer_rank = peer,
                  .channels = channels};
}

ncclResult_t StartEventV5(void* context, void** handle, abi::EventDescrV5* descr) noexcept {
  if (handle == nullptr) return ncclSuccess;
  *handle = nullptr;
  ProfilerContext* ctx = ContextOf(context);
  if (ctx == nullptr || descr == nullptr || !Enabled()) return ncclSuccess;
  uint64_t result = 0;
  switch (descr->type) {
    case abi::kProfileGroupApi:
      result = StartGroupApi();
      break;
    case abi::kProfileCollApi: {
      const auto& c = descr->coll_api;
      result = StartApi(ctx, reinterpret_cast<uint64_t>(descr->parent),
                        {.collective = true,
                         .func = c.func,
                         .count = c.count,
                         .datatype = c.datatype,
                         .root = c.root,
                         .stream = c.stream});
      break;
    }
    case abi::kProfileP2pApi: {
      const auto& p = descr->p2p_api;
      result =
          StartApi(ctx, reinterpret_cast<uint64_t>(descr->parent),
                   {.func = p.func, .count = p.count, .datatype = p.datatype, .stream = p.stream});
      break;
    }
    case abi::kProfileColl: {
      const auto& c = descr->coll;
      result = StartOp(ctx, descr->parent,
                       CollFields(c.seq_number, c.func, c.count, c.root, c.datatype, c.channels,
                                  c.algorithm, c.protocol));
      break;
    }
    case abi::kProfileP2p: {
      const auto& p = descr->p2p;
      result = StartOp(ctx, descr->parent,
                       P2pFields(ctx, p.func, p.count, p.peer, p.datatype, p.channels));
      break;
    }
    case abi::kProfileKernelCh:
      result = StartKernel(descr->parent, descr->kernel_ch.timer);
      break;
    default:  // Not asked for.
      break;
  }
  // The handle is an opaque token to NCCL, never a pointer it dereferences.
  // NOLINTNEXTLINE(performance-no-int-to-ptr)
  *handle = reinterpret_cast<void*>(result);
  return ncclSuccess;
}

ncclResult_t StartEventV4(void* context, void** handle, abi::EventDescrV4* descr) noexcept {
  if (handle == nullptr) return ncclSuccess;
  *handle = nullptr;
  ProfilerContext* ctx = ContextOf(context);
  if (ctx == nullptr || descr == nullptr || !Enabled()) return ncclSuccess;
  uint64_t result = 0;
  switch (descr->type) {
    case abi::kProfileColl: {
      const auto& c = descr->coll;
      result = StartOp(ctx, nullptr,
                       CollFields(c.seq_number, c.func, c.count, c.root, c.datatype, c.channels,
                                  c.algorithm, c.protocol));
      break;
    }
    case abi::kProfileP2p: {
      const auto& p = descr->p2p;
      result =
          StartOp(ctx, nullptr, P2pFields(ctx, p.func, p.count, p.peer, p.datatype, p.channels));
      break;
    }
    case abi::kProfileKernelCh:
      result = StartKernel(descr->parent, descr->kernel_ch.timer);
      break;
    default:
      break;
  }
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an opaque token, as above.
  *handle = reinterpret_cast<void*>(result);
  return ncclSuccess;
}

ncclResult_t StopEvent(void* handle) noexcept {
  const uint64_t value = reinterpret_cast<uint64_t>(handle);
  if (value == 0) return ncclSuccess;
  if (IsGroupHandle(value)) {
    StopGroupApi(value);
    return ncclSuccess;
  }
  EventSlot* slot = Lookup(value & ~kKernelHandleBit);
  if (slot == nullptr) return ncclSuccess;
  const SlotType type = slot->type.load(std::memory_order_relaxed);
  const uint32_t generation = GenerationOf(value);
  if ((value & kKernelHandleBit) != 0) {
    if (type == SlotType::kOp) {
      slot->last_activity_ns.store(MonotonicNowNs(), std::memory_order_relaxed);
      FinishPart(slot, generation);
    }
  } else if (type == SlotType::kApi) {
    StopApi(slot, value);
  } else if (type == SlotType::kOp) {
    const int64_t now = MonotonicNowNs();
    slot->op_end_ns.store(now, std::memory_order_relaxed);  // Enqueued; published by the CAS.
    slot->last_activity_ns.store(now, std::memory_order_relaxed);
    FinishOwnStop(slot, generation);
  }
  return ncclSuccess;
}

ncclResult_t RecordEventState(void* handle, int state, abi::EventStateArgs* args) noexcept {
  const uint64_t value = reinterpret_cast<uint64_t>(handle);
  if ((value & kKernelHandleBit) == 0 || state != abi::kStateKernelChStop || args == nullptr) {
    return ncclSuccess;
  }
  EventSlot* op = Lookup(value & ~kKernelHandleBit);
  if (op != nullptr) AtomicMax(&op->gpu_stop, args->kernel_ch.timer);
  return ncclSuccess;
}

ncclResult_t Finalize(void* context) noexcept {
  ProfilerContext* ctx = ContextOf(context);
  if (ctx == nullptr) return ncclSuccess;
  // NCCL has no event of this communicator in flight any more: write what still waits (an
  // operation whose KernelCh events never came) and the API events nobody linked.
  const uint32_t capacity = g_capacity.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < capacity; ++i) {
    EventSlot& slot = g_slots[i];
    if (slot.busy.load(std::memory_order_acquire) == 0 ||
        slot.context.load(std::memory_order_relaxed) != ctx) {
      continue;
    }
    // Generation first, then context and type (Allocate publishes them in that order): the
    // slot may have been freed and taken by another communicator since the checks above.
    const uint32_t generation = slot.generation.load(std::memory_order_acquire);
    if (slot.context.load(std::memory_order_relaxed) != ctx) continue;
    const SlotType type = slot.type.load(std::memory_order_relaxed);
    if (type == SlotType::kApi) {
      if (TestHook hook = g_finalize_scan_hook.load(std::memory_order_relaxed)) hook();
      SettleApiAtFinalize(&slot, generation);
    } else if (type == SlotType::kOp &&
               ClaimOp(&slot, generation, /*only_stopped=*/false, INT64_MAX)) {
      EmitAndRelease(&slot);
    }
  }
  WritePendingContextRecord(ctx);  // A communicator that made no call.
  if (ctx->v4 && ctx->comm_size != 1) g_plugin_v4_contexts.fetch_sub(1, std::memory_order_relaxed);
  ctx->in_use.store(false, std::memory_order_release);
  return ncclSuccess;
}

}  // namespace

namespace internal {
void SetNcclEventPoolCapacityForTest(uint32_t capacity) {
  if (capacity == 0 || capacity > kNcclEventPoolSize) capacity = kNcclEventPoolSize;
  g_capacity.store(capacity, std::memory_order_relaxed);
}
void SetNcclFinalizeScanHookForTest(void (*hook)()) {
  g_finalize_scan_hook.store(hook, std::memory_order_relaxed);
}
void SetNcclLinkHookForTest(void (*hook)()) { g_link_hook.store(hook, std::memory_order_relaxed); }
std::span<const std::byte> NcclEventPoolMemory() { return std::as_bytes(std::span(g_slots)); }
std::span<const std::byte> NcclContextTableMemory() { return std::as_bytes(std::span(g_contexts)); }
}  // namespace internal

}  // namespace lumos::agent

extern "C" {
__attribute__((visibility("default"))) lumos::agent::nccl_abi::ProfilerV5 ncclProfiler_v5 = {
    "lumos",
    &lumos::agent::InitV5,
    &lumos::agent::StartEventV5,
    &lumos::agent::StopEvent,
    &lumos::agent::RecordEventState,
    &lumos::agent::Finalize,
};
__attribute__((visibility("default"))) lumos::agent::nccl_abi::ProfilerV4 ncclProfiler_v4 = {
    "lumos",
    &lumos::agent::InitV4,
    &lumos::agent::StartEventV4,
    &lumos::agent::StopEvent,
    &lumos::agent::RecordEventState,
    &lumos::agent::Finalize,
};
}
