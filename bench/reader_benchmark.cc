// Reader-side benchmarks on one core, over a trace of the synthetic event mix written once
// (default writer options) under $TMPDIR: the whole TraceReader path both ways (Open +
// ReadFrames into plain structs, the modeler's path; Open + ReadPackets, one TracePacket per
// event), and parts: zstd decompression alone, libprotobuf parsing of whole frames. Target
// (docs/performance.md): >= 20 M events/s read + decode (ReadFrames).
#include <benchmark/benchmark.h>
#include <google/protobuf/arena.h>
#include <zstd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "bench/event_mix.h"
#include "bench/mix_writer.h"
#include "modeler/trace/trace_reader.h"

namespace lumos::bench {
namespace {

constexpr size_t kMixEvents = 300'000;

struct TraceFile {
  std::string path;
  size_t events = 0;
  std::vector<std::vector<uint8_t>> frames;   // Compressed zstd frames (preamble excluded).
  std::vector<std::vector<uint8_t>> content;  // The same, decompressed.
  ~TraceFile() { std::remove(path.c_str()); }
};

// Written on first use, removed at exit.
const TraceFile& File() {
  static const std::unique_ptr<TraceFile> file = [] {
    auto f = std::make_unique<TraceFile>();
    EventMix mix = GenerateEventMix(MixOptions{}, kMixEvents);
    f->path = ScratchPath("read");
    f->events = mix.events.size();
    StatusOr<schema::WriterStats> stats = WriteTrace(f->path, mix.header, mix.events, {});
    if (!stats.ok()) {
      std::fprintf(stderr, "%s\n", stats.status().message().c_str());
      std::abort();
    }
    std::ifstream in(f->path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    size_t pos = 0;
    while (pos < bytes.size()) {
      size_t n = ZSTD_findFrameCompressedSize(bytes.data() + pos, bytes.size() - pos);
      if (ZSTD_isError(n)) std::abort();
      uint32_t magic = bytes[pos] | bytes[pos + 1] << 8 | bytes[pos + 2] << 16 |
                       static_cast<uint32_t>(bytes[pos + 3]) << 24;
      if ((magic & 0xFFFFFFF0u) != 0x184D2A50u) {
        f->frames.emplace_back(bytes.begin() + static_cast<ptrdiff_t>(pos),
                               bytes.begin() + static_cast<ptrdiff_t>(pos + n));
        std::vector<uint8_t> out(ZSTD_getFrameContentSize(bytes.data() + pos, n));
        size_t got = ZSTD_decompress(out.data(), out.size(), bytes.data() + pos, n);
        if (ZSTD_isError(got)) std::abort();
        out.resize(got);
        f->content.push_back(std::move(out));
      }
      pos += n;
    }
    return f;
  }();
  return *file;
}

void SetEvents(benchmark::State& state, size_t events_per_iteration) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(events_per_iteration));
}

// Opens `path` and runs read(reader) (ReadFrames or ReadPackets into *result); a failure to
// open or read, or a damaged file, fails the benchmark.
template <typename Read>
void ReadOrSkip(benchmark::State& state, const std::string& path, modeler::ReadResult* result,
                Read read) {
  StatusOr<std::unique_ptr<modeler::TraceReader>> reader = modeler::TraceReader::Open(path);
  if (!reader.ok()) {
    state.SkipWithError(reader.status().message().c_str());
    return;
  }
  Status status = read(reader->get());
  if (!status.ok() || !result->damage.ok()) state.SkipWithError("read failed");
}

// The whole reader, fast path: Open (validates the preamble, reads the header), then
// ReadFrames with a callback that reads the start time and one field of each event.
void BM_ReadFrames(benchmark::State& state) {
  const TraceFile& file = File();
  uint64_t sum = 0;
  modeler::ReadResult result;
  for (auto _ : state) {
    ReadOrSkip(state, file.path, &result, [&](modeler::TraceReader* reader) {
      return reader->ReadFrames(
          [&sum](const modeler::FrameEvents& frame) {
            for (const auto& k : frame.kernels)
              sum += static_cast<uint64_t>(k.start_ns) + k.duration_ns;
            for (const auto& a : frame.api_calls)
              sum += static_cast<uint64_t>(a.start_ns) + a.correlation_id;
            for (const auto& m : frame.memcpys) sum += static_cast<uint64_t>(m.start_ns) + m.bytes;
            for (const auto& m : frame.memsets) sum += static_cast<uint64_t>(m.start_ns) + m.bytes;
            for (const auto& x : frame.syncs)
              sum += static_cast<uint64_t>(x.start_ns) + x.stream_id;
            for (const auto& e : frame.cuda_events)
              sum += static_cast<uint64_t>(e.start_ns) + e.event_id;
            for (const auto& n : frame.nvtx)
              sum += static_cast<uint64_t>(n.start_ns) + n.name.size();
            for (const auto& h : frame.host_ranges)
              sum += static_cast<uint64_t>(h.start_ns) + h.name.size();
            for (const auto& c : frame.collectives)
              sum += static_cast<uint64_t>(c.start_ns) + c.bytes;
            for (const auto& r : frame.rows) sum += static_cast<uint64_t>(r.start_ns);
            return Status::Ok();
          },
          &result);
    });
  }
  benchmark::DoNotOptimize(sum);
  SetEvents(state, file.events);
  state.counters["events_read"] = static_cast<double>(result.events);
}
BENCHMARK(BM_ReadFrames)->Unit(benchmark::kMillisecond);

// The whole reader, compatibility path: ReadPackets with a callback that reads the start time
// and one field of the event (column events are turned into row packets on the way).
void BM_ReadPackets(benchmark::State& state) {
  const TraceFile& file = File();
  uint64_t sum = 0;
  modeler::ReadResult result;
  for (auto _ : state) {
    ReadOrSkip(state, file.path, &result, [&](modeler::TraceReader* reader) {
      return reader->ReadPackets(
          [&sum](const modeler::pb::TracePacket& packet, const modeler::PacketContext& context) {
            sum += static_cast<uint64_t>(context.start_ns);
            if (packet.has_kernel())
              sum += packet.kernel().duration_ns();
            else if (packet.has_api_call())
              sum += packet.api_call().correlation_id();
            return Status::Ok();
          },
          &result);
    });
  }
  benchmark::DoNotOptimize(sum);
  SetEvents(state, file.events);
  state.counters["packets_per_event"] =
      static_cast<double>(result.packets) / static_cast<double>(file.events);
}
BENCHMARK(BM_ReadPackets)->Unit(benchmark::kMillisecond);

// zstd decompression of every frame alone (into a reused buffer).
void BM_Decompress(benchmark::State& state) {
  const TraceFile& file = File();
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::vector<uint8_t> out(4 << 20);
  for (auto _ : state) {
    for (const std::vector<uint8_t>& frame : file.frames) {
      size_t n = ZSTD_decompressDCtx(dctx, out.data(), out.size(), frame.data(), frame.size());
      if (ZSTD_isError(n)) state.SkipWithError(ZSTD_getErrorName(n));
      benchmark::DoNotOptimize(out.data());
    }
  }
  ZSTD_freeDCtx(dctx);
  SetEvents(state, file.events);
}
BENCHMARK(BM_Decompress)->Unit(benchmark::kMillisecond);

// For comparison: each decompressed frame parsed as one `Trace` message on an arena by
// libprotobuf (the tests' oracle; what a reader built on generated code would pay).
void BM_ParseWholeFrames(benchmark::State& state) {
  const TraceFile& file = File();
  uint64_t sum = 0;
  for (auto _ : state) {
    for (const std::vector<uint8_t>& content : file.content) {
      google::protobuf::Arena arena;
      auto* trace = google::protobuf::Arena::CreateMessage<modeler::pb::Trace>(&arena);
      if (!trace->ParseFromArray(content.data(), static_cast<int>(content.size()))) {
        state.SkipWithError("parse failed");
        break;
      }
      sum += static_cast<uint64_t>(trace->packet_size());
    }
  }
  benchmark::DoNotOptimize(sum);
  SetEvents(state, file.events);
}
BENCHMARK(BM_ParseWholeFrames)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lumos::bench
