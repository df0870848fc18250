// A window file's events clipped to its window; see window_clip.h.
#include "modeler/graph/window_clip.h"

#include <unordered_set>
#include <vector>

namespace lumos::modeler {
namespace {

template <typename Event>
bool Overlaps(const Event& e, int64_t begin_ns, int64_t end_ns) {
  int64_t end = e.start_ns;
  if constexpr (requires { e.duration_ns; }) end += static_cast<int64_t>(e.duration_ns);
  return e.start_ns <= end_ns && end >= begin_ns;
}

// Keeps the events `keep` accepts, in order; returns how many it dropped.
template <typename Event, typename Keep>
uint64_t KeepOnly(std::vector<Event>* events, const Keep& keep) {
  const size_t before = events->size();
  std::erase_if(*events, [&keep](const Event& e) { return !keep(e); });
  return before - events->size();
}

}  // namespace

uint64_t ClipToWindow(int64_t begin_ns, int64_t end_ns, RankTrace* rank) {
  auto inside = [begin_ns, end_ns](const auto& e) { return Overlaps(e, begin_ns, end_ns); };
  uint64_t dropped = KeepOnly(&rank->api_calls, inside);
  std::unordered_set<uint64_t> launched;
  for (const schema::ApiCallEvent& call : rank->api_calls) {
    if (call.correlation_id != 0) launched.insert(call.correlation_id);
  }
  auto gpu = [&](const auto& e) {
    return Overlaps(e, begin_ns, end_ns) ||
           (e.correlation_id != 0 && launched.count(e.correlation_id) != 0);
  };
  dropped += KeepOnly(&rank->kernels, gpu);
  dropped += KeepOnly(&rank->memcpys, gpu);
  dropped += KeepOnly(&rank->memsets, gpu);
  // An event record is a GPU op too: its device time may fall after the window's end, or it
  // has none (a CUPTI without device timestamps); the waits on it need it.
  dropped += KeepOnly(&rank->cuda_events, gpu);
  dropped += KeepOnly(&rank->syncs, inside);
  dropped += KeepOnly(&rank->host_ranges, inside);
  dropped += KeepOnly(&rank->nvtx, inside);
  dropped += KeepOnly(&rank->collectives, inside);
  dropped += KeepOnly(&rank->gemm_calls, inside);
  return dropped;
}

}  // namespace lumos::modeler
