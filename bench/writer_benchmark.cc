// Writer-side benchmarks on one core: PacketEncoder alone (protobuf wire encoding), zstd
// alone on pre-encoded frames, and the whole TraceFileWriter path (encode + compress + write
// to a file under $TMPDIR), all over the synthetic event mix of bench/event_mix.h. Reports
// events/s (items_per_second) and bytes per event (counters). Targets (docs/performance.md):
// >= 10 M events/s through TraceFileWriter, <= 6 bytes/event on disk.
#include <benchmark/benchmark.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "bench/event_mix.h"
#include "bench/mix_transforms.h"
#include "bench/mix_writer.h"
#include "schema/writer/packet_encoder.h"
#include "schema/writer/trace_file_writer.h"
#include "schema/writer/wire_buffer.h"

namespace lumos::bench {
namespace {

constexpr size_t kMixEvents = 300'000;  // ~90 steps of 24 layers; ~18 MiB uncompressed.

enum class Variant {
  kAsIs,
  kNoNames,  // Kernel/API/NVTX names cleared: the encoder interns nothing (its cost).
  kCompact,  // Rewritten as the encoding changes of bench/mix_transforms.h would store them.
};

// Built on first use; lives until exit.
const EventMix& Mix(MixOrder order, Variant variant = Variant::kAsIs) {
  static const EventMix* mixes[2][3] = {};
  const EventMix*& mix = mixes[order == MixOrder::kDrainBatches ? 0 : 1][static_cast<int>(variant)];
  if (mix == nullptr) {
    MixOptions options;
    options.order = order;
    auto* m = new EventMix(GenerateEventMix(options, kMixEvents));
    if (variant == Variant::kNoNames) {
      for (MixEvent& e : m->events) {
        std::visit(
            [](auto& x) {
              if constexpr (requires { x.name; }) x.name = {};
            },
            e);
      }
    } else if (variant == Variant::kCompact) {
      DeltaCodeSyncIds(&m->events);
      DropConstantFields(&m->events);
      StartFromPreviousEndOnProcessor(&m->events);
    }
    mix = m;
  }
  return *mix;
}

void SetEventCounters(benchmark::State& state, size_t events_per_iteration) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(events_per_iteration));
}

// Protobuf wire encoding only: events -> frames in memory (no compression, no I/O).
// Arg names: 1 = as recorded, 0 = names cleared (shows what interning costs).
void BM_Encode(benchmark::State& state) {
  const EventMix& mix =
      Mix(MixOrder::kDrainBatches, state.range(0) != 0 ? Variant::kAsIs : Variant::kNoNames);
  const size_t frame_bytes = 1 << 20;
  schema::PacketEncoder encoder;
  schema::WireBuffer frame;
  uint64_t bytes = 0;
  for (auto _ : state) {
    for (const MixEvent& e : mix.events) {
      AddEvent(&encoder, e);
      if (encoder.pending_bytes() >= frame_bytes) {
        encoder.TakeFrame(&frame);
        bytes += frame.size();
        benchmark::DoNotOptimize(frame.data());
      }
    }
    encoder.TakeFrame(&frame);
    bytes += frame.size();
  }
  SetEventCounters(state, mix.events.size());
  state.counters["raw_bytes_per_event"] = static_cast<double>(bytes) /
                                          static_cast<double>(state.iterations()) /
                                          static_cast<double>(mix.events.size());
}
BENCHMARK(BM_Encode)->ArgName("names")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// The harness alone: reads the mix (a vector of variants, ~40 MiB) and dispatches each event
// to a sink that only reads its start time. What BM_Encode and BM_WriteTrace spend on getting
// their input, not on encoding it.
void BM_FeedMix(benchmark::State& state) {
  const EventMix& mix = Mix(MixOrder::kDrainBatches);
  uint64_t sum = 0;
  for (auto _ : state) {
    for (const MixEvent& e : mix.events) {
      std::visit([&sum](const auto& event) { sum += static_cast<uint64_t>(event.start_ns); }, e);
    }
  }
  benchmark::DoNotOptimize(sum);
  SetEventCounters(state, mix.events.size());
}
BENCHMARK(BM_FeedMix)->Unit(benchmark::kMillisecond);

// zstd only, on the frames BM_Encode produces (as TraceFileWriter compresses them: one
// ZSTD_compress2 per frame with the checksum on). Arg: zstd level.
void BM_Compress(benchmark::State& state) {
  const EventMix& mix = Mix(MixOrder::kDrainBatches);
  std::vector<std::vector<uint8_t>> frames;
  {
    schema::PacketEncoder encoder;
    schema::WireBuffer frame;
    for (const MixEvent& e : mix.events) {
      AddEvent(&encoder, e);
      if (encoder.pending_bytes() >= (1u << 20)) {
        encoder.TakeFrame(&frame);
        frames.emplace_back(frame.data(), frame.data() + frame.size());
      }
    }
    encoder.TakeFrame(&frame);
    frames.emplace_back(frame.data(), frame.data() + frame.size());
  }
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, static_cast<int>(state.range(0)));
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  std::vector<uint8_t> out(ZSTD_compressBound(2u << 20));
  uint64_t compressed = 0;
  for (auto _ : state) {
    for (const std::vector<uint8_t>& f : frames) {
      if (out.size() < ZSTD_compressBound(f.size())) out.resize(ZSTD_compressBound(f.size()));
      size_t n = ZSTD_compress2(cctx, out.data(), out.size(), f.data(), f.size());
      if (ZSTD_isError(n)) {
        state.SkipWithError(ZSTD_getErrorName(n));
        break;
      }
      compressed += n;
    }
  }
  ZSTD_freeCCtx(cctx);
  SetEventCounters(state, mix.events.size());
  state.counters["bytes_per_event"] = static_cast<double>(compressed) /
                                      static_cast<double>(state.iterations()) /
                                      static_cast<double>(mix.events.size());
}
BENCHMARK(BM_Compress)
    ->ArgName("zstd_level")
    ->Arg(-1)
    ->Arg(1)
    ->Arg(3)
    ->Unit(benchmark::kMillisecond);

// The whole writer: TraceFileWriter::Create, Add every event, Close, into a file under
// $TMPDIR. Args: zstd level, frame size (KiB of uncompressed packets), event order
// (0: drain batches as the agent sees them, 1: sorted by start time), compact (1: values
// rewritten as the encoding changes of bench/mix_transforms.h would store them).
void BM_WriteTrace(benchmark::State& state) {
  const MixOrder order = state.range(2) == 0 ? MixOrder::kDrainBatches : MixOrder::kTimeSorted;
  const EventMix& mix = Mix(order, state.range(3) != 0 ? Variant::kCompact : Variant::kAsIs);
  schema::WriterOptions options;
  options.zstd_level = static_cast<int>(state.range(0));
  options.frame_bytes = static_cast<uint64_t>(state.range(1)) << 10;
  const std::string path = ScratchPath("write");
  schema::WriterStats stats;
  for (auto _ : state) {
    StatusOr<schema::WriterStats> written = WriteTrace(path, mix.header, mix.events, options);
    if (!written.ok()) {
      state.SkipWithError(written.status().message().c_str());
      break;
    }
    stats = *written;
  }
  std::remove(path.c_str());
  SetEventCounters(state, mix.events.size());
  const double events = static_cast<double>(mix.events.size());
  state.counters["bytes_per_event"] = static_cast<double>(stats.bytes_written) / events;
  state.counters["raw_bytes_per_event"] = static_cast<double>(stats.uncompressed_bytes) / events;
  state.counters["frames"] = static_cast<double>(stats.frames_written);
}
BENCHMARK(BM_WriteTrace)
    ->ArgNames({"zstd_level", "frame_kib", "time_sorted", "compact"})
    ->Args({1, 1024, 0, 0})
    ->Args({3, 1024, 0, 0})
    ->Args({3, 1024, 1, 0})
    ->Args({3, 256, 0, 0})
    ->Args({3, 4096, 0, 0})
    ->Args({1, 1024, 0, 1})
    ->Args({3, 1024, 0, 1})
    ->Unit(benchmark::kMillisecond);

// Bytes on disk per event kind: for each kind, a trace holding only that kind's events of the
// mix (same order, zstd 3, 1 MiB frames); plus each kind's uncompressed bytes in the full mix
// (its packets and the interned strings it adds). Deterministic, so one iteration suffices.
void BM_BytesPerEventByKind(benchmark::State& state) {
  const EventMix& mix = Mix(MixOrder::kDrainBatches);
  const std::string path = ScratchPath("kind");
  for (auto _ : state) {
    for (size_t kind = 0; kind < kMixKinds; ++kind) {
      std::vector<MixEvent> only;
      for (const MixEvent& e : mix.events) {
        if (e.index() == kind) only.push_back(e);
      }
      if (only.empty()) continue;
      StatusOr<schema::WriterStats> written = WriteTrace(path, mix.header, only, {});
      if (!written.ok()) {
        state.SkipWithError(written.status().message().c_str());
        break;
      }
      // The header frame and trailer are a fixed ~200 bytes; leave them out.
      StatusOr<schema::WriterStats> empty = WriteTrace(path, mix.header, {}, {});
      if (!empty.ok()) {
        state.SkipWithError(empty.status().message().c_str());
        break;
      }
      state.counters[std::string(MixKindName(kind)) + "_alone"] =
          static_cast<double>(written->bytes_written - empty->bytes_written) /
          static_cast<double>(only.size());
    }
    schema::PacketEncoder encoder;
    schema::WireBuffer frame;
    uint64_t raw[kMixKinds] = {};
    for (const MixEvent& e : mix.events) {
      size_t before = encoder.pending_bytes();
      AddEvent(&encoder, e);
      raw[e.index()] += encoder.pending_bytes() - before;
      if (encoder.pending_bytes() >= (1u << 20)) encoder.TakeFrame(&frame);
    }
    for (size_t kind = 0; kind < kMixKinds; ++kind) {
      if (mix.count_per_kind[kind] == 0) continue;
      state.counters[std::string(MixKindName(kind)) + "_raw"] =
          static_cast<double>(raw[kind]) / static_cast<double>(mix.count_per_kind[kind]);
      state.counters[std::string(MixKindName(kind)) + "_share_pct"] =
          100.0 * static_cast<double>(mix.count_per_kind[kind]) /
          static_cast<double>(mix.events.size());
    }
  }
  std::remove(path.c_str());
}
BENCHMARK(BM_BytesPerEventByKind)->Iterations(1)->Repetitions(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lumos::bench
