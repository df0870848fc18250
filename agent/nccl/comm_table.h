// Design: the wrappers' communicators, keyed by the ncclComm_t pointer: comm id, rank, size,
// device and per-operation seq counters. A fixed open-addressed table (kNcclCommTableSize
// entries, linear probing): lookups on the collective hot path are lock-free (acquire loads of
// the key); inserts and removals happen at communicator creation/destruction under a mutex
// (rare, never on the hot path). A removed entry becomes a tombstone that a later insert reuses.
// Table full: the communicator is not tracked (counted loss); its collectives get comm id 0.
// Entries are never freed (static storage), so a reader racing a removal reads stale but valid
// memory; using a destroyed communicator is the caller's bug anyway.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "agent/nccl/nccl_channel.h"
#include "schema/enums.h"

namespace lumos::agent {

inline constexpr uint32_t kNcclCommTableSize = 1024;
inline constexpr int kCollectiveOpCount = 12;  // schema::CollectiveOp values.

struct CommEntry {
  std::atomic<uintptr_t> key{0};  // The ncclComm_t; 0 = empty, 1 = tombstone.
  // Atomic: the lazy link (nccl_channel.h) replaces it once while other threads read it.
  std::atomic<uint64_t> comm_id{0};
  int32_t rank = -1;
  uint32_t comm_size = 0;
  uint32_t device_id = 0;
  PluginRoute plugin_route = PluginRoute::kUnknown;  // How the plugin's init went for it.
  // Lazy link: the Communicator record waits (its other fields are the ones above).
  std::atomic<bool> record_pending{false};
  uint64_t parent_comm_id = 0;
  uint32_t name_id = 0;
  // Seq numbers per operation kind, like NCCL's own (per communicator and function).
  std::atomic<uint64_t> seq[kCollectiveOpCount];
  std::atomic<uint32_t> splits{0};  // ncclCommSplit/ncclCommShrink calls on this parent so far.

  // `window`: the capture window being recorded (Agent::window_starts(); always 0 in continuous
  // mode). The counts restart with each window: the ranks of a job start a window at the same
  // iteration, so the n-th collective of a window pairs across ranks even when a rank missed an
  // earlier window (the calls between windows are not counted: that would cost a lookup).
  uint64_t NextSeq(schema::CollectiveOp op, uint64_t window = 0) {
    const auto index = static_cast<uint32_t>(op);
    if (index >= kCollectiveOpCount) return 0;
    // Relaxed: counters; only their values matter. One thread per communicator, in practice.
    if (seq_window.load(std::memory_order_relaxed) != window) {
      for (std::atomic<uint64_t>& count : seq) count.store(0, std::memory_order_relaxed);
      seq_window.store(window, std::memory_order_relaxed);
    }
    return seq[index].fetch_add(1, std::memory_order_relaxed);
  }
  std::atomic<uint64_t> seq_window{0};
};

class CommTable {
 public:
  // Hot path: the live entry of `comm`, or null.
  CommEntry* Find(const void* comm);
  // Off the hot path. Returns the entry (fresh counters), or null when the table is full.
  CommEntry* Insert(const void* comm, uint64_t comm_id, int32_t rank, uint32_t comm_size,
                    uint32_t device_id, PluginRoute plugin_route);
  void Remove(const void* comm);
  // Calls fn(CommEntry&) for each live entry (off the hot path: the final flush).
  template <typename Fn>
  void ForEach(Fn fn) {
    for (CommEntry& entry : entries_) {
      // Acquire: pairs with Insert's release of the key.
      if (entry.key.load(std::memory_order_acquire) > 1) fn(entry);
    }
  }

 private:
  static uint32_t Home(uintptr_t key);
  CommEntry entries_[kNcclCommTableSize];
  std::mutex mutex_;  // Serialises Insert/Remove.
};

}  // namespace lumos::agent
