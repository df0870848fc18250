// Design: the profiler plugin's fixed state (the whole design is in nccl_profiler.h): the event
// pool, kNcclEventPoolSize slots claimed by CAS (a handle is generation << 32 | slot + 1, so a
// stale handle never reaches a reused slot); the context table, one ProfilerContext per
// communicator; and the two words every part of an event is one CAS on, an API slot's link word
// and an operation slot's state word. Private to the plugin: nccl_plugin_api.cc (API events),
// nccl_plugin_ops.cc (operations), nccl_plugin_sweep.cc (what waits too long, finalize) and
// nccl_profiler.cc (NCCL's v4/v5 ABI).
// Threading: NCCL's user threads and its proxy thread, and the agent's writer (the sweep);
// lock-free. Nothing here allocates, locks or logs (STYLE.md 5).
#pragma once

#include <atomic>
#include <cstdint>

#include "agent/core/record.h"
#include "agent/core/thread_rings.h"
#include "agent/nccl/comm_table.h"
#include "agent/nccl/nccl_profiler.h"
#include "agent/runtime/agent_runtime.h"

namespace lumos::agent::nccl_plugin {

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
void WritePendingContextRecord(ProfilerContext* context);

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
inline constexpr uint64_t kApiStopSeen = ~uint64_t{0};

// Operation state word: generation (bits 32..63), "own stop still to come" (bit 31), other
// parts outstanding (bits 0..30: kernel channels, API parent's stop). Every part is one CAS
// that checks the generation, so a part that arrives after the sweep or finalize took the
// operation (or after its slot was reused) changes nothing. The record is written by whoever
// takes the word to 0.
inline constexpr uint64_t kOpStopPending = uint64_t{1} << 31;
constexpr uint64_t OpState(uint32_t generation, uint64_t parts) {
  return (uint64_t{generation} << 32) | parts;
}

inline constexpr uint64_t kKernelHandleBit = uint64_t{1} << 63;
// GroupApi handles: generation 0 (never a slot's) and an index beyond any pool, so Lookup
// rejects them; the low 31 bits tell groups apart (a process-wide counter).
inline constexpr uint64_t kGroupHandleBit = uint64_t{1} << 31;
// An operation whose own stop came and that saw no event for this long is written with what
// it has (NCCL 2.28 can announce more channels than it reports KernelCh events for).
inline constexpr int64_t kStaleNs = 1'000'000'000;
// An API event stopped without a child for this long is settled by the sweep (its GroupApi
// was stopped on another thread, or it was beyond kMaxGroupApis). Longer than kStaleNs: a
// grouped call's Coll starts only at ncclGroupEnd, which a job may call much later.
inline constexpr int64_t kStaleApiNs = 10'000'000'000;

using TestHook = void (*)();
// Tests only: called by the finalize scan between reading an API slot and claiming it.
extern std::atomic<TestHook> g_finalize_scan_hook;
// Tests only: called by LinkToApi between reading the API parent's fields and linking to it.
extern std::atomic<TestHook> g_link_hook;

extern EventSlot g_slots[kNcclEventPoolSize];
// Slots in use: kNcclEventPoolSize, or fewer for a test (SetNcclEventPoolCapacityForTest).
extern std::atomic<uint32_t> g_capacity;
extern ProfilerContext g_contexts[kNcclMaxContexts];
// The agent, cached at the first init so event callbacks skip Agent::Get()'s guard.
extern std::atomic<Agent*> g_agent;

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

// Claims a free slot for an event of `type` (null, counted as loss, when none is found within
// kMaxProbes tries) and sets *handle.
EventSlot* Allocate(ProfilerContext* context, SlotType type, uint64_t* handle);

// The live slot of `handle` (any type), or null for stale, foreign or malformed handles.
inline EventSlot* Lookup(uint64_t handle) {
  const uint64_t index_plus_1 = handle & 0xffffffff;
  if (index_plus_1 == 0 || index_plus_1 > kNcclEventPoolSize) return nullptr;
  EventSlot& slot = g_slots[index_plus_1 - 1];
  if (slot.busy.load(std::memory_order_acquire) == 0 ||
      slot.generation.load(std::memory_order_acquire) != GenerationOf(handle)) {
    return nullptr;
  }
  return &slot;
}

inline void Release(EventSlot* slot) {
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

}  // namespace lumos::agent::nccl_plugin
