// Design: a deterministic generator of a realistic synthetic event mix for the writer and
// reader benchmarks: the events one rank of an FSDP-style transformer training job records
// per step (kernel launches on 1-2 host threads, kernels on 3-4 streams, CUDA event
// record/wait pairs around NCCL collectives, host syncs, memcpys, NVTX push/pop ranges).
// Timestamps come from a small timing model with log-normal durations and gaps at ns
// resolution, never a regular grid, because compressibility depends on them. The
// distributions are documented in docs/performance.md ("The event mix").
// Events are emitted in the order the agent's writer thread would see them (kDrainBatches:
// per drain interval, each source's ring/buffer in turn), or sorted by start time.
// Single-threaded; the result is immutable. Kernel names live in a static table, so the
// string_views in the events stay valid for the whole process. How a step is made:
// mix_builder.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "schema/writer/trace_events.h"

namespace lumos::bench {

// The event kinds of the mix; MixKindName(event.index()) names one.
using MixEvent =
    std::variant<schema::KernelEvent, schema::ApiCallEvent, schema::MemcpyEvent, schema::SyncEvent,
                 schema::CudaEventRecordEvent, schema::CollectiveEvent, schema::NvtxEvent>;
inline constexpr size_t kMixKinds = std::variant_size_v<MixEvent>;
// "kernel", "api_call", "memcpy", "sync", "cuda_event", "collective", "nvtx".
std::string_view MixKindName(size_t kind);

enum class MixOrder {
  kDrainBatches,  // What the writer thread sees: per drain interval, one source after another.
  kTimeSorted,    // Sorted by start time (a writer that merged all sources).
};

struct MixOptions {
  uint64_t seed = 1;
  int layers = 24;       // Transformer layers per step.
  int host_threads = 2;  // 1: everything on the main thread; 2: backward on autograd thread.
  int streams = 4;       // 3 or 4: compute, NCCL, copy (+ a side stream).
  uint64_t drain_interval_ns = 10'000'000;  // Writer thread wake-up period.
  MixOrder order = MixOrder::kDrainBatches;
};

struct EventMix {
  std::vector<MixEvent> events;
  std::array<size_t, kMixKinds> count_per_kind{};
  size_t steps = 0;
  size_t distinct_kernel_names = 0;  // Names actually used by the events.
  // Strings the events point to besides the kernel-name table (NVTX range names).
  std::shared_ptr<const std::deque<std::string>> owned_strings;
  // Header for TraceFileWriter::Create (producer SYNTHETIC, one H200, rank 3 of 8).
  schema::HeaderInfo header;
};

// Generates whole steps until at least `min_events` events exist.
EventMix GenerateEventMix(const MixOptions& options, size_t min_events);

// Start time of any event of the mix.
int64_t StartNs(const MixEvent& event);

}  // namespace lumos::bench
