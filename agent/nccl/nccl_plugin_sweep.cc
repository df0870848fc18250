// What waits too long (the writer's sweep, a RecordSource) and what a finalized communicator
// leaves behind (nccl_plugin_events.h).
#include <cstdint>
#include <mutex>

#include "agent/core/no_destructor.h"
#include "agent/nccl/nccl_plugin_events.h"
#include "base/logging.h"

namespace lumos::agent::nccl_plugin {
namespace {

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

}  // namespace

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

void SettleEventsAtFinalize(ProfilerContext* context) {
  // NCCL has no event of this communicator in flight any more: write what still waits (an
  // operation whose KernelCh events never came) and the API events nobody linked.
  const uint32_t capacity = g_capacity.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < capacity; ++i) {
    EventSlot& slot = g_slots[i];
    if (slot.busy.load(std::memory_order_acquire) == 0 ||
        slot.context.load(std::memory_order_relaxed) != context) {
      continue;
    }
    // Generation first, then context and type (Allocate publishes them in that order): the
    // slot may have been freed and taken by another communicator since the checks above.
    const uint32_t generation = slot.generation.load(std::memory_order_acquire);
    if (slot.context.load(std::memory_order_relaxed) != context) continue;
    const SlotType type = slot.type.load(std::memory_order_relaxed);
    if (type == SlotType::kApi) {
      if (TestHook hook = g_finalize_scan_hook.load(std::memory_order_relaxed)) hook();
      SettleApiAtFinalize(&slot, generation);
    } else if (type == SlotType::kOp &&
               ClaimOp(&slot, generation, /*only_stopped=*/false, INT64_MAX)) {
      EmitAndRelease(&slot);
    }
  }
}

}  // namespace lumos::agent::nccl_plugin
