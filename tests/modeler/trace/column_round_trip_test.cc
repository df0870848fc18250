// Schema-2 columns end to end: random events of every frequent kind (GEMM calls of 2.2 too) (every
// field random, names from a pool with long and non-UTF-8 ones, times going backwards and to the
// int64 limits) through the real TraceFileWriter, read back
//   * with ReadFrames: equal, field by field, to what was written, kind by kind in order;
//   * with ReadPackets: packet for packet equal to the reflection oracle's expansion of the
//     same frames (tests/testing/column_oracle.h), so the hand-written decoder and libprotobuf
//     agree on every byte.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "modeler/trace/trace_reader.h"
#include "schema/format.h"
#include "schema/writer/column_encoder.h"
#include "schema/writer/trace_file_writer.h"
#include "tests/testing/column_oracle.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::TempDir;
using namespace ::lumos::schema;  // NOLINT(google-build-using-namespace): the event structs.

// Everything written, per kind, in order. Names point into Generator::Names().
struct Written {
  std::vector<KernelEvent> kernels;
  std::vector<ApiCallEvent> api_calls;
  std::vector<MemcpyEvent> memcpys;
  std::vector<MemsetEvent> memsets;
  std::vector<SyncEvent> syncs;
  std::vector<CudaEventRecordEvent> cuda_events;
  std::vector<NvtxEvent> nvtx;
  std::vector<HostRangeEvent> host_ranges;
  std::vector<CollectiveEvent> collectives;
  std::vector<GemmCallEvent> gemm_calls;
  uint64_t rows = 0;  // Timed row events (loss, windows, communicators).
};

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  // Outlives every generator: the written events keep views of these.
  static const std::vector<std::string>& Names() {
    static const std::vector<std::string> names = {"sm90_xmma_gemm_bf16bf16_bf16f32",
                                                   "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
                                                   std::string(3000, 'k'),
                                                   "aten::mm",
                                                   "forward",
                                                   std::string("caf\xe9", 4),
                                                   "cudaLaunchKernel",
                                                   "megatron"};
    return names;
  }

  uint64_t U64() {
    switch (rng_() % 4) {
      case 0:
        return 0;
      case 1:
        return rng_() % 4;
      case 2:
        return rng_() % 100000;
      default:
        return rng_();
    }
  }
  uint32_t U32() { return static_cast<uint32_t>(U64()); }
  template <typename E>
  E Enum(int max) {
    return static_cast<E>(rng_() % (max + 1));
  }
  std::string_view Name() {
    const auto& names = Names();
    return rng_() % 5 == 0 ? std::string_view() : std::string_view(names[rng_() % names.size()]);
  }
  int64_t Start() {
    switch (rng_() % 50) {
      case 0:
        last_start_ = std::numeric_limits<int64_t>::min();
        break;
      case 1:
        last_start_ = std::numeric_limits<int64_t>::max();
        break;
      case 2:
        time_ -= 1'000'000;  // Backwards.
        last_start_ = time_;
        break;
      default:
        time_ += static_cast<int64_t>(rng_() % 5000);
        last_start_ = time_;
    }
    return last_start_;
  }
  // Any duration, but one that ends inside the int64 range from the last Start() (the reader
  // refuses an event that does not; see ColumnDamageTest). Braced initialisers evaluate left to
  // right, so Duration() right after Start() sees that start.
  uint64_t Duration() {
    const uint64_t d = U64();
    const uint64_t most =
        static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(std::max<int64_t>(last_start_, 0));
    return std::min(d, most);
  }
  int32_t Rank() { return rng_() % 3 == 0 ? -1 : static_cast<int32_t>(rng_() % 1024); }
  bool Bool() { return rng_() % 2 == 0; }
  uint64_t Pick(uint64_t n) { return rng_() % n; }

 private:
  std::mt19937_64 rng_;
  int64_t time_ = 1'700'000'000'000'000'000;
  int64_t last_start_ = 0;
};

void AddRandomEvent(Generator& g, TraceFileWriter* writer, Written* w) {
  switch (g.Pick(12)) {
    case 0: {
      KernelEvent e{g.Start(),
                    g.Duration(),
                    g.U64(),
                    g.U64(),
                    g.Name(),
                    g.U32(),
                    {g.U32(), g.U32(), g.U32()},
                    {g.U32(), g.U32(), g.U32()},
                    {g.U32(), g.U32(), g.U32()},
                    g.U32(),
                    g.U32(),
                    g.U32(),
                    g.U32(),
                    g.U64(),
                    g.U64(),
                    g.Enum<LaunchType>(3),
                    g.U64()};
      writer->Add(e);
      w->kernels.push_back(e);
      break;
    }
    case 1: {
      ApiCallEvent e{g.Start(),
                     g.Duration(),
                     g.U32(),
                     g.U64(),
                     g.Enum<ApiKind>(16),
                     g.U32(),
                     g.Name(),
                     g.U64(),
                     g.U64(),
                     g.Enum<ApiDomain>(2),
                     g.U64(),
                     g.U64(),
                     static_cast<int32_t>(g.U32())};
      writer->Add(e);
      w->api_calls.push_back(e);
      break;
    }
    case 2: {
      MemcpyEvent e{g.Start(),
                    g.Duration(),
                    g.U64(),
                    g.U64(),
                    g.U64(),
                    g.Enum<CopyKind>(5),
                    g.U32(),
                    g.Enum<MemoryKind>(5),
                    g.Enum<MemoryKind>(5),
                    g.U32(),
                    g.U32(),
                    g.U32(),
                    g.U64(),
                    g.U64()};
      writer->Add(e);
      w->memcpys.push_back(e);
      break;
    }
    case 3: {
      MemsetEvent e{g.Start(), g.Duration(),          g.U64(), g.U64(), g.U64(), g.U32(),
                    g.U32(),   g.Enum<MemoryKind>(5), g.U32(), g.U64(), g.U64()};
      writer->Add(e);
      w->memsets.push_back(e);
      break;
    }
    case 4: {
      SyncEvent e{g.Start(), g.Duration(), g.Enum<SyncType>(4),
                  g.U64(),   g.U64(),      g.U64(),
                  g.U64(),   g.U64(),      g.U64(),
                  g.U32(),   g.U32(),      g.U32(),
                  g.U64()};
      writer->Add(e);
      w->syncs.push_back(e);
      break;
    }
    case 5: {
      CudaEventRecordEvent e{g.Start(), g.U64(), g.U64(), g.U64(),
                             g.U64(),   g.U32(), g.U32(), g.Bool()};
      writer->Add(e);
      w->cuda_events.push_back(e);
      break;
    }
    case 6: {
      NvtxEvent e{g.Start(), g.Duration(), g.U32(), g.Name(), g.Name(), g.Enum<NvtxKind>(3),
                  g.U32(),   g.U32(),      g.U32(), g.U64(),  g.U32()};
      writer->Add(e);
      w->nvtx.push_back(e);
      break;
    }
    case 7: {
      HostRangeEvent e{g.Start(), g.Duration(), g.U32(), g.Name(), g.Enum<HostRangeCategory>(6),
                       g.U64(),   g.U64(),      g.U32(), g.U64(),  g.U32()};
      e.has_step_number = g.Bool();
      e.step_number = e.has_step_number ? static_cast<int64_t>(g.U64()) : 0;
      writer->Add(e);
      w->host_ranges.push_back(e);
      break;
    }
    case 8: {
      CollectiveEvent e{g.Start(),
                        g.Duration(),
                        g.U64(),
                        g.U64(),
                        g.Enum<CollectiveOp>(11),
                        g.U64(),
                        g.Enum<DataType>(12),
                        g.U64(),
                        g.Rank(),
                        g.Rank(),
                        g.U64(),
                        static_cast<int64_t>(g.U64()),
                        g.U64(),
                        g.Enum<NcclAlgorithm>(7),
                        g.Enum<NcclProtocol>(3),
                        g.U32(),
                        g.U32(),
                        g.Enum<ReduceOp>(5),
                        g.U64(),
                        g.U32(),
                        g.U32(),
                        g.Bool()};
      writer->Add(e);
      w->collectives.push_back(e);
      break;
    }
    case 9: {
      GemmCallEvent e{g.Start(),
                      g.Duration(),
                      g.U32(),
                      g.Enum<GemmApi>(10),
                      g.U64(),
                      g.U64(),
                      g.U64(),
                      g.U64(),
                      g.Enum<GemmTranspose>(4),
                      g.Enum<GemmTranspose>(4),
                      g.Enum<DataType>(19),
                      g.Enum<DataType>(19),
                      g.Enum<DataType>(19),
                      g.Enum<DataType>(19),
                      g.Enum<GemmComputeType>(13),
                      g.Enum<GemmMathMode>(6),
                      g.U64(),
                      static_cast<int32_t>(g.U32()),
                      g.Name(),
                      g.U64(),
                      g.U64(),
                      g.U32(),
                      g.U32(),
                      g.U64(),
                      g.Enum<AttentionMask>(3)};
      writer->Add(e);
      w->gemm_calls.push_back(e);
      break;
    }
    case 10:
      writer->Add(LossEvent{g.Start(), g.Duration(), LossSource::kRingFull, g.U64(), g.U32(), "x"});
      ++w->rows;
      break;
    default:
      writer->Add(CaptureWindowEvent{g.Start(), g.Duration(), g.U64(), WindowTrigger::kPeriodic});
      ++w->rows;
      break;
  }
}

// Writes `count` random events with frames of about frame_bytes; returns what was written.
Written WriteRandomTrace(const std::string& path, uint64_t seed, int count,
                         uint64_t frame_bytes = 16 << 10) {
  WriterOptions options;
  options.frame_bytes = frame_bytes;
  auto writer = TraceFileWriter::Create(path, ::lumos::testing::SampleHeader(), options);
  EXPECT_TRUE(writer.ok());
  Written w;
  Generator g(seed);
  for (int i = 0; i < count; ++i) AddRandomEvent(g, writer->get(), &w);
  EXPECT_TRUE((*writer)->Close(0).ok());
  return w;
}

// Compares the events of one kind read in a frame with the next ones written.
template <typename Event>
void ExpectNext(const EventList<Event>& read, const std::vector<Event>& written, size_t* next,
                const char* kind) {
  for (const Event& e : read) {
    ASSERT_LT(*next, written.size()) << kind << ": more events read than written";
    EXPECT_TRUE(e == written[*next]) << kind << " " << *next << " differs";
    ++*next;
  }
}

TEST(ColumnRoundTripTest, ReadFramesGivesBackEveryFieldOfEveryEvent) {
  TempDir dir;
  // Small frames (many of them), and 4 MiB frames: one frame whose kinds each span several
  // of the writer's chunks (ColumnEncoder::kChunk events).
  for (uint64_t seed : {1u, 2u, 3u, 4u}) {
    std::string path = dir.File("t" + std::to_string(seed) + ".pb.zst");
    const uint64_t frame_bytes = seed == 4 ? 4 << 20 : 16 << 10;
    const int events = seed == 4 ? 40000 : 20000;
    Written w = WriteRandomTrace(path, seed, events, frame_bytes);
    if (seed == 4) {
      ASSERT_GT(w.kernels.size(), 2 * ColumnEncoder::kChunk);
    }
    auto reader = TraceReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    EXPECT_EQ((*reader)->schema_major(), schema::kSchemaMajor);
    size_t k = 0, a = 0, mc = 0, ms = 0, s = 0, ce = 0, n = 0, h = 0, c = 0, gm = 0;
    uint64_t timed_rows = 0, frames = 0;
    ReadResult result;
    Status status = (*reader)->ReadFrames(
        [&](const FrameEvents& f) {
          EXPECT_EQ(f.frame_index, frames++);
          ExpectNext(f.kernels, w.kernels, &k, "kernel");
          ExpectNext(f.api_calls, w.api_calls, &a, "api_call");
          ExpectNext(f.memcpys, w.memcpys, &mc, "memcpy");
          ExpectNext(f.memsets, w.memsets, &ms, "memset");
          ExpectNext(f.syncs, w.syncs, &s, "sync");
          ExpectNext(f.cuda_events, w.cuda_events, &ce, "cuda_event");
          ExpectNext(f.nvtx, w.nvtx, &n, "nvtx");
          ExpectNext(f.host_ranges, w.host_ranges, &h, "host_range");
          ExpectNext(f.collectives, w.collectives, &c, "collective");
          ExpectNext(f.gemm_calls, w.gemm_calls, &gm, "gemm_call");
          for (const RowPacket& row : f.rows) timed_rows += row.packet->has_start_delta_ns();
          return Status::Ok();
        },
        &result);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_TRUE(result.damage.ok()) << result.damage.message();
    EXPECT_TRUE(result.has_trailer);
    EXPECT_EQ(k, w.kernels.size());
    EXPECT_EQ(a, w.api_calls.size());
    EXPECT_EQ(mc, w.memcpys.size());
    EXPECT_EQ(ms, w.memsets.size());
    EXPECT_EQ(s, w.syncs.size());
    EXPECT_EQ(ce, w.cuda_events.size());
    EXPECT_EQ(n, w.nvtx.size());
    EXPECT_EQ(h, w.host_ranges.size());
    EXPECT_EQ(c, w.collectives.size());
    EXPECT_EQ(gm, w.gemm_calls.size());
    EXPECT_GT(gm, 0u);
    EXPECT_EQ(timed_rows, w.rows);
    EXPECT_EQ(result.events, static_cast<uint64_t>(events));
    EXPECT_EQ(result.trailer.events_written(), static_cast<uint64_t>(events));
    EXPECT_EQ(result.frames, frames);
    if (seed == 4) {
      EXPECT_EQ(frames, 2u);  // The header, then every event and the trailer.
    } else {
      EXPECT_GT(frames, 5u);
    }
  }
}

// The frames of a file, decompressed (the preamble skipped).
std::vector<std::string> DecompressedFrames(const std::string& path) {
  std::string bytes = ::lumos::testing::ReadFileBytes(path);
  std::vector<std::string> frames;
  size_t pos = schema::kPreambleBytes;
  while (pos < bytes.size()) {
    size_t n = ZSTD_findFrameCompressedSize(bytes.data() + pos, bytes.size() - pos);
    EXPECT_FALSE(ZSTD_isError(n));
    if (ZSTD_isError(n)) break;
    std::string out(ZSTD_getFrameContentSize(bytes.data() + pos, n), '\0');
    size_t got = ZSTD_decompress(out.data(), out.size(), bytes.data() + pos, n);
    EXPECT_FALSE(ZSTD_isError(got));
    out.resize(ZSTD_isError(got) ? 0 : got);
    frames.push_back(std::move(out));
    pos += n;
  }
  return frames;
}

TEST(ColumnRoundTripTest, ReadPacketsMatchesTheReflectionOracle) {
  TempDir dir;
  std::string path = dir.File("t.pb.zst");
  WriteRandomTrace(path, 7, 20000);
  std::vector<pb::TracePacket> expected;
  for (const std::string& frame : DecompressedFrames(path)) {
    pb::Trace trace;
    ASSERT_TRUE(trace.ParseFromString(frame));
    pb::Trace rows = ::lumos::testing::ExpandColumns(trace);
    for (const pb::TracePacket& p : rows.packet()) expected.push_back(p);
  }
  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.ok());
  size_t index = 0;
  ReadResult result;
  ASSERT_TRUE((*reader)
                  ->ReadPackets(
                      [&](const pb::TracePacket& packet, const PacketContext&) {
                        EXPECT_LT(index, expected.size());
                        if (index >= expected.size()) return Status::Error("too many");
                        std::string diff;
                        google::protobuf::util::MessageDifferencer differencer;
                        differencer.ReportDifferencesToString(&diff);
                        EXPECT_TRUE(differencer.Compare(expected[index], packet))
                            << "packet " << index << ": " << diff;
                        ++index;
                        return Status::Ok();
                      },
                      &result)
                  .ok());
  EXPECT_EQ(index, expected.size());
  EXPECT_EQ(result.packets, expected.size());
  // 2 of the 11 random kinds are rows; the 9 others share a column packet per frame.
  EXPECT_LT(result.stored_packets, result.packets / 4);
}

}  // namespace
}  // namespace lumos::modeler
