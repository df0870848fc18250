#include "agent/nvtx/nvtx_injection.h"

#include <atomic>
#include <cstddef>
#include <cstring>

#include "agent/core/counted_loss.h"
#include "agent/core/record.h"
#include "agent/core/thread_rings.h"
#include "agent/runtime/agent_runtime.h"

namespace lumos::agent {
namespace {

// The thread's push stack (see t_push_stack for where it lives).
struct PushStack {
  int size = 0;      // Entries in `open` (<= kMaxPushDepth).
  int overflow = 0;  // Pushes beyond kMaxPushDepth, not recorded; their pops only count down.
  // The open ranges as they will be written (name, domain, color, depth, start); 2 KiB.
  Record open[kMaxPushDepth];
};
// On the heap behind a TLS pointer, allocated at the thread's first push/pop and freed at its
// exit: the agent's TLS must fit glibc's static TLS surplus (~1.6 KiB) when the agent is
// dlopen'd (CUDA_INJECTION64_PATH, or NVTX_INJECTION64_PATH without LD_PRELOAD), because
// t_ring_cache's initial-exec model makes the module's whole TLS block static. With this 2 KiB
// stack inline, that dlopen failed ("cannot allocate memory in static TLS block").
// The pointer the handlers read is initial-exec too (8 bytes at a fixed offset from the thread
// pointer, no __tls_get_addr call in liblumos_agent.so). Freeing needs a thread_local with a
// destructor, whose every access in a shared object goes through __tls_get_addr and a guard;
// that owner is touched only when the stack is allocated, once per thread.
thread_local PushStack* t_push_stack __attribute__((tls_model("initial-exec"))) = nullptr;

struct PushStackOwner {
  PushStack* stack = nullptr;
  ~PushStackOwner() {
    delete stack;
    t_push_stack = nullptr;
  }
};
thread_local PushStackOwner t_push_stack_owner;

__attribute__((noinline)) PushStack& AllocateThreadPushStack() {
  t_push_stack_owner.stack = new PushStack();
  t_push_stack = t_push_stack_owner.stack;
  return *t_push_stack;
}

PushStack& ThreadPushStack() {
  PushStack* stack = t_push_stack;
  return stack != nullptr ? *stack : AllocateThreadPushStack();
}

// A start/end range waiting for its end. state: 0 free, kClaimed while the starter writes the
// record or the ender reads it, else the range id (published with release after the record is
// written).
struct StartEndSlot {
  std::atomic<uint64_t> state{0};
  Record record;
};
constexpr uint64_t kClaimed = ~uint64_t{0};

// Never destroyed (trivially destructible members only), reachable from any thread.
StartEndSlot g_slots[kStartEndSlots];
// Range ids: relaxed is enough, only uniqueness matters. Ids start at 1 (0 = "no range").
std::atomic<uint64_t> g_next_range_id{1};

// The agent, resolved once at injection so the handlers skip Agent::Get()'s init guard.
Agent* g_agent = nullptr;

inline uint32_t DomainId(nvtxDomainHandle_t domain) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(domain));
}
inline uint32_t StringId(nvtxStringHandle_t string) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(string));
}

// The hot-path entry check (STYLE.md 5.2): one relaxed load; see EnabledFlag for why relaxed
// is safe. g_agent is written before the tables are patched, so handlers always see it.
inline bool Enabled() { return g_agent != nullptr && g_agent->enabled().enabled(); }

inline void InitRecord(Record* record, schema::NvtxKind kind, uint32_t domain_id) {
  std::memset(static_cast<void*>(record), 0, sizeof(*record));
  record->kind = RecordKind::kNvtxRange;
  record->start_ns = MonotonicNowNs();
  record->end_ns = record->start_ns;
  record->payload.nvtx.nvtx_kind = static_cast<uint8_t>(kind);
  record->payload.nvtx.domain_id = domain_id;
}

// Name, color and category from event attributes, into a record fresh from InitRecord. Malformed
// attributes (null, too small for the message field) give an unnamed range rather than a read past
// the caller's struct.
inline void ApplyAttributes(Record* record, const nvtxEventAttributes_t* attributes) {
  if (attributes == nullptr ||
      attributes->size < offsetof(nvtxEventAttributes_t, message) + sizeof(attributes->message)) {
    return;  // InitRecord left the name empty.
  }
  record->payload.nvtx.category = attributes->category;
  if (attributes->colorType == NVTX_COLOR_ARGB) record->payload.nvtx.color_argb = attributes->color;
  switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      SetNvtxInlineName(record, attributes->message.ascii);
      break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      SetNvtxNameId(record, StringId(attributes->message.registered));
      break;
    default:  // Unicode and unknown message types: unnamed (W strings are not captured yet).
      break;
  }
}

// ---- push / pop ----

int PushRange(uint32_t domain_id, const char* message, const nvtxEventAttributes_t* attributes) {
  PushStack& stack = ThreadPushStack();
  int depth = 0;  // Open ranges of the same domain below this one.
  for (int i = 0; i < stack.size; ++i)
    depth += stack.open[i].payload.nvtx.domain_id == domain_id ? 1 : 0;
  if (stack.size >= kMaxPushDepth) {
    ++stack.overflow;
    if (Enabled()) CountLoss(CountedLoss::kNvtxPushDepth);
    return stack.size + stack.overflow - 1;
  }
  Record& entry = stack.open[stack.size++];
  InitRecord(&entry, schema::NvtxKind::kPushPop, domain_id);
  entry.payload.nvtx.depth = static_cast<uint16_t>(depth);
  if (attributes != nullptr) {
    ApplyAttributes(&entry, attributes);
  } else {
    SetNvtxInlineName(&entry, message);
  }
  return depth;
}

int PopRange(uint32_t domain_id) {
  PushStack& stack = ThreadPushStack();
  if (stack.overflow > 0) {
    --stack.overflow;
    return stack.size + stack.overflow;
  }
  // The newest open range of this domain (usually the top of the stack).
  int index = stack.size - 1;
  while (index >= 0 && stack.open[index].payload.nvtx.domain_id != domain_id) --index;
  if (index < 0) return -1;  // Unbalanced pop: ignored.
  Record record = stack.open[index];
  for (int i = index; i + 1 < stack.size; ++i) stack.open[i] = stack.open[i + 1];
  --stack.size;
  // A range pushed while the agent was off is dropped at its pop, keeping the stack balanced.
  if (!Enabled()) return record.payload.nvtx.depth;
  record.end_ns = MonotonicNowNs();
  ThreadRings* rings = g_agent->rings();
  if (rings != nullptr) {
    ThreadRing* ring = rings->CurrentThreadRing();
    record.thread_id = ring->thread_id();
    ring->Push(record);
  }
  return record.payload.nvtx.depth;
}

// ---- start / end ----

nvtxRangeId_t StartRange(uint32_t domain_id, const char* message,
                         const nvtxEventAttributes_t* attributes) {
  const uint64_t id = g_next_range_id.fetch_add(1, std::memory_order_relaxed);
  StartEndSlot& slot = g_slots[id % kStartEndSlots];
  uint64_t expected = 0;
  // Acquire: pairs with the last ender's release of the slot, so its copy of the old record is
  // done before this start overwrites it. The new record is published by the id's release store.
  if (!slot.state.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire,
                                          std::memory_order_relaxed)) {
    // Slot still held by a range started kStartEndSlots ids ago: not recorded, but counted.
    if (Enabled()) CountLoss(CountedLoss::kNvtxStartEndSlots);
    return id;
  }
  InitRecord(&slot.record, schema::NvtxKind::kStartEnd, domain_id);
  if (attributes != nullptr) {
    ApplyAttributes(&slot.record, attributes);
  } else {
    SetNvtxInlineName(&slot.record, message);
  }
  ThreadRings* rings = g_agent->rings();
  slot.record.thread_id = rings != nullptr ? rings->CurrentThreadRing()->thread_id() : 0;
  slot.state.store(id, std::memory_order_release);
  return id;
}

void EndRange(nvtxRangeId_t id) {
  if (id == 0 || id == kClaimed) return;
  StartEndSlot& slot = g_slots[id % kStartEndSlots];
  // Claim the slot for reading: exactly one ender wins (an unknown or already ended id fails
  // here), and no starter can take the slot over while it is claimed, so the copy below never
  // races with a new start's writes. Acquire pairs with the starter's release store of the id.
  uint64_t expected = id;
  if (!slot.state.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire,
                                          std::memory_order_relaxed)) {
    return;
  }
  Record record = slot.record;
  slot.state.store(0, std::memory_order_release);  // Free for the next start.
  if (!Enabled()) return;
  record.end_ns = MonotonicNowNs();
  ThreadRings* rings = g_agent->rings();
  if (rings == nullptr) return;
  ThreadRing* ring = rings->CurrentThreadRing();
  Record extension{};
  extension.kind = RecordKind::kExtension;
  extension.payload.nvtx_ext.range_id = id;
  if (ring->thread_id() != record.thread_id) {
    extension.payload.nvtx_ext.end_thread_id = ring->thread_id();
  }
  ring->Push(record, extension);
}

void Mark(uint32_t domain_id, const char* message, const nvtxEventAttributes_t* attributes) {
  Record record;
  InitRecord(&record, schema::NvtxKind::kMark, domain_id);
  if (attributes != nullptr) {
    ApplyAttributes(&record, attributes);
  } else {
    SetNvtxInlineName(&record, message);
  }
  ThreadRings* rings = g_agent->rings();
  if (rings == nullptr) return;
  ThreadRing* ring = rings->CurrentThreadRing();
  record.thread_id = ring->thread_id();
  ring->Push(record);
}

// ---- the NVTX handlers (C ABI, noexcept: nothing here throws) ----

int NVTX_API HandleRangePushA(const char* message) noexcept {
  // Pushes are tracked even while off, so that pops stay balanced if the agent turns on between.
  if (g_agent == nullptr) return -1;
  return PushRange(0, message, nullptr);
}
int NVTX_API HandleRangePushEx(const nvtxEventAttributes_t* attributes) noexcept {
  if (g_agent == nullptr) return -1;
  return PushRange(0, nullptr, attributes);
}
int NVTX_API HandleRangePop() noexcept {
  if (g_agent == nullptr) return -1;
  return PopRange(0);
}
int NVTX_API HandleDomainRangePushEx(nvtxDomainHandle_t domain,
                                     const nvtxEventAttributes_t* attributes) noexcept {
  if (g_agent == nullptr) return -1;
  return PushRange(DomainId(domain), nullptr, attributes);
}
int NVTX_API HandleDomainRangePop(nvtxDomainHandle_t domain) noexcept {
  if (g_agent == nullptr) return -1;
  return PopRange(DomainId(domain));
}
nvtxRangeId_t NVTX_API HandleRangeStartA(const char* message) noexcept {
  if (!Enabled()) return 0;
  return StartRange(0, message, nullptr);
}
nvtxRangeId_t NVTX_API HandleRangeStartEx(const nvtxEventAttributes_t* attributes) noexcept {
  if (!Enabled()) return 0;
  return StartRange(0, nullptr, attributes);
}
void NVTX_API HandleRangeEnd(nvtxRangeId_t id) noexcept { EndRange(id); }
nvtxRangeId_t NVTX_API HandleDomainRangeStartEx(nvtxDomainHandle_t domain,
                                                const nvtxEventAttributes_t* attributes) noexcept {
  if (!Enabled()) return 0;
  return StartRange(DomainId(domain), nullptr, attributes);
}
void NVTX_API HandleDomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) noexcept { EndRange(id); }
void NVTX_API HandleMarkA(const char* message) noexcept {
  if (!Enabled()) return;
  Mark(0, message, nullptr);
}
void NVTX_API HandleMarkEx(const nvtxEventAttributes_t* attributes) noexcept {
  if (!Enabled()) return;
  Mark(0, nullptr, attributes);
}
void NVTX_API HandleDomainMarkEx(nvtxDomainHandle_t domain,
                                 const nvtxEventAttributes_t* attributes) noexcept {
  if (!Enabled()) return;
  Mark(DomainId(domain), nullptr, attributes);
}

// Registration-time handlers: they intern (lock, allocate) and are off the hot path.
nvtxDomainHandle_t NVTX_API HandleDomainCreateA(const char* name) noexcept {
  if (g_agent == nullptr || name == nullptr) return nullptr;
  const uint32_t id = g_agent->strings().Intern(name);
  // The handle is the id itself, never dereferenced (by NVTX or us).
  // NOLINTNEXTLINE(performance-no-int-to-ptr)
  return reinterpret_cast<nvtxDomainHandle_t>(static_cast<uintptr_t>(id));
}
nvtxStringHandle_t NVTX_API HandleDomainRegisterStringA(nvtxDomainHandle_t,
                                                        const char* text) noexcept {
  if (g_agent == nullptr || text == nullptr) return nullptr;
  const uint32_t id = g_agent->strings().Intern(text);
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an id, as for domains.
  return reinterpret_cast<nvtxStringHandle_t>(static_cast<uintptr_t>(id));
}

template <typename Fn>
void SetSlot(NvtxFunctionTable table, unsigned int size, unsigned int index, Fn fn) {
  if (index < size && table[index] != nullptr) {
    *table[index] = reinterpret_cast<NvtxFunctionPointer>(fn);
  }
}

}  // namespace

namespace internal {
std::span<const std::byte> NvtxStartEndSlotMemory() { return std::as_bytes(std::span(g_slots)); }
size_t NvtxPushStackBytes() { return sizeof(PushStack); }
}  // namespace internal

int InitializeNvtxInjection(NvtxGetExportTableFunc_t get_export_table) noexcept {
  if (get_export_table == nullptr) return 0;
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
      callbacks->GetModuleFunctionTable == nullptr) {
    return 0;
  }
  NvtxFunctionTable core = nullptr;
  unsigned int core_size = 0;
  NvtxFunctionTable core2 = nullptr;
  unsigned int core2_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) == 0 ||
      callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) == 0 ||
      core == nullptr || core2 == nullptr) {
    return 0;
  }
  Agent& agent = Agent::Get();
  agent.LoadConfig();
  if (!agent.config().channels.Has(schema::Channel::kNvtx)) return 0;  // Not asked for: no hooks.
  if (!agent.Start()) return 0;  // Off (LUMOS_ENABLE=0, or failed): no hooks.
  g_agent = &agent;

  SetSlot(core, core_size, NVTX_CBID_CORE_RangePushA, &HandleRangePushA);
  SetSlot(core, core_size, NVTX_CBID_CORE_RangePushEx, &HandleRangePushEx);
  SetSlot(core, core_size, NVTX_CBID_CORE_RangePop, &HandleRangePop);
  SetSlot(core, core_size, NVTX_CBID_CORE_RangeStartA, &HandleRangeStartA);
  SetSlot(core, core_size, NVTX_CBID_CORE_RangeStartEx, &HandleRangeStartEx);
  SetSlot(core, core_size, NVTX_CBID_CORE_RangeEnd, &HandleRangeEnd);
  SetSlot(core, core_size, NVTX_CBID_CORE_MarkA, &HandleMarkA);
  SetSlot(core, core_size, NVTX_CBID_CORE_MarkEx, &HandleMarkEx);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &HandleDomainCreateA);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &HandleDomainRegisterStringA);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &HandleDomainRangePushEx);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &HandleDomainRangePop);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &HandleDomainRangeStartEx);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &HandleDomainRangeEnd);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, &HandleDomainMarkEx);
  return 1;
}

}  // namespace lumos::agent
