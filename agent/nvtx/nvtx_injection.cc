#include "agent/nvtx/nvtx_injection.h"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <string_view>

#include "agent/control/iteration_marker.h"
#include "agent/control/window_controller.h"
#include "agent/core/counted_loss.h"
#include "agent/core/record.h"
#include "agent/core/thread_rings.h"
#include "agent/nvtx/nvtx_chain.h"
#include "agent/nvtx/nvtx_handle_map.h"
#include "agent/nvtx/nvtx_markers.h"
#include "agent/nvtx/wide_text.h"
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
// written, as is chained_id).
struct StartEndSlot {
  std::atomic<uint64_t> state{0};
  bool chained_id = false;  // The id came from the chained library's start (not our counter).
  Record record;
};
constexpr uint64_t kClaimed = ~uint64_t{0};

// Never destroyed (trivially destructible members only), reachable from any thread.
StartEndSlot g_slots[kStartEndSlots];
// Range ids: relaxed is enough, only uniqueness matters. Ids start at 1 (0 = "no range").
std::atomic<uint64_t> g_next_range_id{1};

// The agent, resolved once at injection so the handlers skip Agent::Get()'s init guard.
Agent* g_agent = nullptr;

// Chaining to another NVTX injection (nvtx_chain.h); fixed before the tables are patched. With
// it, domain and registered-string handles are the chained library's (or own map entries) and
// go through these maps; without it, a handle is the string id itself.
bool g_chaining = false;
// Never destroyed (trivially destructible), reachable from any thread.
NvtxHandleMap<1024> g_domains;
NvtxHandleMap<4096> g_strings;
static_assert(std::is_trivially_destructible_v<NvtxHandleMap<1024>>);

inline uint32_t DomainId(nvtxDomainHandle_t domain) {
  if (g_chaining) return g_domains.Find(domain).id;  // Unknown (W-created, map full): default.
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(domain));
}
inline uint32_t StringId(nvtxStringHandle_t string) {
  if (g_chaining) return g_strings.Find(string).id;  // Unknown: unnamed.
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(string));
}
// The domain handle to pass on to the chained library: ours are replaced by null (the default
// domain), which is what it would have got from NVTX for a domain it did not create.
inline nvtxDomainHandle_t ChainedDomain(nvtxDomainHandle_t domain) {
  return g_domains.Find(domain).own ? nullptr : domain;
}
// The attributes to pass on: a copy without the string handle when it is one of ours.
inline const nvtxEventAttributes_t* ChainedAttributes(const nvtxEventAttributes_t* attributes,
                                                      nvtxEventAttributes_t* copy) {
  if (attributes == nullptr || attributes->size < sizeof(nvtxEventAttributes_t) ||
      attributes->messageType != NVTX_MESSAGE_TYPE_REGISTERED ||
      !g_strings.Find(attributes->message.registered).own) {
    return attributes;
  }
  *copy = *attributes;
  copy->message.registered = nullptr;
  return copy;
}

// The hot-path entry check (STYLE.md 5.2): one relaxed load; see EnabledFlag for why relaxed
// is safe. g_agent is written before the tables are patched, so handlers always see it.
inline bool Enabled() { return g_agent != nullptr && g_agent->enabled().enabled(); }

// ---- iteration markers (windowed modes: LUMOS_MODE=periodic|on-demand; nvtx_markers.h) ----

// Before a push or start: the controller when windowed (nullptr in continuous mode, where
// pushes are tracked even while off, see HandleRangePushA).
inline control::WindowController* WindowsForRange() {
  control::WindowController* windows = g_agent->windows();
  // The thread's stack now, at its first push, not at the first push of its first window: that
  // one-time allocation (~30 us with its page faults) must not land on a window's start.
  if (windows != nullptr && t_push_stack == nullptr) AllocateThreadPushStack();
  return windows;
}

// Before a push or start named `text`: reports a marker, and says whether to track the range
// (always in continuous mode).
inline bool TrackRange(const char* text) {
  control::WindowController* windows = WindowsForRange();
  if (windows == nullptr) return true;
  if (g_agent->iteration_marker().MayMatch(text)) {
    NoteMarker(g_agent->iteration_marker(), windows, text);
  }
  return Enabled();
}
inline bool TrackRangeWide(const wchar_t* text) {
  control::WindowController* windows = WindowsForRange();
  if (windows == nullptr) return true;
  if (g_agent->iteration_marker().MayMatchWide(text)) {
    NoteMarkerWide(g_agent->iteration_marker(), windows, text);
  }
  return Enabled();
}
// The same for event attributes, whatever names the range: ASCII, UNICODE or a registered
// string. Malformed attributes (null, too small for the message field) name nothing.
inline bool TrackRange(const nvtxEventAttributes_t* attributes) {
  control::WindowController* windows = WindowsForRange();
  if (windows == nullptr) return true;
  if (attributes != nullptr &&
      attributes->size >= offsetof(nvtxEventAttributes_t, message) + sizeof(attributes->message)) {
    switch (attributes->messageType) {
      case NVTX_MESSAGE_TYPE_ASCII:
        if (g_agent->iteration_marker().MayMatch(attributes->message.ascii)) {
          NoteMarker(g_agent->iteration_marker(), windows, attributes->message.ascii);
        }
        break;
      case NVTX_MESSAGE_TYPE_UNICODE:
        if (g_agent->iteration_marker().MayMatchWide(attributes->message.unicode)) {
          NoteMarkerWide(g_agent->iteration_marker(), windows, attributes->message.unicode);
        }
        break;
      case NVTX_MESSAGE_TYPE_REGISTERED:
        if (const size_t count = RegisteredMarkerCount(); count != 0) {
          NoteRegisteredMarker(windows, attributes->message.registered, count);
        }
        break;
      default:
        break;
    }
  }
  return Enabled();
}

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
    case NVTX_MESSAGE_TYPE_UNICODE:
      SetNvtxInlineName(record, ShortUtf8(attributes->message.unicode).c_str());
      break;
    default:  // Unknown message types: unnamed.
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

// A popped range: its end time, then into this thread's ring. Returns its depth.
inline int FinishRange(Record* record) {
  // A range pushed while the agent was off is dropped at its pop, keeping the stack balanced.
  if (!Enabled()) return record->payload.nvtx.depth;
  record->end_ns = MonotonicNowNs();
  ThreadRings* rings = g_agent->rings();
  if (rings != nullptr) {
    ThreadRing* ring = rings->CurrentThreadRing();
    record->thread_id = ring->thread_id();
    ring->Push(*record);
  }
  return record->payload.nvtx.depth;
}

int PopRange(uint32_t domain_id) {
  if (t_push_stack == nullptr) return -1;  // Nothing pushed on this thread: unbalanced.
  PushStack& stack = *t_push_stack;
  if (stack.overflow > 0) {
    --stack.overflow;
    return stack.size + stack.overflow;
  }
  // The newest open range of this domain (usually the top of the stack).
  int index = stack.size - 1;
  while (index >= 0 && stack.open[index].payload.nvtx.domain_id != domain_id) --index;
  if (index < 0) return -1;  // Unbalanced pop: ignored.
  if (index == stack.size - 1) {
    // The usual pop, of the top: finished and pushed from its stack slot, without a copy
    // (the slot is free once the size drops, and only this thread's next push reuses it).
    --stack.size;
    return FinishRange(&stack.open[index]);
  }
  Record record = stack.open[index];
  for (int i = index; i + 1 < stack.size; ++i) stack.open[i] = stack.open[i + 1];
  --stack.size;
  return FinishRange(&record);
}

// ---- start / end ----

// id: from our counter (NextRangeId), or the chained library's start when it has one, so that
// one id ends the range in both tools.
inline uint64_t NextRangeId() { return g_next_range_id.fetch_add(1, std::memory_order_relaxed); }

nvtxRangeId_t StartRange(uint64_t id, bool chained_id, uint32_t domain_id, const char* message,
                         const nvtxEventAttributes_t* attributes) {
  if (id == 0 || id == kClaimed) return id;  // A chained "no range": nothing to end later.
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
  slot.chained_id = chained_id;
  slot.state.store(id, std::memory_order_release);
  return id;
}

// Whose id an ended range had; kUnknown when no open range had it (never started here, lost to
// a busy slot, or ended twice).
enum class EndedRange { kUnknown, kOwnId, kChainedId };

EndedRange EndRange(nvtxRangeId_t id) {
  if (id == 0 || id == kClaimed) return EndedRange::kUnknown;
  StartEndSlot& slot = g_slots[id % kStartEndSlots];
  // Claim the slot for reading: exactly one ender wins (an unknown or already ended id fails
  // here), and no starter can take the slot over while it is claimed, so the copy below never
  // races with a new start's writes. Acquire pairs with the starter's release store of the id.
  uint64_t expected = id;
  if (!slot.state.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire,
                                          std::memory_order_relaxed)) {
    return EndedRange::kUnknown;
  }
  Record record = slot.record;
  const EndedRange ended = slot.chained_id ? EndedRange::kChainedId : EndedRange::kOwnId;
  slot.state.store(0, std::memory_order_release);  // Free for the next start.
  if (!Enabled()) return ended;
  record.end_ns = MonotonicNowNs();
  ThreadRings* rings = g_agent->rings();
  if (rings == nullptr) return ended;
  ThreadRing* ring = rings->CurrentThreadRing();
  Record extension{};
  extension.kind = RecordKind::kExtension;
  extension.payload.nvtx_ext.range_id = id;
  if (ring->thread_id() != record.thread_id) {
    extension.payload.nvtx_ext.end_thread_id = ring->thread_id();
  }
  ring->Push(record, extension);
  return ended;
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
// Each records first, then calls the chained library's handler for the same slot when there is
// one (nvtx_chain.h) and returns its result where NVTX expects one: the application must see
// the chained library's depths, range ids and handles, which that library relies on later.
// Exceptions, where the chained result is needed first: starts (its id becomes ours) and
// domain/string creation (its handle is mapped to our id).

using PushAFn = int(NVTX_API*)(const char*);
using PushExFn = int(NVTX_API*)(const nvtxEventAttributes_t*);
using PopFn = int(NVTX_API*)();
using DomainPushExFn = int(NVTX_API*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*);
using DomainPopFn = int(NVTX_API*)(nvtxDomainHandle_t);
using StartAFn = nvtxRangeId_t(NVTX_API*)(const char*);
using StartExFn = nvtxRangeId_t(NVTX_API*)(const nvtxEventAttributes_t*);
using EndFn = void(NVTX_API*)(nvtxRangeId_t);
using DomainStartExFn = nvtxRangeId_t(NVTX_API*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*);
using DomainEndFn = void(NVTX_API*)(nvtxDomainHandle_t, nvtxRangeId_t);
using MarkAFn = void(NVTX_API*)(const char*);
using MarkExFn = void(NVTX_API*)(const nvtxEventAttributes_t*);
using DomainMarkExFn = void(NVTX_API*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*);
using DomainCreateAFn = nvtxDomainHandle_t(NVTX_API*)(const char*);
using RegisterStringAFn = nvtxStringHandle_t(NVTX_API*)(nvtxDomainHandle_t, const char*);
using RegisterStringWFn = nvtxStringHandle_t(NVTX_API*)(nvtxDomainHandle_t, const wchar_t*);
using PushWFn = int(NVTX_API*)(const wchar_t*);
using StartWFn = nvtxRangeId_t(NVTX_API*)(const wchar_t*);
using MarkWFn = void(NVTX_API*)(const wchar_t*);
using DomainCreateWFn = nvtxDomainHandle_t(NVTX_API*)(const wchar_t*);
using ResourceCreateFn = nvtxResourceHandle_t(NVTX_API*)(nvtxDomainHandle_t,
                                                         nvtxResourceAttributes_t*);
using NameCategoryAFn = void(NVTX_API*)(nvtxDomainHandle_t, uint32_t, const char*);
using NameCategoryWFn = void(NVTX_API*)(nvtxDomainHandle_t, uint32_t, const wchar_t*);
using DomainDestroyFn = void(NVTX_API*)(nvtxDomainHandle_t);

int NVTX_API HandleRangePushA(const char* message) noexcept {
  // Pushes are tracked even while off, so that pops stay balanced if the agent turns on between.
  const int depth = g_agent != nullptr && TrackRange(message) ? PushRange(0, message, nullptr) : -1;
  if (auto chained = ChainedCore<PushAFn>(NVTX_CBID_CORE_RangePushA)) return chained(message);
  return depth;
}
// The wide-character calls record the same as the A ones, their text as UTF-8. A W push the
// agent did not see would leave its pop to close the wrong range.
int NVTX_API HandleRangePushW(const wchar_t* message) noexcept {
  const int depth = g_agent != nullptr && TrackRangeWide(message)
                        ? PushRange(0, ShortUtf8(message).c_str(), nullptr)
                        : -1;
  if (auto chained = ChainedCore<PushWFn>(NVTX_CBID_CORE_RangePushW)) return chained(message);
  return depth;
}
int NVTX_API HandleRangePushEx(const nvtxEventAttributes_t* attributes) noexcept {
  const int depth =
      g_agent != nullptr && TrackRange(attributes) ? PushRange(0, nullptr, attributes) : -1;
  if (auto chained = ChainedCore<PushExFn>(NVTX_CBID_CORE_RangePushEx)) {
    nvtxEventAttributes_t copy;
    return chained(ChainedAttributes(attributes, &copy));
  }
  return depth;
}
int NVTX_API HandleRangePop() noexcept {
  const int depth = g_agent != nullptr ? PopRange(0) : -1;
  if (auto chained = ChainedCore<PopFn>(NVTX_CBID_CORE_RangePop)) return chained();
  return depth;
}
int NVTX_API HandleDomainRangePushEx(nvtxDomainHandle_t domain,
                                     const nvtxEventAttributes_t* attributes) noexcept {
  const int depth = g_agent != nullptr && TrackRange(attributes)
                        ? PushRange(DomainId(domain), nullptr, attributes)
                        : -1;
  if (auto chained = ChainedCore2<DomainPushExFn>(NVTX_CBID_CORE2_DomainRangePushEx)) {
    nvtxEventAttributes_t copy;
    return chained(ChainedDomain(domain), ChainedAttributes(attributes, &copy));
  }
  return depth;
}
int NVTX_API HandleDomainRangePop(nvtxDomainHandle_t domain) noexcept {
  const int depth = g_agent != nullptr ? PopRange(DomainId(domain)) : -1;
  if (auto chained = ChainedCore2<DomainPopFn>(NVTX_CBID_CORE2_DomainRangePop)) {
    return chained(ChainedDomain(domain));
  }
  return depth;
}
nvtxRangeId_t NVTX_API HandleRangeStartA(const char* message) noexcept {
  if (g_agent != nullptr) (void)TrackRange(message);  // Start ranges are tracked only while on.
  if (auto chained = ChainedCore<StartAFn>(NVTX_CBID_CORE_RangeStartA)) {
    const nvtxRangeId_t id = chained(message);
    return Enabled() ? StartRange(id, true, 0, message, nullptr) : id;
  }
  if (!Enabled()) return 0;
  return StartRange(NextRangeId(), false, 0, message, nullptr);
}
nvtxRangeId_t NVTX_API HandleRangeStartW(const wchar_t* message) noexcept {
  if (g_agent != nullptr) (void)TrackRangeWide(message);  // Tracked only while on, as A starts.
  if (auto chained = ChainedCore<StartWFn>(NVTX_CBID_CORE_RangeStartW)) {
    const nvtxRangeId_t id = chained(message);
    return Enabled() ? StartRange(id, true, 0, ShortUtf8(message).c_str(), nullptr) : id;
  }
  if (!Enabled()) return 0;
  return StartRange(NextRangeId(), false, 0, ShortUtf8(message).c_str(), nullptr);
}
nvtxRangeId_t NVTX_API HandleRangeStartEx(const nvtxEventAttributes_t* attributes) noexcept {
  if (g_agent != nullptr) (void)TrackRange(attributes);
  if (auto chained = ChainedCore<StartExFn>(NVTX_CBID_CORE_RangeStartEx)) {
    nvtxEventAttributes_t copy;
    const nvtxRangeId_t id = chained(ChainedAttributes(attributes, &copy));
    return Enabled() ? StartRange(id, true, 0, nullptr, attributes) : id;
  }
  if (!Enabled()) return 0;
  return StartRange(NextRangeId(), false, 0, nullptr, attributes);
}
// A range started with our own id (the chained library had no start handler then) is not passed
// on: the chained library never handed out that id.
void NVTX_API HandleRangeEnd(nvtxRangeId_t id) noexcept {
  const EndedRange ended = EndRange(id);
  if (auto chained = ChainedCore<EndFn>(NVTX_CBID_CORE_RangeEnd)) {
    if (ended != EndedRange::kOwnId) chained(id);
  }
}
nvtxRangeId_t NVTX_API HandleDomainRangeStartEx(nvtxDomainHandle_t domain,
                                                const nvtxEventAttributes_t* attributes) noexcept {
  if (g_agent != nullptr) (void)TrackRange(attributes);
  if (auto chained = ChainedCore2<DomainStartExFn>(NVTX_CBID_CORE2_DomainRangeStartEx)) {
    nvtxEventAttributes_t copy;
    const nvtxRangeId_t id = chained(ChainedDomain(domain), ChainedAttributes(attributes, &copy));
    return Enabled() ? StartRange(id, true, DomainId(domain), nullptr, attributes) : id;
  }
  if (!Enabled()) return 0;
  return StartRange(NextRangeId(), false, DomainId(domain), nullptr, attributes);
}
void NVTX_API HandleDomainRangeEnd(nvtxDomainHandle_t domain, nvtxRangeId_t id) noexcept {
  const EndedRange ended = EndRange(id);
  if (auto chained = ChainedCore2<DomainEndFn>(NVTX_CBID_CORE2_DomainRangeEnd)) {
    if (ended != EndedRange::kOwnId) chained(ChainedDomain(domain), id);
  }
}
void NVTX_API HandleMarkA(const char* message) noexcept {
  if (Enabled()) Mark(0, message, nullptr);
  if (auto chained = ChainedCore<MarkAFn>(NVTX_CBID_CORE_MarkA)) chained(message);
}
void NVTX_API HandleMarkW(const wchar_t* message) noexcept {
  if (Enabled()) Mark(0, ShortUtf8(message).c_str(), nullptr);
  if (auto chained = ChainedCore<MarkWFn>(NVTX_CBID_CORE_MarkW)) chained(message);
}
void NVTX_API HandleMarkEx(const nvtxEventAttributes_t* attributes) noexcept {
  if (Enabled()) Mark(0, nullptr, attributes);
  if (auto chained = ChainedCore<MarkExFn>(NVTX_CBID_CORE_MarkEx)) {
    nvtxEventAttributes_t copy;
    chained(ChainedAttributes(attributes, &copy));
  }
}
void NVTX_API HandleDomainMarkEx(nvtxDomainHandle_t domain,
                                 const nvtxEventAttributes_t* attributes) noexcept {
  if (Enabled()) Mark(DomainId(domain), nullptr, attributes);
  if (auto chained = ChainedCore2<DomainMarkExFn>(NVTX_CBID_CORE2_DomainMarkEx)) {
    nvtxEventAttributes_t copy;
    chained(ChainedDomain(domain), ChainedAttributes(attributes, &copy));
  }
}

// Registration-time handlers: they intern (lock, allocate) and are off the hot path.

// The handle for a new domain or string with string id `id`: without the chain, the id itself
// (never dereferenced, by NVTX or us); with it, the chained library's handle when it made one,
// else an own map entry. A full map: the chained handle (or null), the name is lost (counted).
template <typename Handle, typename Map>
Handle MapHandle(Map* map, Handle theirs, uint32_t id) {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an id, not an address.
  if (!g_chaining) return reinterpret_cast<Handle>(static_cast<uintptr_t>(id));
  if (theirs != nullptr) {
    if (!map->AddForeign(theirs, id)) CountLoss(CountedLoss::kNvtxChainHandles);
    return theirs;
  }
  const void* own = map->AddOwn(id);
  if (own == nullptr) CountLoss(CountedLoss::kNvtxChainHandles);
  return static_cast<Handle>(const_cast<void*>(own));
}

nvtxDomainHandle_t NVTX_API HandleDomainCreateA(const char* name) noexcept {
  auto chained = ChainedCore2<DomainCreateAFn>(NVTX_CBID_CORE2_DomainCreateA);
  nvtxDomainHandle_t theirs = chained != nullptr ? chained(name) : nullptr;
  if (g_agent == nullptr || name == nullptr) return theirs;
  return MapHandle(&g_domains, theirs, g_agent->strings().Intern(name));
}
nvtxDomainHandle_t NVTX_API HandleDomainCreateW(const wchar_t* name) noexcept {
  auto chained = ChainedCore2<DomainCreateWFn>(NVTX_CBID_CORE2_DomainCreateW);
  nvtxDomainHandle_t theirs = chained != nullptr ? chained(name) : nullptr;
  if (g_agent == nullptr || name == nullptr) return theirs;
  return MapHandle(&g_domains, theirs, g_agent->strings().Intern(WideToUtf8(name)));
}
nvtxStringHandle_t NVTX_API HandleDomainRegisterStringA(nvtxDomainHandle_t domain,
                                                        const char* text) noexcept {
  auto chained = ChainedCore2<RegisterStringAFn>(NVTX_CBID_CORE2_DomainRegisterStringA);
  nvtxStringHandle_t theirs = chained != nullptr ? chained(ChainedDomain(domain), text) : nullptr;
  if (g_agent == nullptr || text == nullptr) return theirs;
  nvtxStringHandle_t handle = MapHandle(&g_strings, theirs, g_agent->strings().Intern(text));
  NoteRegisteredString(*g_agent, handle, std::string_view(text, strnlen(text, kMaxMarkerBytes)));
  return handle;
}

nvtxStringHandle_t NVTX_API HandleDomainRegisterStringW(nvtxDomainHandle_t domain,
                                                        const wchar_t* text) noexcept {
  auto chained = ChainedCore2<RegisterStringWFn>(NVTX_CBID_CORE2_DomainRegisterStringW);
  nvtxStringHandle_t theirs = chained != nullptr ? chained(ChainedDomain(domain), text) : nullptr;
  if (g_agent == nullptr || text == nullptr) return theirs;
  const std::string utf8 = WideToUtf8(text);
  nvtxStringHandle_t handle = MapHandle(&g_strings, theirs, g_agent->strings().Intern(utf8));
  NoteRegisteredString(*g_agent, handle, std::string_view(utf8).substr(0, kMaxMarkerBytes));
  return handle;
}

// Installed only while chaining: calls the agent does not record but that take a domain handle,
// which may be one of ours and must not reach the chained library as such.
nvtxResourceHandle_t NVTX_API HandleDomainResourceCreate(
    nvtxDomainHandle_t domain, nvtxResourceAttributes_t* attributes) noexcept {
  auto chained = ChainedCore2<ResourceCreateFn>(NVTX_CBID_CORE2_DomainResourceCreate);
  return chained != nullptr ? chained(ChainedDomain(domain), attributes) : nullptr;
}
void NVTX_API HandleDomainNameCategoryA(nvtxDomainHandle_t domain, uint32_t category,
                                        const char* name) noexcept {
  auto chained = ChainedCore2<NameCategoryAFn>(NVTX_CBID_CORE2_DomainNameCategoryA);
  if (chained != nullptr) chained(ChainedDomain(domain), category, name);
}
void NVTX_API HandleDomainNameCategoryW(nvtxDomainHandle_t domain, uint32_t category,
                                        const wchar_t* name) noexcept {
  auto chained = ChainedCore2<NameCategoryWFn>(NVTX_CBID_CORE2_DomainNameCategoryW);
  if (chained != nullptr) chained(ChainedDomain(domain), category, name);
}
void NVTX_API HandleDomainDestroy(nvtxDomainHandle_t domain) noexcept {
  // The map keeps the entry: a handle may still be in use on another thread.
  auto chained = ChainedCore2<DomainDestroyFn>(NVTX_CBID_CORE2_DomainDestroy);
  if (chained != nullptr) chained(ChainedDomain(domain));
}

template <typename Fn>
void SetSlot(NvtxFunctionTable table, unsigned int size, unsigned int index, Fn fn) {
  if (index < size && table[index] != nullptr) {
    *table[index] = reinterpret_cast<NvtxFunctionPointer>(fn);
  }
}

int InitializeInstance(NvtxGetExportTableFunc_t get_export_table, NvtxFunctionTable core,
                       unsigned int core_size, NvtxFunctionTable core2, unsigned int core2_size) {
  Agent& agent = Agent::Get();
  agent.LoadConfig();
  if (!agent.config().enabled) return 0;  // LUMOS_ENABLE=0: out of the process entirely.
  // Not asked for, or the agent failed to start: no hooks of ours, but a chained library still
  // gets NVTX as if it were the injection itself.
  if (!agent.config().channels.Has(schema::Channel::kNvtx) || !agent.Start()) {
    return InitializeNvtxChain(agent.config(), get_export_table, /*shadow=*/false) ? 1 : 0;
  }
  // First the chained library installs its handlers (into the shadow slots), then ours go in.
  InitializeNvtxChain(agent.config(), get_export_table, /*shadow=*/true);
  if (g_agent == nullptr) g_chaining = NvtxChainActive();  // Fixed by the first instance.
  g_agent = &agent;

  SetSlot(core, core_size, NVTX_CBID_CORE_RangePushA, &HandleRangePushA);
  SetSlot(core, core_size, NVTX_CBID_CORE_RangePushW, &HandleRangePushW);
  SetSlot(core, core_size, NVTX_CBID_CORE_RangePushEx, &HandleRangePushEx);
  SetSlot(core, core_size, NVTX_CBID_CORE_RangePop, &HandleRangePop);
  SetSlot(core, core_size, NVTX_CBID_CORE_RangeStartA, &HandleRangeStartA);
  SetSlot(core, core_size, NVTX_CBID_CORE_RangeStartW, &HandleRangeStartW);
  SetSlot(core, core_size, NVTX_CBID_CORE_RangeStartEx, &HandleRangeStartEx);
  SetSlot(core, core_size, NVTX_CBID_CORE_RangeEnd, &HandleRangeEnd);
  SetSlot(core, core_size, NVTX_CBID_CORE_MarkA, &HandleMarkA);
  SetSlot(core, core_size, NVTX_CBID_CORE_MarkW, &HandleMarkW);
  SetSlot(core, core_size, NVTX_CBID_CORE_MarkEx, &HandleMarkEx);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &HandleDomainCreateA);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &HandleDomainCreateW);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &HandleDomainRegisterStringA);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &HandleDomainRegisterStringW);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &HandleDomainRangePushEx);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &HandleDomainRangePop);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &HandleDomainRangeStartEx);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &HandleDomainRangeEnd);
  SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, &HandleDomainMarkEx);
  if (g_chaining) {
    SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainResourceCreate, &HandleDomainResourceCreate);
    SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryA, &HandleDomainNameCategoryA);
    SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryW, &HandleDomainNameCategoryW);
    SetSlot(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &HandleDomainDestroy);
  }
  return 1;
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
  // A chained library that injects back into the agent (or NVTX calls made while it
  // initializes) must not re-enter: that NVTX instance then runs without injection.
  thread_local bool t_initializing = false;
  if (t_initializing) return 0;
  t_initializing = true;
  const int result = InitializeInstance(get_export_table, core, core_size, core2, core2_size);
  t_initializing = false;
  return result;
}

}  // namespace lumos::agent
