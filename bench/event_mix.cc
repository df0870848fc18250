#include "bench/event_mix.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <numeric>
#include <string>
#include <unordered_set>

#include "bench/mix_builder.h"

namespace lumos::bench {

using internal::kDeviceId;
using internal::kStartOfTimeNs;
using internal::MixBuilder;
using internal::Pending;
using schema::KernelEvent;

std::string_view MixKindName(size_t kind) {
  static constexpr std::string_view kNames[kMixKinds] = {
      "kernel", "api_call", "memcpy", "sync", "cuda_event", "collective", "nvtx"};
  return kind < kMixKinds ? kNames[kind] : "?";
}

int64_t StartNs(const MixEvent& event) {
  return std::visit([](const auto& e) { return e.start_ns; }, event);
}

EventMix GenerateEventMix(const MixOptions& options, size_t min_events) {
  EventMix mix;
  MixBuilder builder(options);
  while (builder.pending().size() < min_events) {
    builder.Step();
    ++mix.steps;
  }
  std::vector<Pending>& pending = builder.pending();
  std::vector<uint32_t> order(pending.size());
  std::iota(order.begin(), order.end(), 0u);
  if (options.order == MixOrder::kTimeSorted) {
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      return StartNs(pending[x].event) < StartNs(pending[y].event);
    });
  } else {
    const int64_t interval = static_cast<int64_t>(std::max<uint64_t>(options.drain_interval_ns, 1));
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      const Pending& p = pending[x];
      const Pending& q = pending[y];
      int64_t bp = p.ready_ns / interval, bq = q.ready_ns / interval;
      if (bp != bq) return bp < bq;
      if (p.source != q.source) return p.source < q.source;
      return p.ready_ns < q.ready_ns;
    });
  }
  mix.events.reserve(pending.size());
  std::unordered_set<const char*> names;
  for (uint32_t i : order) {
    const MixEvent& e = pending[i].event;
    ++mix.count_per_kind[e.index()];
    if (const auto* k = std::get_if<KernelEvent>(&e)) names.insert(k->name.data());
    mix.events.push_back(e);
  }
  mix.distinct_kernel_names = names.size();
  mix.owned_strings = builder.TakeStrings();

  schema::HeaderInfo& h = mix.header;
  h.agent_version = "0.1.0";
  h.producer = schema::Producer::kSynthetic;
  h.host_name = "bench-node-17";
  h.pid = 48213;
  h.job_id = "lumos-bench";
  h.has_rank = h.has_local_rank = h.has_world_size = true;
  h.rank = 3;
  h.local_rank = 3;
  h.world_size = 8;
  schema::DeviceInfo d;
  d.device_id = kDeviceId;
  d.name = "NVIDIA H200";
  d.sm_count = 132;
  d.sm_clock_khz = 1980000;
  d.memory_clock_khz = 3201000;
  d.memory_bytes = 150'754'820'096;
  d.pci_bus_id = "0000:5D:00.0";
  d.compute_major = 9;
  d.uuid = "GPU-5a8f1c2e-7d3b-4e9a-b1f0-2c6d8e4a9b71";
  d.memory_bus_width_bits = 6144;
  h.devices.push_back(d);
  h.cuda_runtime_version = 13000;
  h.cuda_driver_version = 13000;
  h.cupti_version = 26;
  h.nccl_version = "2.28.3";
  h.clock_domains.push_back({schema::ClockId::kCupti, "cupti", 1});
  h.default_clock_id = schema::ClockId::kCupti;
  h.start_time_ns = static_cast<uint64_t>(kStartOfTimeNs);
  h.command_line = "python pretrain.py --layers 24 --fsdp";
  return mix;
}

}  // namespace lumos::bench
