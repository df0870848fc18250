// Design: what the two NCCL routes (the profiler plugin and the LD_PRELOAD wrappers) share.
//   Channel gate: NcclChannelOn(channel) is decided once per channel (LUMOS_ENABLE,
//     LUMOS_CHANNELS, Agent::Start()) and then costs one relaxed load; relaxed is enough, the
//     word publishes no data (the rings are published by Agent::rings()' acquire). Off means
//     the entry point only passes through.
//   One record per operation, decided per call: NCCL starts a call's CollApi/P2pApi event (v5)
//     on the calling thread inside the call. A wrapper publishes the call in t_nccl_call
//     before calling the real function; the plugin's API-event start marks it seen (and copies
//     the reduce op, which NCCL's descriptors lack). After the real call returns, the wrapper
//     records the operation itself only when the plugin did not see it: communicators without
//     a plugin context (beyond kNcclMaxContexts), plugin off, or NCCL without API events. The
//     plugin records the ones it saw, also those NCCL gives no Coll/P2p event (one-rank
//     communicators). v4 (NCCL 2.27) has no API events and starts a grouped call's Coll at
//     ncclGroupEnd, after the call: there the wrappers leave the communicators the v4 plugin
//     has a context for (of more than one rank: NCCL gives no Coll for one rank) to it
//     (PluginV4Covers).
//   Comm ids: the plugin's comm id is NCCL's commHash (equal on all ranks). While a wrapper runs
//     a communicator's real init, the plugin's init (called by NCCL on the same thread in
//     blocking mode) leaves its comm id in t_comm_init_capture instead of writing a
//     Communicator record, and the wrapper writes one record with that id. Without the plugin,
//     the wrapper derives an id that is also equal on all ranks (see nccl_wrappers.cc).
//   Lazy link: a grouped init (ncclGroupStart; ncclCommInitRank...; ncclGroupEnd, as XLA does)
//     or a non-blocking one runs the plugin's init later or on another thread, where the
//     capture cannot see it. Then, with the plugin channel on, the wrapper keeps the
//     communicator's record pending (g_wrapper_records_pending counts them) and so does the
//     plugin's init while any is pending (v4: not for one rank, which gets no Coll event). The
//     first call on the communicator links them: the wrapper publishes its pending record in
//     t_nccl_call, the plugin's API event (v4: the Coll/P2p of an ungrouped call, the only
//     event inside a call) hands over its comm id (and drops its own pending record), and the
//     wrapper writes the one record with NCCL's id and uses it from then on. A pending record
//     is otherwise written with the id it has at the first event (v5 plugin) or call
//     (wrapper), at destroy, finalize or the final flush; except that while a v4 plugin covers
//     the communicator (PluginV4Covers) the wrapper's waits past grouped calls and, never
//     linked, is dropped: the v4 plugin's own record (NCCL's id, no device) is the one.
// Threading: any thread. Pushes go to the calling thread's ring.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "agent/core/record.h"
#include "schema/enums.h"

namespace lumos::agent {

// True when `channel` (kNcclPlugin or kNcclWrappers) is enabled and the agent runs. The first
// call per channel starts the agent (not async-signal-safe; never from a signal handler).
bool NcclChannelOn(schema::Channel channel);
// The same, but on between capture windows too (Agent::running()): for communicators, which
// every window file needs, however long before it they were made.
bool NcclChannelRunning(schema::Channel channel);

// A Communicator record (name interned: call off the hot path, at communicator creation).
void PushCommunicatorRecord(uint64_t comm_id, uint64_t parent_comm_id, int32_t rank,
                            uint32_t comm_size, uint32_t device_id, std::string_view name);
// The same with a name interned before (InternCommName; 0 = none), for a deferred record.
uint32_t InternCommName(std::string_view name);
void PushCommunicatorRecordNamed(uint64_t comm_id, uint64_t parent_comm_id, int32_t rank,
                                 uint32_t comm_size, uint32_t device_id, uint32_t name_id);
// A collective head + extension into the calling thread's ring (drop-and-count when full).
void PushCollectiveRecord(Record* head, const Record& extension);

// How the plugin's init went for a communicator a wrapper created (CommEntry::plugin_route).
enum class PluginRoute : uint8_t {
  kUnknown = 0,  // The plugin's init did not run inside the wrapper's call (or no plugin).
  kNone = 1,     // It ran and has no context for it (channel off, context table full).
  kV4 = 2,       // A v4 context (NCCL 2.27): no API events.
  kV5 = 3,       // A v5 context: per-call hand-off through t_nccl_call.
};

// Set by a wrapper around a communicator's real init; the plugin fills it in.
struct CommInitCapture {
  bool active = false;
  bool plugin_saw_init = false;  // The plugin claimed a context: plugin_comm_id is NCCL's.
  PluginRoute route = PluginRoute::kUnknown;
  uint64_t plugin_comm_id = 0;
};
inline thread_local CommInitCapture t_comm_init_capture;

// Set by a wrapper around a collective's or send/recv's real call; the plugin reads it from
// the events NCCL starts on this thread inside the call.
struct NcclCallContext {
  bool active = false;
  bool plugin_saw = false;  // Set by the plugin: it records this operation.
  uint8_t reduce_op = 0;    // schema::ReduceOp.
  uint64_t stream = 0;
  int64_t start_ns = 0;
  // Lazy link (above): the wrapper's record of this communicator is pending; the plugin tells
  // its comm id and whether it wrote a record of its own.
  bool wrapper_record_pending = false;
  bool plugin_wrote_record = false;
  uint64_t plugin_comm_id = 0;
};
inline thread_local NcclCallContext t_nccl_call;

// Communicators whose wrapper record waits for the lazy link (plugin inits then wait too).
inline std::atomic<int> g_wrapper_records_pending{0};

// Live v4 plugin contexts of communicators of more than one rank (NCCL 2.27).
inline std::atomic<int> g_plugin_v4_contexts{0};
// Whether a v4 plugin records the operations of a communicator whose init went `route` (size
// 0 = unknown). Unknown route with v4 contexts alive: assume it does (one record at most).
inline bool PluginV4Covers(PluginRoute route, uint32_t comm_size) {
  // Relaxed: a count set at communicator init, long before that communicator's collectives.
  if (g_plugin_v4_contexts.load(std::memory_order_relaxed) == 0) return false;
  if (comm_size == 1) return false;
  return route == PluginRoute::kV4 || route == PluginRoute::kUnknown;
}

// FNV-1a, 64-bit: stable across processes and builds, so every rank derives the same id.
inline uint64_t Fnv1a64(const void* data, size_t size, uint64_t hash = 0xcbf29ce484222325ull) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace lumos::agent
