#include "agent/nccl/nccl_profiler.h"

#include <time.h>

#include <atomic>
#include <cstring>

#include "agent/core/counted_loss.h"
#include "agent/core/record.h"
#include "agent/core/thread_rings.h"
#include "agent/nccl/nccl_channel.h"
#include "agent/nccl/nccl_names.h"
#include "agent/runtime/agent_runtime.h"
#include "base/logging.h"

namespace lumos::agent {
namespace {

namespace abi = nccl_abi;

struct ProfilerContext {
  std::atomic<bool> in_use{false};
  uint64_t comm_id = 0;
  uint32_t comm_size = 0;
  bool waits_for_kernels = false;  // KernelCh was asked for: wait for each channel's stop.
  std::atomic<uint64_t> send_seq{0};
  std::atomic<uint64_t> recv_seq{0};
};

enum class SlotType : uint8_t { kFree, kApi, kOp };

// One event in flight. busy/generation guard ownership; the rest is written by the thread that
// claimed the slot before the handle goes to NCCL (NCCL's own hand-off orders it for the threads
// that get the handle), except the atomics and the *_end_ns fields, which are published through
// `remaining`'s acq_rel decrements.
struct EventSlot {
  std::atomic<uint32_t> busy{0};
  std::atomic<uint32_t> generation{0};
  std::atomic<SlotType> type{SlotType::kFree};
  std::atomic<ProfilerContext*> context{nullptr};  // Atomic: finalize scans other slots.
  // API slots: see the link states below.
  std::atomic<uint64_t> link{0};
  // Operation slots: parts still outstanding (own stop, kernels, API parent's stop).
  std::atomic<uint32_t> remaining{0};
  std::atomic<uint32_t> kernels_started{0};
  std::atomic<uint64_t> gpu_start{~uint64_t{0}};
  std::atomic<uint64_t> gpu_stop{0};
  uint32_t expected_kernels = 0;
  uint32_t thread_id = 0;
  bool has_api = false;
  int64_t host_start_ns = 0;
  int64_t api_end_ns = 0;  // Written by the API's stop (its own slot, or the linked child's).
  int64_t op_end_ns = 0;   // Operation slots: the Coll/P2p stop (enqueued).
  uint64_t stream = 0;
  Record head;
  Record extension;
};

// API link word: generation of the API slot (bits 32..62), linked child slot + 1 (bits 2..31),
// state (bits 0..1). Every transition is one CAS on this word, so the API's stop and its child's
// start agree on who frees the API slot and who tells whom the API's end time.
enum LinkState : uint64_t { kRunning = 0, kLinked = 1, kStopped = 2, kDone = 3 };
constexpr uint64_t Link(uint32_t generation, uint64_t child_plus_1, LinkState state) {
  return (uint64_t{generation} << 32) | (child_plus_1 << 2) | state;
}

constexpr uint64_t kKernelHandleBit = uint64_t{1} << 63;
constexpr uint64_t kGroupApiHandle = 1;  // Generation 0 is never handed out: no slot matches.
constexpr uint32_t kMaxProbes = 64;

EventSlot g_slots[kNcclEventPoolSize];
std::atomic<uint32_t> g_capacity{kNcclEventPoolSize};
std::atomic<uint32_t> g_cursor{0};
ProfilerContext g_contexts[kNcclMaxContexts];
// The agent, cached at the first init so event callbacks skip Agent::Get()'s guard.
std::atomic<Agent*> g_agent{nullptr};

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
    slot.generation.store(generation, std::memory_order_release);
    slot.type.store(type, std::memory_order_relaxed);
    slot.context.store(context, std::memory_order_relaxed);
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

// Builds the record of a finished operation, frees its slot and pushes the record.
void EmitAndRelease(EventSlot* op) {
  Record head = op->head;
  Record extension = op->extension;
  const int64_t end = op->has_api && op->api_end_ns != 0 ? op->api_end_ns : op->op_end_ns;
  head.start_ns = op->host_start_ns;
  head.end_ns = end >= head.start_ns ? end : head.start_ns;
  head.flags |= kRecordFlagHasHostTime;
  head.thread_id = op->thread_id;
  head.payload.collective.stream_id = op->stream;
  const uint64_t gpu_start = op->gpu_start.load(std::memory_order_relaxed);
  const uint64_t gpu_stop = op->gpu_stop.load(std::memory_order_relaxed);
  if (gpu_start != ~uint64_t{0} && gpu_stop >= gpu_start) {
    CollectiveExtension& x = extension.payload.collective_ext;
    x.gpu_duration_ns = gpu_stop - gpu_start;
    const int64_t offset =
        static_cast<int64_t>(gpu_start) - RealtimeMinusMonotonicNs() - head.start_ns;
    constexpr int64_t kEarliest = -1'000'000'000, kLatest = 600'000'000'000;
    if (offset >= kEarliest && offset <= kLatest) x.gpu_start_offset_ns = offset;
  }
  Release(op);
  if (Enabled()) PushCollectiveRecord(&head, extension);
}

// One outstanding part of `op` is done; the last one writes the record.
void FinishPart(EventSlot* op) {
  // acq_rel: every part's writes (end times, GPU timers) happen before the last part reads them.
  if (op->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) EmitAndRelease(op);
}

uint64_t StartApi(ProfilerContext* context, void* stream) {
  uint64_t handle = 0;
  EventSlot* api = Allocate(context, SlotType::kApi, &handle);
  if (api == nullptr) return 0;
  api->host_start_ns = MonotonicNowNs();
  api->api_end_ns = 0;
  api->stream = reinterpret_cast<uint64_t>(stream);
  api->thread_id = CurrentThreadId();
  api->link.store(Link(GenerationOf(handle), 0, kRunning), std::memory_order_release);
  return handle;
}

void StopApi(EventSlot* api, uint64_t handle) {
  const uint32_t generation = GenerationOf(handle);
  api->api_end_ns = MonotonicNowNs();  // Published by the release CAS below.
  uint64_t current = api->link.load(std::memory_order_acquire);
  while ((current >> 32) == generation) {
    const uint64_t state = current & 3;
    if (state == kRunning) {
      // No child yet (a grouped call: its Coll/P2p starts at ncclGroupEnd). Keep the slot.
      if (api->link.compare_exchange_weak(current, Link(generation, 0, kStopped),
                                          std::memory_order_acq_rel)) {
        return;
      }
    } else if (state == kLinked) {
      if (api->link.compare_exchange_weak(current, Link(generation, 0, kDone),
                                          std::memory_order_acq_rel)) {
        EventSlot* child = &g_slots[((current >> 2) & 0x3fffffff) - 1];
        child->api_end_ns = api->api_end_ns;
        Release(api);
        FinishPart(child);
        return;
      }
    } else {
      return;
    }
  }
}

// Takes host start, stream and thread (and the end, when the API already stopped) from the
// API parent, linking the operation to it. `base` = parts the operation has without a parent.
void LinkToApi(EventSlot* op, uint32_t op_index, EventSlot* api, uint64_t api_handle,
               uint32_t base) {
  const uint32_t generation = GenerationOf(api_handle);
  // Read before the CAS: afterwards the API's stop may free its slot. Before it, only this
  // (first) child can free it.
  const int64_t start = api->host_start_ns;
  const uint64_t stream = api->stream;
  const uint32_t thread_id = api->thread_id;
  op->remaining.store(base + 1, std::memory_order_relaxed);  // Published by the CAS.
  uint64_t current = api->link.load(std::memory_order_acquire);
  while ((current >> 32) == generation) {
    const uint64_t state = current & 3;
    if (state == kRunning) {
      if (api->link.compare_exchange_weak(current, Link(generation, op_index + 1, kLinked),
                                          std::memory_order_acq_rel)) {
        op->has_api = true;
        op->host_start_ns = start;
        op->stream = stream;
        op->thread_id = thread_id;
        return;
      }
    } else if (state == kStopped) {
      if (api->link.compare_exchange_weak(current, Link(generation, 0, kDone),
                                          std::memory_order_acq_rel)) {
        op->has_api = true;
        op->host_start_ns = start;
        op->stream = stream;
        op->thread_id = thread_id;
        op->api_end_ns = api->api_end_ns;
        Release(api);
        break;
      }
    } else {
      break;  // Already linked to another operation, or done: the op keeps its own times.
    }
  }
  op->remaining.store(base, std::memory_order_relaxed);
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

bool IsRooted(schema::CollectiveOp op) {
  return op == schema::CollectiveOp::kBroadcast || op == schema::CollectiveOp::kReduce ||
         op == schema::CollectiveOp::kGather || op == schema::CollectiveOp::kScatter;
}

uint64_t StartOp(ProfilerContext* context, void* parent, const OpFields& fields) {
  uint64_t handle = 0;
  EventSlot* op = Allocate(context, SlotType::kOp, &handle);
  if (op == nullptr) return 0;
  const uint32_t index = static_cast<uint32_t>(handle & 0xffffffff) - 1;
  op->expected_kernels = context->waits_for_kernels ? fields.channels : 0;
  op->kernels_started.store(0, std::memory_order_relaxed);
  op->gpu_start.store(~uint64_t{0}, std::memory_order_relaxed);
  op->gpu_stop.store(0, std::memory_order_relaxed);
  op->has_api = false;
  op->host_start_ns = MonotonicNowNs();
  op->api_end_ns = 0;
  op->op_end_ns = 0;
  op->stream = 0;
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
      .reduce_op = 0,  // NCCL's descriptors do not carry it.
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
  const uint32_t base = 1 + op->expected_kernels;
  const uint64_t parent_handle = reinterpret_cast<uint64_t>(parent);
  EventSlot* api = (parent_handle & kKernelHandleBit) == 0 ? Lookup(parent_handle) : nullptr;
  if (api != nullptr && api->type.load(std::memory_order_relaxed) == SlotType::kApi) {
    LinkToApi(op, index, api, parent_handle, base);
  } else {
    op->remaining.store(base, std::memory_order_relaxed);
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
  return parent_handle | kKernelHandleBit;
}

ProfilerContext* ContextOf(void* context) { return static_cast<ProfilerContext*>(context); }

ncclResult_t InitContext(void** context, int* activation_mask, uint64_t comm_id,
                         const char* comm_name, int nranks, int rank, bool v5) noexcept {
  if (context == nullptr || activation_mask == nullptr) return ncclInvalidArgument;
  *context = nullptr;
  *activation_mask = 0;  // Nothing asked for unless the channel is on.
  if (!NcclChannelOn(schema::Channel::kNcclPlugin)) return ncclSuccess;
  g_agent.store(&Agent::Get(), std::memory_order_relaxed);
  // As the wrappers do (the plugin may run without them): the largest names the trace's rank.
  Agent::Get().NoteCommunicator(rank, nranks);
  ProfilerContext* claimed = nullptr;
  for (ProfilerContext& candidate : g_contexts) {
    bool expected = false;
    if (candidate.in_use.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      claimed = &candidate;
      break;
    }
  }
  if (claimed == nullptr) {
    CountLoss(CountedLoss::kNcclContexts);
    return ncclSuccess;
  }
  claimed->comm_id = comm_id;
  claimed->comm_size = nranks > 0 ? static_cast<uint32_t>(nranks) : 0;
  claimed->waits_for_kernels = true;
  claimed->send_seq.store(0, std::memory_order_relaxed);
  claimed->recv_seq.store(0, std::memory_order_relaxed);
  uint64_t mask = abi::kProfileColl | abi::kProfileP2p | abi::kProfileKernelCh;
  if (v5) mask |= abi::kProfileGroupApi | abi::kProfileCollApi | abi::kProfileP2pApi;
  *activation_mask = static_cast<int>(mask);
  g_plugin_collective_contexts.fetch_add(1, std::memory_order_relaxed);
  CommInitCapture& capture = t_comm_init_capture;
  if (capture.active) {
    // A wrapper is running this communicator's init: it writes the one Communicator record.
    capture.plugin_saw_init = true;
    capture.plugin_comm_id = comm_id;
  } else {
    PushCommunicatorRecord(comm_id, 0, rank, claimed->comm_size, 0,
                           comm_name != nullptr ? comm_name : "");
  }
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
      result = kGroupApiHandle;
      break;
    case abi::kProfileCollApi:
      result = StartApi(ctx, descr->coll_api.stream);
      break;
    case abi::kProfileP2pApi:
      result = StartApi(ctx, descr->p2p_api.stream);
      break;
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
  if (value == 0 || value == kGroupApiHandle) return ncclSuccess;
  EventSlot* slot = Lookup(value & ~kKernelHandleBit);
  if (slot == nullptr) return ncclSuccess;
  const SlotType type = slot->type.load(std::memory_order_relaxed);
  if ((value & kKernelHandleBit) != 0) {
    if (type == SlotType::kOp) FinishPart(slot);
  } else if (type == SlotType::kApi) {
    StopApi(slot, value);
  } else if (type == SlotType::kOp) {
    slot->op_end_ns = MonotonicNowNs();  // Enqueued; published by FinishPart's acq_rel.
    FinishPart(slot);
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
  // operation whose KernelCh events never came) and free the API slots nobody linked.
  const uint32_t capacity = g_capacity.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < capacity; ++i) {
    EventSlot& slot = g_slots[i];
    if (slot.busy.load(std::memory_order_acquire) == 0 ||
        slot.context.load(std::memory_order_relaxed) != ctx) {
      continue;
    }
    const SlotType type = slot.type.load(std::memory_order_relaxed);
    if (type == SlotType::kApi) {
      Release(&slot);
    } else if (type == SlotType::kOp &&
               slot.remaining.exchange(0, std::memory_order_acq_rel) != 0) {
      if (slot.op_end_ns == 0) slot.op_end_ns = MonotonicNowNs();
      EmitAndRelease(&slot);
    }
  }
  g_plugin_collective_contexts.fetch_sub(1, std::memory_order_relaxed);
  ctx->in_use.store(false, std::memory_order_release);
  return ncclSuccess;
}

}  // namespace

namespace internal {
void SetNcclEventPoolCapacityForTest(uint32_t capacity) {
  if (capacity == 0 || capacity > kNcclEventPoolSize) capacity = kNcclEventPoolSize;
  g_capacity.store(capacity, std::memory_order_relaxed);
}
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
