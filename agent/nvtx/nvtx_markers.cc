#include "agent/nvtx/nvtx_markers.h"

#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>

#include "agent/nvtx/wide_text.h"
#include "base/logging.h"

namespace lumos::agent {
namespace {

void NoteMarkerName(const control::IterationMarker& marker, control::WindowController* windows,
                    std::string_view name) {
  if (!marker.Matches(name)) return;
  windows->OnIterationBoundary(control::TrailingNumber(name), MonotonicNowNs());
}

// The registered strings that are markers (see the header).
struct RegisteredMarker {
  std::atomic<uintptr_t> handle{0};  // What the application holds; published last (release).
  bool numbered = false;
  uint64_t index = 0;  // The number its text ends with, when numbered.
};
constexpr size_t kMaxRegisteredMarkers = 64;
// Never destroyed (trivially destructible members only), reachable from any thread.
RegisteredMarker g_registered_markers[kMaxRegisteredMarkers];
std::mutex g_registered_markers_mutex;  // Registration only.

}  // namespace

std::atomic<size_t> g_registered_marker_count{0};

void NoteMarker(const control::IterationMarker& marker, control::WindowController* windows,
                const char* text) {
  NoteMarkerName(marker, windows, std::string_view(text, strnlen(text, kMaxMarkerBytes)));
}
void NoteMarkerWide(const control::IterationMarker& marker, control::WindowController* windows,
                    const wchar_t* text) {
  char utf8[kMaxMarkerBytes + 1];
  const size_t length = WideToUtf8(text, utf8, sizeof(utf8));
  NoteMarkerName(marker, windows, std::string_view(utf8, length));
}

void NoteRegisteredString(const Agent& agent, const void* handle, std::string_view text) {
  const control::IterationMarker& marker = agent.iteration_marker();
  if (handle == nullptr || agent.windows() == nullptr || !marker.Matches(text)) return;
  const auto value = reinterpret_cast<uintptr_t>(handle);
  std::lock_guard<std::mutex> lock(g_registered_markers_mutex);
  const size_t count = g_registered_marker_count.load(std::memory_order_relaxed);
  for (size_t i = 0; i < count; ++i) {
    if (g_registered_markers[i].handle.load(std::memory_order_relaxed) == value) return;
  }
  if (count == kMaxRegisteredMarkers) {
    static bool warned = false;
    if (!warned) {
      warned = true;
      LUMOS_LOG(Warn,
                "more than %zu registered NVTX strings match LUMOS_ITERATION_MARKER; ranges named "
                "by the later ones do not mark iterations",
                kMaxRegisteredMarkers);
    }
    return;
  }
  RegisteredMarker& entry = g_registered_markers[count];
  const std::optional<uint64_t> index = control::TrailingNumber(text);
  entry.numbered = index.has_value();
  entry.index = index.value_or(0);
  entry.handle.store(value, std::memory_order_release);
  g_registered_marker_count.store(count + 1, std::memory_order_release);
}

void NoteRegisteredMarker(control::WindowController* windows, nvtxStringHandle_t handle,
                          size_t count) {
  const auto value = reinterpret_cast<uintptr_t>(handle);
  for (size_t i = 0; i < count; ++i) {
    const RegisteredMarker& entry = g_registered_markers[i];
    // Acquire: pairs with the registration's release store, which published index and numbered.
    if (entry.handle.load(std::memory_order_acquire) != value) continue;
    windows->OnIterationBoundary(
        entry.numbered ? std::optional<uint64_t>(entry.index) : std::nullopt, MonotonicNowNs());
    return;
  }
}

}  // namespace lumos::agent
