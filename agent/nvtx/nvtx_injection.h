// Design: the agent as an NVTX injection library (docs/capture-notes.md §6). NVTX3 (header-only)
// dlopens NVTX_INJECTION64_PATH on the first NVTX call and calls InitializeInjectionNvtx2; we
// start the agent there and write our handlers into the CORE and CORE2 callback tables.
//
// Hot path (STYLE.md 5): each handler starts with one relaxed load of the enabled flag, then
// reads the clock (clock_gettime(CLOCK_MONOTONIC): vDSO, no syscall; rdtsc is a later step),
// copies the message inline into a 64-byte Record and pushes it into the thread's own ring.
// No allocation, lock, syscall or log per range. Once per thread: ring registration, and the
// push stack's heap block (2 KiB, freed at thread exit; kept out of TLS so that a dlopen'd agent
// fits glibc's static TLS surplus).
//   push/pop: the open ranges live on a thread-local stack (kMaxPushDepth); pop emits one
//     NVTX_KIND_PUSH_POP record with its depth (per domain, 0 = outermost). A pop with no open
//     range in its domain is ignored (returns -1). Ranges deeper than kMaxPushDepth keep the
//     depth count right but are not recorded; they are counted (agent/core/counted_loss.h).
//   start/end: ids come from a process counter; the open range waits in a fixed lock-free slot
//     table (kStartEndSlots) so that any thread can end it; end emits one NVTX_KIND_START_END
//     record on the ending thread's ring (thread = the starter, end_thread_id = the ender). A
//     start whose slot is busy is not recorded but counted; an unknown/duplicate end is
//     ignored.
//   marks: instants (end == start).
//   domains and registered strings: interned in the StringTable at creation/registration
//     (locks; off the hot path); the handle is the string id.
// Push/pop handlers keep their thread's stack balanced whenever the agent has started (also
// after Stop() or in a fork child); they only stop emitting records.
// Wide-character (W) entry points record the same as the A ones, their text as UTF-8 (a W push
// the agent did not see would leave its pop to close the wrong range).
// Chaining (LUMOS_NVTX_CHAIN, nvtx_chain.h): the chained library initializes first; each
// handler records, then calls the chained handler and returns its result. Starts take the
// chained library's range id as theirs; domains and registered strings take its handles,
// mapped to our string ids through nvtx_handle_map.h. Without a chain the handlers only pay one
// load of a null slot.
// Iteration markers (windowed modes): each push or start first reports a name that may mark an
// iteration (nvtx_markers.h).
#pragma once

// We are the tool, not a user: only the types, not NVTX's own implementation.
#ifndef NVTX_NO_IMPL
#define NVTX_NO_IMPL
#endif
#include <nvtx3/nvToolsExt.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace lumos::agent {

inline constexpr int kMaxPushDepth = 32;
inline constexpr uint64_t kStartEndSlots = 4096;

namespace internal {
// Footprint reports (bench/): the static start/end slot table as it sits in memory, and the
// heap block each thread that pushes a range allocates for its push stack.
std::span<const std::byte> NvtxStartEndSlotMemory();
size_t NvtxPushStackBytes();
}  // namespace internal

// Starts the agent (fail open) and patches the tables. Returns 1 (NVTX: success) when the
// tables were patched, 0 otherwise; NVTX then runs without injection.
int InitializeNvtxInjection(NvtxGetExportTableFunc_t get_export_table) noexcept;

}  // namespace lumos::agent
