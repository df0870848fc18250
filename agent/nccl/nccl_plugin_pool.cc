// The plugin's event pool and context table (nccl_plugin_pool.h): claiming a slot, and the
// hooks and footprint that tests and benchmarks reach through nccl_profiler.h.
#include "agent/nccl/nccl_plugin_pool.h"

#include <span>

#include "agent/core/counted_loss.h"
#include "agent/nccl/nccl_channel.h"

namespace lumos::agent::nccl_plugin {
namespace {

constexpr uint32_t kMaxProbes = 64;
std::atomic<uint32_t> g_cursor{0};  // Where the next claim starts probing.

}  // namespace

std::atomic<TestHook> g_finalize_scan_hook{nullptr};
std::atomic<TestHook> g_link_hook{nullptr};
EventSlot g_slots[kNcclEventPoolSize];
std::atomic<uint32_t> g_capacity{kNcclEventPoolSize};
ProfilerContext g_contexts[kNcclMaxContexts];
std::atomic<Agent*> g_agent{nullptr};

void WritePendingContextRecord(ProfilerContext* context) {
  // acq_rel: the fields were written before the release store of the flag at init.
  if (!context->record_pending.exchange(false, std::memory_order_acq_rel)) return;
  PushCommunicatorRecordNamed(context->comm_id, 0, context->rank, context->comm_size, 0,
                              context->name_id);
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

}  // namespace lumos::agent::nccl_plugin

namespace lumos::agent::internal {
void SetNcclEventPoolCapacityForTest(uint32_t capacity) {
  if (capacity == 0 || capacity > kNcclEventPoolSize) capacity = kNcclEventPoolSize;
  nccl_plugin::g_capacity.store(capacity, std::memory_order_relaxed);
}
void SetNcclFinalizeScanHookForTest(void (*hook)()) {
  nccl_plugin::g_finalize_scan_hook.store(hook, std::memory_order_relaxed);
}
void SetNcclLinkHookForTest(void (*hook)()) {
  nccl_plugin::g_link_hook.store(hook, std::memory_order_relaxed);
}
std::span<const std::byte> NcclEventPoolMemory() {
  return std::as_bytes(std::span(nccl_plugin::g_slots));
}
std::span<const std::byte> NcclContextTableMemory() {
  return std::as_bytes(std::span(nccl_plugin::g_contexts));
}
}  // namespace lumos::agent::internal
