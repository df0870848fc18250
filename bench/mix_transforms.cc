#include "bench/mix_transforms.h"

#include <type_traits>
#include <unordered_map>

#include "schema/varint.h"

namespace lumos::bench {
namespace {}  // namespace

void DeltaCodeSyncIds(std::vector<MixEvent>* events) {
  uint64_t last[kMixKinds] = {};
  for (MixEvent& event : *events) {
    size_t kind = event.index();
    std::visit(
        [&](auto& e) {
          if constexpr (requires { e.cuda_event_sync_id; }) {
            uint64_t id = e.cuda_event_sync_id;
            e.cuda_event_sync_id = schema::ZigZagEncode(static_cast<int64_t>(id - last[kind]));
            last[kind] = id;
          }
        },
        event);
  }
}

void DropConstantFields(std::vector<MixEvent>* events) {
  for (MixEvent& event : *events) {
    std::visit(
        [](auto& e) {
          using E = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<E, schema::ApiCallEvent>) {
            e.domain = schema::ApiDomain::kUnspecified;
            e.cbid = 0;
          } else if constexpr (std::is_same_v<E, schema::CollectiveEvent>) {
            e.device_id = 0;
            e.comm_size = 0;
            e.has_host_time = false;
          } else {
            if constexpr (requires { e.device_id; }) e.device_id = 0;
            if constexpr (requires { e.context_id; }) e.context_id = 0;
          }
        },
        event);
  }
}

void StartFromPreviousEndOnProcessor(std::vector<MixEvent>* events) {
  // Processor key: stream ids and thread ids live in different halves of the key space.
  std::unordered_map<uint64_t, int64_t> last_end;
  int64_t last_start = 0;
  int64_t encoded = 0;
  bool first = true;
  for (MixEvent& event : *events) {
    std::visit(
        [&](auto& e) {
          using E = std::decay_t<decltype(e)>;
          uint64_t key = 0;
          if constexpr (std::is_same_v<E, schema::KernelEvent> ||
                        std::is_same_v<E, schema::MemcpyEvent> ||
                        std::is_same_v<E, schema::CudaEventRecordEvent>) {
            key = e.stream_id | (1ull << 63);
          } else if constexpr (std::is_same_v<E, schema::NvtxEvent>) {
            key = e.thread_id | (1ull << 62);  // Ranges nest: their own chain per thread.
          } else if constexpr (std::is_same_v<E, schema::CollectiveEvent>) {
            key = e.thread_id | (1ull << 61);  // Reported late by NCCL: own chain too.
          } else if constexpr (requires { e.thread_id; }) {
            key = e.thread_id;
          }
          int64_t duration = 0;
          if constexpr (requires { e.duration_ns; }) duration = static_cast<int64_t>(e.duration_ns);
          int64_t start = e.start_ns;
          int64_t delta = start - last_start;
          if (key != 0) {
            auto it = last_end.find(key);
            if (it != last_end.end()) delta = start - it->second;
            last_end[key] = start + duration;
          }
          last_start = start;
          encoded = first ? start : encoded + delta;
          first = false;
          e.start_ns = encoded;
        },
        event);
  }
}

}  // namespace lumos::bench
