// Design: iteration markers in NVTX calls (windowed modes: LUMOS_MODE=periodic|on-demand).
// A range whose name matches LUMOS_ITERATION_MARKER begins an iteration: the window controller
// hears of it before the range is recorded, so a window that starts there holds its marker and
// one that ends there does not. Between windows a push is not tracked (its pop finds nothing and
// is ignored): a dormant push costs the controller load, one compare of the name's first
// character (byte or wchar_t) and the flag. Every way of naming a range counts: A and W calls,
// ASCII and UNICODE attributes, and registered strings (A or W) whose text is a marker.
// The one-byte pre-checks that decide whether a name is a candidate stay inline in the handlers
// (nvtx_injection.cc, TrackRange); a candidate comes here, out of line: matched as a glob, its
// trailing number read, the controller told.
// Registered strings that are iteration markers are found when they are registered (off the
// hot path): a range named by one is a boundary. A fixed lock-free table (a loop registers its
// marker once, or a few); a full table: one warning, the later ones are not markers.
// Threading: Note* from any thread; registration takes a lock, look-ups never do.
#pragma once

// We are the tool, not a user: only the types, not NVTX's own implementation.
#ifndef NVTX_NO_IMPL
#define NVTX_NO_IMPL
#endif
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstddef>
#include <string_view>

#include "agent/control/iteration_marker.h"
#include "agent/control/window_controller.h"
#include "agent/runtime/agent_runtime.h"

namespace lumos::agent {

// The longest name matched (as NoteMarker's strnlen: longer names are cut there).
inline constexpr size_t kMaxMarkerBytes = 256;

// A candidate name (the marker's MayMatch said so): a boundary for `windows` when `marker`
// matches it.
__attribute__((noinline)) void NoteMarker(const control::IterationMarker& marker,
                                          control::WindowController* windows, const char* text);
// A wide candidate, matched as UTF-8 (a stack buffer: no allocation on the job's thread).
__attribute__((noinline)) void NoteMarkerWide(const control::IterationMarker& marker,
                                              control::WindowController* windows,
                                              const wchar_t* text);

// At registration: remembers `handle` when `text` is an iteration marker (windowed modes only).
void NoteRegisteredString(const Agent& agent, const void* handle, std::string_view text);
// A range named by the registered string `handle`: a boundary when it is one of the first
// `count` registered markers.
__attribute__((noinline)) void NoteRegisteredMarker(control::WindowController* windows,
                                                    nvtxStringHandle_t handle, size_t count);

// Entries of the registered-marker table whose handle may be set; 0 until a registered string
// matched (the hot path's check before NoteRegisteredMarker). Acquire: pairs with the
// registration's release store.
extern std::atomic<size_t> g_registered_marker_count;
inline size_t RegisteredMarkerCount() {
  return g_registered_marker_count.load(std::memory_order_acquire);
}

}  // namespace lumos::agent
