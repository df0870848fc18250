// Design: what the two NCCL routes (the profiler plugin and the LD_PRELOAD wrappers) share.
//   Channel gate: NcclChannelOn(channel) is decided once per channel (LUMOS_ENABLE,
//     LUMOS_CHANNELS, Agent::Start()) and then costs one relaxed load; relaxed is enough, the
//     word publishes no data (the rings are published by Agent::rings()' acquire). Off means
//     the entry point only passes through.
//   One record per operation: when both routes run, the plugin records the collectives (it has
//     seq numbers, algorithm, protocol, channels and GPU times) and the wrappers only record
//     communicators (they know the device and the split parent). PluginRecordsCollectives() says
//     whether any plugin context asked NCCL for collective events in this process.
//   Comm ids: the plugin's comm id is NCCL's commHash (equal on all ranks). While a wrapper runs
//     a communicator's real init, the plugin's init (called by NCCL on the same thread in
//     blocking mode) leaves its comm id in t_comm_init_capture instead of writing a
//     Communicator record, and the wrapper writes one record with that id. Without the plugin,
//     the wrapper derives an id that is also equal on all ranks (see nccl_wrappers.cc).
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

// A Communicator record (name interned: call off the hot path, at communicator creation).
void PushCommunicatorRecord(uint64_t comm_id, uint64_t parent_comm_id, int32_t rank,
                            uint32_t comm_size, uint32_t device_id, std::string_view name);
// A collective head + extension into the calling thread's ring (drop-and-count when full).
void PushCollectiveRecord(Record* head, const Record& extension);

// Set by a wrapper around a communicator's real init; the plugin fills it in.
struct CommInitCapture {
  bool active = false;
  bool plugin_saw_init = false;
  uint64_t plugin_comm_id = 0;
};
inline thread_local CommInitCapture t_comm_init_capture;

// Plugin contexts alive that record collectives (Coll/P2p in their activation mask).
inline std::atomic<int> g_plugin_collective_contexts{0};
inline bool PluginRecordsCollectives() {
  // Relaxed: a hint set at communicator init, long before that communicator's collectives.
  return g_plugin_collective_contexts.load(std::memory_order_relaxed) > 0;
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
