// Design: events a channel could not record for a reason other than a full ring, counted where
// it happens and written by the writer thread as LossRecords (loss is data). Counting is one
// relaxed atomic add on a process-wide counter: these are rare paths (a table limit reached),
// never the per-event fast path. The writer takes and resets each counter on every drain.
// Threading: CountLoss from any thread; TakeLoss from the writer thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "schema/enums.h"

namespace lumos::agent {

enum class CountedLoss : int {
  kNvtxPushDepth,      // NVTX push/pop ranges nested deeper than the per-thread stack.
  kNvtxStartEndSlots,  // NVTX start/end ranges started while their table slot was busy.
  kNvtxChainHandles,   // NVTX domains/strings beyond the chain's handle maps (named no more).
  kNcclEventPool,      // NCCL profiler events started while the fixed event pool was full.
  kNcclContexts,       // NCCL communicators beyond the profiler's fixed context table.
  kNcclCommTable,      // NCCL communicators beyond the wrappers' fixed table.
  kNcclFailedCalls,    // Wrapped NCCL calls that returned an error (not recorded).
  kCount,
};

struct CountedLossInfo {
  schema::LossSource source;
  const char* detail;
};

inline constexpr CountedLossInfo kCountedLossInfo[] = {
    {schema::LossSource::kChannelLimit, "NVTX push/pop ranges nested deeper than 32"},
    {schema::LossSource::kChannelLimit, "NVTX start/end ranges beyond 4096 in flight"},
    {schema::LossSource::kChannelLimit,
     "NVTX domains and registered strings beyond the chained handle maps (unnamed)"},
    {schema::LossSource::kChannelLimit, "NCCL profiler events beyond the event pool"},
    {schema::LossSource::kChannelLimit, "NCCL communicators beyond the profiler's table"},
    {schema::LossSource::kChannelLimit, "NCCL communicators beyond the wrappers' table"},
    {schema::LossSource::kChannelLimit, "NCCL calls that returned an error (not recorded)"},
};
static_assert(sizeof(kCountedLossInfo) / sizeof(kCountedLossInfo[0]) ==
              static_cast<int>(CountedLoss::kCount));

inline std::atomic<uint64_t> g_counted_loss[static_cast<int>(CountedLoss::kCount)];

inline void CountLoss(CountedLoss what, uint64_t n = 1) {
  g_counted_loss[static_cast<int>(what)].fetch_add(n, std::memory_order_relaxed);
}

// The count since the last call (and resets it).
inline uint64_t TakeLoss(CountedLoss what) {
  return g_counted_loss[static_cast<int>(what)].exchange(0, std::memory_order_relaxed);
}

}  // namespace lumos::agent
