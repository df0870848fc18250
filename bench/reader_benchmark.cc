// Reader-side benchmarks on one core, over a trace of the synthetic event mix written once
// (zstd 3, 1 MiB frames) under $TMPDIR: the whole TraceReader path (Open + ReadPackets, a
// callback that touches a field of every packet), and its parts: zstd decompression alone,
// and libprotobuf parsing of the decompressed packets alone. Target (docs/performance.md):
// >= 20 M events/s through TraceReader.
#include <benchmark/benchmark.h>
#include <google/protobuf/arena.h>
#include <zstd.h>

#include <algorithm>
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
    StatusOr<agent::WriterStats> stats = WriteTrace(f->path, mix.header, mix.events, {});
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

// The whole reader: Open (validates the preamble, reads the header), then ReadPackets with a
// callback that reads the start time and one field of the event.
void BM_ReadTrace(benchmark::State& state) {
  const TraceFile& file = File();
  uint64_t sum = 0;
  modeler::ReadResult result;
  for (auto _ : state) {
    StatusOr<std::unique_ptr<modeler::TraceReader>> reader = modeler::TraceReader::Open(file.path);
    if (!reader.ok()) {
      state.SkipWithError(reader.status().message().c_str());
      break;
    }
    Status status = (*reader)->ReadPackets(
        [&sum](const modeler::pb::TracePacket& packet, const modeler::PacketContext& context) {
          sum += static_cast<uint64_t>(context.start_ns);
          if (packet.has_kernel())
            sum += packet.kernel().duration_ns();
          else if (packet.has_api_call())
            sum += packet.api_call().correlation_id();
          return Status::Ok();
        },
        &result);
    if (!status.ok() || !result.damage.ok()) {
      state.SkipWithError("read failed");
      break;
    }
  }
  benchmark::DoNotOptimize(sum);
  SetEvents(state, file.events);
  state.counters["packets_per_event"] =
      static_cast<double>(result.packets) / static_cast<double>(file.events);
}
BENCHMARK(BM_ReadTrace)->Unit(benchmark::kMillisecond);

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

// Splitting decompressed frames into packets and parsing each with libprotobuf, as the
// reader does (one arena per frame, one TracePacket reused per packet).
void BM_ParsePackets(benchmark::State& state) {
  const TraceFile& file = File();
  google::protobuf::Arena arena;
  uint64_t sum = 0;
  for (auto _ : state) {
    for (const std::vector<uint8_t>& content : file.content) {
      arena.Reset();
      auto* packet = google::protobuf::Arena::CreateMessage<modeler::pb::TracePacket>(&arena);
      const uint8_t* p = content.data();
      const uint8_t* end = p + content.size();
      while (p < end) {
        // Tag 0x0A, then a varint length.
        ++p;
        uint64_t length = 0;
        for (int shift = 0; p < end; shift += 7) {
          uint8_t b = *p++;
          length |= static_cast<uint64_t>(b & 0x7F) << shift;
          if ((b & 0x80) == 0) break;
        }
        if (!packet->ParseFromArray(p, static_cast<int>(length))) {
          state.SkipWithError("parse failed");
          break;
        }
        sum += packet->start_delta_ns();
        p += length;
      }
    }
  }
  benchmark::DoNotOptimize(sum);
  SetEvents(state, file.events);
}
BENCHMARK(BM_ParsePackets)->Unit(benchmark::kMillisecond);

// A protozero-style decoder over the same bytes, for comparison (a prototype, not the reader):
// no message objects; each packet's event fields are decoded into a flat table indexed by
// field number, which is all the modeler needs from the hot kinds.
struct LitePacket {
  int64_t start_delta_ns = 0;
  uint32_t kind = 0;              // TracePacket oneof field number.
  uint64_t value[24] = {};        // Varint fields of the event, by field number (< 24).
  const uint8_t* bytes[24] = {};  // Length-delimited fields (strings), by field number.
  uint32_t size[24] = {};
};

inline bool LiteVarint(const uint8_t** p, const uint8_t* end, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

// Decodes the fields of one message at [p, end) into `out`; false on malformed input.
inline bool LiteFields(const uint8_t* p, const uint8_t* end, LitePacket* out) {
  while (p < end) {
    uint64_t tag = 0, v = 0;
    if (!LiteVarint(&p, end, &tag)) return false;
    uint32_t field = static_cast<uint32_t>(tag >> 3);
    switch (tag & 7) {
      case 0:
        if (!LiteVarint(&p, end, &v)) return false;
        if (field < 24) out->value[field] = v;
        break;
      case 2:
        if (!LiteVarint(&p, end, &v) || v > static_cast<uint64_t>(end - p)) return false;
        if (field < 24) {
          out->bytes[field] = p;
          out->size[field] = static_cast<uint32_t>(v);
        }
        p += v;
        break;
      case 1:
        if (end - p < 8) return false;
        p += 8;
        break;
      case 5:
        if (end - p < 4) return false;
        p += 4;
        break;
      default:
        return false;
    }
  }
  return true;
}

void BM_DecodePacketsLite(benchmark::State& state) {
  const TraceFile& file = File();
  uint64_t sum = 0;
  LitePacket packet;
  for (auto _ : state) {
    for (const std::vector<uint8_t>& content : file.content) {
      const uint8_t* p = content.data();
      const uint8_t* end = p + content.size();
      int64_t last_ns = 0;
      while (p < end) {
        uint64_t tag = 0, length = 0;
        if (!LiteVarint(&p, end, &tag) || !LiteVarint(&p, end, &length) ||
            length > static_cast<uint64_t>(end - p)) {
          state.SkipWithError("malformed");
          return;
        }
        const uint8_t* packet_end = p + length;
        packet.kind = 0;
        while (p < packet_end) {  // TracePacket: start_delta_ns, clock_id, one event.
          uint64_t ptag = 0, v = 0;
          if (!LiteVarint(&p, packet_end, &ptag) || !LiteVarint(&p, packet_end, &v)) break;
          if ((ptag & 7) == 0) {
            if ((ptag >> 3) == 1) packet.start_delta_ns = static_cast<int64_t>((v >> 1) ^ -(v & 1));
            continue;
          }
          if (v > static_cast<uint64_t>(packet_end - p)) break;
          packet.kind = static_cast<uint32_t>(ptag >> 3);
          std::fill(std::begin(packet.value), std::end(packet.value), 0);
          if (!LiteFields(p, p + v, &packet)) break;
          p += v;
        }
        p = packet_end;
        last_ns += packet.start_delta_ns;
        sum += static_cast<uint64_t>(last_ns) + packet.value[1];
      }
    }
  }
  benchmark::DoNotOptimize(sum);
  SetEvents(state, file.events);
}
BENCHMARK(BM_DecodePacketsLite)->Unit(benchmark::kMillisecond);

// For comparison: each decompressed frame parsed as one `Trace` message on an arena (what a
// reader that materialises whole frames would pay).
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
