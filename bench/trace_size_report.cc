// lumos_trace_size_report: where the bytes of a trace go, for the synthetic event mix.
// Prints (1) the mix, (2) uncompressed bytes per field of the two dominant kinds, and
// (3) bytes/event on disk when one field group is zeroed (the upper bound of what encoding
// that group differently could save) or the events are reordered. Deterministic: no timing.
// Usage: lumos_trace_size_report [events=300000] [zstd_level=3] [--write=PATH]
//   --write=PATH also keeps the baseline trace at PATH (for zstd -b, protoc --decode, ...).
// Or:    lumos_trace_size_report --analyze=FILE.pb.zst [zstd_level=3]
//   attributes the compressed bytes of an existing trace to packet kinds and fields.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/event_mix.h"
#include "bench/mix_transforms.h"
#include "bench/mix_writer.h"
#include "bench/trace_file_analysis.h"
#include "schema/varint.h"
#include "schema/writer/wire_buffer.h"

namespace lumos::bench {
namespace {

using schema::ApiCallEvent;
using schema::KernelEvent;

size_t FieldBytes(uint32_t field, uint64_t value) {
  if (value == 0) return 0;
  return schema::WireBuffer::VarintSize(field << 3) + schema::WireBuffer::VarintSize(value);
}

void PrintMix(const EventMix& mix) {
  std::printf("event mix: %zu events, %zu steps, %zu distinct kernel names\n", mix.events.size(),
              mix.steps, mix.distinct_kernel_names);
  for (size_t k = 0; k < kMixKinds; ++k) {
    std::printf("  %-11s %8zu  %5.1f%%\n", std::string(MixKindName(k)).c_str(),
                mix.count_per_kind[k],
                100.0 * static_cast<double>(mix.count_per_kind[k]) /
                    static_cast<double>(mix.events.size()));
  }
}

// Uncompressed bytes per field, averaged over the events of one kind.
void PrintFieldSizes(const EventMix& mix) {
  std::map<std::string, double> kernel, api;
  double delta_kernel = 0, delta_api = 0;
  int64_t last = 0;
  bool first = true;
  for (const MixEvent& e : mix.events) {
    int64_t start = StartNs(e);
    size_t delta =
        first ? 0 : 1 + schema::WireBuffer::VarintSize(schema::ZigZagEncode(start - last));
    last = start;
    first = false;
    if (const auto* k = std::get_if<KernelEvent>(&e)) {
      delta_kernel += static_cast<double>(delta);
      kernel["duration_ns"] += FieldBytes(1, k->duration_ns);
      kernel["correlation_id"] += FieldBytes(2, k->correlation_id);
      kernel["stream_id"] += FieldBytes(3, k->stream_id);
      kernel["name_iid (~1 B)"] += 2;
      kernel["device_id"] += FieldBytes(5, k->device_id);
      kernel["grid+block+cluster"] += FieldBytes(6, k->grid.x) + FieldBytes(7, k->grid.y) +
                                      FieldBytes(8, k->grid.z) + FieldBytes(9, k->block.x) +
                                      FieldBytes(10, k->block.y) + FieldBytes(11, k->block.z) +
                                      FieldBytes(20, k->cluster.x) + FieldBytes(21, k->cluster.y) +
                                      FieldBytes(22, k->cluster.z);
      kernel["registers+smem"] += FieldBytes(12, k->registers_per_thread) +
                                  FieldBytes(13, k->static_shared_memory_bytes) +
                                  FieldBytes(14, k->dynamic_shared_memory_bytes);
      kernel["context_id+launch_type"] +=
          FieldBytes(15, k->context_id) + FieldBytes(18, static_cast<uint64_t>(k->launch_type));
    } else if (const auto* a = std::get_if<ApiCallEvent>(&e)) {
      delta_api += static_cast<double>(delta);
      api["duration_ns"] += FieldBytes(1, a->duration_ns);
      api["thread_id"] += FieldBytes(2, a->thread_id);
      api["correlation_id"] += FieldBytes(3, a->correlation_id);
      api["kind+cbid+domain"] += FieldBytes(4, static_cast<uint64_t>(a->kind)) +
                                 FieldBytes(5, a->cbid) +
                                 FieldBytes(9, static_cast<uint64_t>(a->domain));
      api["name_iid (~1 B)"] += 2;
      api["stream_id+event_id"] += FieldBytes(7, a->stream_id) + FieldBytes(8, a->event_id);
    }
  }
  auto print = [](const char* kind, const std::map<std::string, double>& fields, double delta,
                  size_t count) {
    double total = delta + 6.0 * static_cast<double>(count);  // Packet/oneof tags + lengths.
    for (const auto& [name, bytes] : fields) total += bytes;
    std::printf("\n%s: %.1f uncompressed bytes/event\n", kind, total / static_cast<double>(count));
    std::printf("  %-26s %5.2f\n", "framing (tags, lengths)", 6.0);
    std::printf("  %-26s %5.2f\n", "start_delta_ns", delta / static_cast<double>(count));
    for (const auto& [name, bytes] : fields) {
      std::printf("  %-26s %5.2f\n", name.c_str(), bytes / static_cast<double>(count));
    }
  };
  print("kernel", kernel, delta_kernel, mix.count_per_kind[0]);
  print("api_call", api, delta_api, mix.count_per_kind[1]);
}

struct Ablation {
  const char* name;
  std::function<void(MixEvent*)> apply;
};

template <typename Fn>
std::function<void(MixEvent*)> ForAll(Fn fn) {
  return [fn](MixEvent* e) { std::visit(fn, *e); };
}

int Run(size_t events, int level, const std::string& keep_path) {
  MixOptions options;
  EventMix mix = GenerateEventMix(options, events);
  options.order = MixOrder::kTimeSorted;
  EventMix sorted = GenerateEventMix(options, events);
  PrintMix(mix);
  PrintFieldSizes(mix);

  schema::WriterOptions writer;
  writer.zstd_level = level;
  const std::string path = ScratchPath("size");
  auto bytes_per_event = [&](const EventMix& m, const std::vector<MixEvent>& list) {
    StatusOr<schema::WriterStats> s = WriteTrace(path, m.header, list, writer);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.status().message().c_str());
      std::exit(1);
    }
    return std::make_pair(
        static_cast<double>(s->bytes_written) / static_cast<double>(list.size()),
        static_cast<double>(s->uncompressed_bytes) / static_cast<double>(list.size()));
  };

  const int64_t t0 = StartNs(mix.events.front());
  std::vector<Ablation> ablations = {
      {"baseline (drain order)", nullptr},
      {"kernel.duration_ns = 0",
       [](MixEvent* e) {
         if (auto* k = std::get_if<KernelEvent>(e)) k->duration_ns = 0;
       }},
      {"api_call.duration_ns = 0",
       [](MixEvent* e) {
         if (auto* a = std::get_if<ApiCallEvent>(e)) a->duration_ns = 0;
       }},
      {"all durations = 0", ForAll([](auto& x) {
         if constexpr (requires { x.duration_ns; }) x.duration_ns = 0;
       })},
      {"all start times equal", ForAll([t0](auto& x) { x.start_ns = t0; })},
      {"start times rounded to 1 us", ForAll([](auto& x) { x.start_ns -= x.start_ns % 1000; })},
      {"times+durations rounded to 1 us", ForAll([](auto& x) {
         x.start_ns -= x.start_ns % 1000;
         if constexpr (requires { x.duration_ns; }) x.duration_ns -= x.duration_ns % 1000;
       })},
      {"all correlation_id = 0", ForAll([](auto& x) {
         if constexpr (requires { x.correlation_id; }) x.correlation_id = 0;
       })},
      {"kernel launch config = 0",
       [](MixEvent* e) {
         if (auto* k = std::get_if<KernelEvent>(e)) {
           k->grid = k->block = k->cluster = {};
           k->registers_per_thread = k->static_shared_memory_bytes = 0;
           k->dynamic_shared_memory_bytes = 0;
           k->launch_type = schema::LaunchType::kUnspecified;
         }
       }},
      {"kernel device/context/stream = 0",
       [](MixEvent* e) {
         if (auto* k = std::get_if<KernelEvent>(e)) k->device_id = k->context_id = 0;
         if (auto* k = std::get_if<KernelEvent>(e)) k->stream_id = 0;
       }},
      {"api thread/kind/cbid/domain = 0",
       [](MixEvent* e) {
         if (auto* a = std::get_if<ApiCallEvent>(e)) {
           a->thread_id = a->cbid = 0;
           a->kind = schema::ApiKind::kUnspecified;
           a->domain = schema::ApiDomain::kUnspecified;
         }
       }},
      {"event ids / sync ids = 0", ForAll([](auto& x) {
         if constexpr (requires { x.event_id; }) x.event_id = 0;
         if constexpr (requires { x.cuda_event_sync_id; }) x.cuda_event_sync_id = 0;
       })},
  };
  std::printf("\nbytes/event at zstd %d, 1 MiB frames (disk / uncompressed), %zu events:\n", level,
              mix.events.size());
  double base = 0;
  for (const Ablation& a : ablations) {
    std::vector<MixEvent> list = mix.events;
    if (a.apply) {
      for (MixEvent& e : list) a.apply(&e);
    }
    auto [disk, raw] = bytes_per_event(mix, list);
    if (base == 0) base = disk;
    std::printf("  %-34s %6.3f  %6.2f   (%+.3f)\n", a.name, disk, raw, disk - base);
  }
  if (!keep_path.empty()) {
    StatusOr<schema::WriterStats> s = WriteTrace(keep_path, mix.header, mix.events, writer);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.status().message().c_str());
      return 1;
    }
    std::printf("  (baseline trace written to %s)\n", keep_path.c_str());
  }
  auto [disk, raw] = bytes_per_event(sorted, sorted.events);
  std::printf("  %-34s %6.3f  %6.2f   (%+.3f)\n", "events sorted by start time", disk, raw,
              disk - base);

  std::printf("\nsimulated encodings (values rewritten as the new encoding would store them):\n");
  struct Simulation {
    const char* name;
    bool ids, constants, starts;
  };
  for (const Simulation& sim :
       {Simulation{"cuda_event_sync_id delta-coded", true, false, false},
        Simulation{"constant fields dropped", false, true, false},
        Simulation{"start from previous end on processor", false, false, true},
        Simulation{"all three", true, true, true}}) {
    std::vector<MixEvent> list = mix.events;
    if (sim.ids) DeltaCodeSyncIds(&list);
    if (sim.constants) DropConstantFields(&list);
    if (sim.starts) StartFromPreviousEndOnProcessor(&list);
    auto [d, r] = bytes_per_event(mix, list);
    std::printf("  %-38s %6.3f  %6.2f   (%+.3f)\n", sim.name, d, r, d - base);
  }
  std::remove(path.c_str());
  return 0;
}

}  // namespace
}  // namespace lumos::bench

int main(int argc, char** argv) {
  size_t events = 300'000;
  int level = 3;
  std::string keep_path, analyze_path;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--write=", 0) == 0) {
      keep_path = arg.substr(8);
    } else if (arg.rfind("--analyze=", 0) == 0) {
      analyze_path = arg.substr(10);
      positional = 1;  // Only a zstd level may follow.
    } else if (positional == 0 && arg[0] != '-') {
      events = std::strtoull(arg.c_str(), nullptr, 10);
      ++positional;
    } else if (positional == 1 && arg.find_first_not_of("-0123456789") == std::string::npos) {
      level = std::atoi(arg.c_str());
      ++positional;
    } else {
      events = 0;
    }
  }
  if (events == 0) {
    std::fprintf(stderr,
                 "usage: lumos_trace_size_report [events] [zstd_level] [--write=PATH]\n"
                 "       lumos_trace_size_report --analyze=FILE [zstd_level]\n");
    return 2;
  }
  if (!analyze_path.empty()) {
    lumos::Status status = lumos::bench::AnalyzeTraceFile(analyze_path, level);
    if (!status.ok()) std::fprintf(stderr, "%s\n", status.message().c_str());
    return status.ok() ? 0 : 1;
  }
  return lumos::bench::Run(events, level, keep_path);
}
