// Golden traces of released schema versions stay readable (STYLE.md 7.6): one file per minor
// version under tests/data/schema_vX.Y/, written once by lumos_write_golden_trace, never
// regenerated. Reading them checks the reader against bytes an older writer produced.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "modeler/trace/packet_util.h"
#include "modeler/trace/trace_reader.h"
#include "tests/testing/every_packet_kind.h"

namespace lumos::modeler {
namespace {

class GoldenTraceTest : public ::testing::TestWithParam<const char*> {
 protected:
  std::string Path() const {
    return std::string(LUMOS_SOURCE_DIR) + "/tests/data/schema_v" + GetParam() +
           "/every_packet_kind.pb.zst";
  }
};

INSTANTIATE_TEST_SUITE_P(Versions, GoldenTraceTest,
                         ::testing::Values("1.0", "2.0", "2.1", "2.2", "2.3", "2.4"),
                         [](const auto& info) {
                           std::string name = info.param;
                           name[1] = '_';
                           return "Schema" + name;
                         });

TEST_P(GoldenTraceTest, EveryPacketKindReadsAsPackets) {
  std::string path = Path();
  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->header().job_id(), "golden");
  EXPECT_EQ((*reader)->header().rank(), 1);
  EXPECT_EQ((*reader)->header().nccl_version(), "2.28.3");
  std::map<std::string, int> kinds;
  std::map<std::string, int64_t> start_by_name;
  ReadResult result;
  ASSERT_TRUE((*reader)
                  ->ReadPackets(
                      [&](const pb::TracePacket& packet, const PacketContext& context) {
                        ++kinds[std::string(PacketKindName(packet))];
                        if (packet.has_kernel()) {
                          start_by_name[std::string(context.String(packet.kernel().name_iid()))] =
                              context.start_ns;
                        }
                        if (packet.has_api_call()) {
                          // Delta-coded on the wire: 1, 2, 3 in file order.
                          EXPECT_EQ(packet.api_call().correlation_id(),
                                    static_cast<uint64_t>(kinds["api_call"]));
                          start_by_name[std::string(context.String(packet.api_call().name_iid()))] =
                              context.start_ns;
                        }
                        if (packet.has_collective()) {
                          EXPECT_EQ(packet.collective().comm_id(), 0xC0FFEEu);
                          EXPECT_EQ(packet.collective().gpu_duration_ns(), 30'000u);
                        }
                        if (packet.has_sync()) {
                          EXPECT_EQ(packet.sync().cuda_event_sync_id(), 9001u);
                        }
                        return Status::Ok();
                      },
                      &result)
                  .ok());
  EXPECT_TRUE(result.damage.ok());
  EXPECT_TRUE(result.has_trailer);
  for (const char* kind :
       {"header", "frame", "interned", "clock_snapshot", "thread", "capture_window", "nvtx",
        "host_range", "api_call", "kernel", "cuda_event", "sync", "memcpy", "memset", "collective",
        "communicator", "loss", "trailer"}) {
    EXPECT_GT(kinds[kind], 0) << kind;
  }
  EXPECT_EQ(start_by_name["sm90_gemm"], ::lumos::testing::kEveryKindBaseNs + 6'000);
  EXPECT_EQ(start_by_name["cudaStreamWaitEvent"], ::lumos::testing::kEveryKindBaseNs + 7'000);
}

// 2.3: the header names the file's capture window; older files have none (a whole run).
TEST_P(GoldenTraceTest, HeaderNamesTheCaptureWindowFromSchema23) {
  auto reader = TraceReader::Open(Path());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  const pb::TraceHeader& header = (*reader)->header();
  if (std::string(GetParam()) < "2.3") {
    EXPECT_FALSE(header.has_capture_window());
    return;
  }
  ASSERT_TRUE(header.has_capture_window());
  const pb::CaptureWindow& window = header.capture_window();
  EXPECT_EQ(window.trigger(), pb::WINDOW_TRIGGER_ON_DEMAND);
  EXPECT_EQ(window.first_iteration(), 100u);
  EXPECT_EQ(window.iteration_count(), 0u);  // Known only at the close.
  EXPECT_EQ(window.requested_by(), "uid 0 pid 4242 (lumos-ctl)");
  EXPECT_EQ(window.request_id(), 0xFEEDu);
  EXPECT_EQ(window.target(), "iteration % 100 == 0");
  EXPECT_EQ(window.start_realtime_ns(), 1'764'633'600'000'000'000u);
  EXPECT_EQ(window.requested_iterations(), 1u);
}

// The same file through the fast path: schema-1 rows and schema-2 columns give equal structs.
TEST_P(GoldenTraceTest, EveryEventKindReadsAsFrames) {
  auto reader = TraceReader::Open(Path());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  const int64_t t = ::lumos::testing::kEveryKindBaseNs;
  size_t kernels = 0, api_calls = 0, memcpys = 0, memsets = 0, syncs = 0, cuda_events = 0, nvtx = 0,
         host_ranges = 0, collectives = 0;
  std::map<std::string, int> rows;
  ReadResult result;
  ASSERT_TRUE((*reader)
                  ->ReadFrames(
                      [&](const FrameEvents& f) {
                        for (const auto& k : f.kernels) {
                          EXPECT_EQ(k.name, "sm90_gemm");
                          EXPECT_EQ(k.start_ns, t + 6'000);
                          EXPECT_EQ(k.grid, (schema::Dim3{132, 1, 1}));
                          ++kernels;
                        }
                        for (const auto& a : f.api_calls) {
                          // 1, 2, 3 in file order.
                          EXPECT_EQ(a.correlation_id, ++api_calls);
                        }
                        for (const auto& s : f.syncs) {
                          EXPECT_EQ(s.cuda_event_sync_id, 9001u);
                          EXPECT_EQ(s.start_ns, t + 7'000);
                          ++syncs;
                        }
                        for (const auto& c : f.collectives) {
                          EXPECT_EQ(c.comm_id, 0xC0FFEEu);
                          EXPECT_EQ(c.gpu_duration_ns, 30'000u);
                          EXPECT_EQ(c.root_rank, -1);
                          ++collectives;
                        }
                        for (const auto& n : f.nvtx) {
                          EXPECT_EQ(n.name, "step 0");
                          ++nvtx;
                        }
                        memcpys += f.memcpys.size();
                        memsets += f.memsets.size();
                        cuda_events += f.cuda_events.size();
                        host_ranges += f.host_ranges.size();
                        for (const RowPacket& r : f.rows)
                          ++rows[std::string(PacketKindName(*r.packet))];
                        return Status::Ok();
                      },
                      &result)
                  .ok());
  EXPECT_TRUE(result.damage.ok());
  EXPECT_EQ(kernels, 1u);
  EXPECT_EQ(api_calls, 3u);
  EXPECT_EQ(memcpys, 1u);
  EXPECT_EQ(memsets, 1u);
  EXPECT_EQ(syncs, 1u);
  EXPECT_EQ(cuda_events, 1u);
  EXPECT_EQ(nvtx, 1u);
  EXPECT_EQ(host_ranges, 1u);
  EXPECT_EQ(collectives, 1u);
  for (const char* kind : {"header", "clock_snapshot", "thread", "capture_window", "communicator",
                           "loss", "trailer"}) {
    EXPECT_GT(rows[kind], 0) << kind;
  }
  EXPECT_EQ(rows.count("frame"), 0u);  // Bookkeeping stays inside the reader.
  EXPECT_EQ(rows.count("interned"), 0u);
}

// Trailer.rank/world_size (2.1): present from 2.1 on, absent (not 0) in older files.
TEST_P(GoldenTraceTest, TrailerRankFromSchema21) {
  auto reader = TraceReader::Open(Path());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  ReadResult result;
  ASSERT_TRUE((*reader)->ReadFrames([](const FrameEvents&) { return Status::Ok(); }, &result).ok());
  ASSERT_TRUE(result.has_trailer);
  const std::string version = GetParam();
  const bool v21 = version >= "2.1";
  EXPECT_EQ((*reader)->header().schema_minor(), static_cast<uint32_t>(version[2] - '0'));
  EXPECT_EQ(result.trailer.has_rank(), v21);
  EXPECT_EQ(result.trailer.has_world_size(), v21);
  if (v21) {
    EXPECT_EQ(result.trailer.rank(), 1);
    EXPECT_EQ(result.trailer.world_size(), 2);
  }
}

// GemmCall (2.2): in the 2.2 file, field by field, through both read paths; none before (an
// older file reads as it always did).
TEST_P(GoldenTraceTest, GemmCallFromSchema22) {
  const bool v22 = std::string(GetParam()) >= "2.2";
  auto reader = TraceReader::Open(Path());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  std::vector<schema::GemmCallEvent> calls;
  std::vector<std::string> call_names;
  ReadResult result;
  ASSERT_TRUE((*reader)
                  ->ReadFrames(
                      [&](const FrameEvents& f) {
                        calls.insert(calls.end(), f.gemm_calls.begin(), f.gemm_calls.end());
                        // Names point into the frame: kept as copies.
                        for (const auto& g : f.gemm_calls) call_names.emplace_back(g.name);
                        return Status::Ok();
                      },
                      &result)
                  .ok());
  ASSERT_EQ(calls.size(), v22 ? 2u : 0u);
  if (v22) {
    const schema::GemmCallEvent& g = calls[0];
    EXPECT_EQ(g.start_ns, ::lumos::testing::kEveryKindBaseNs + 1'800);
    EXPECT_EQ(g.duration_ns, 4'000u);
    EXPECT_EQ(g.thread_id, 11u);
    EXPECT_EQ(g.api, schema::GemmApi::kCublasltMatmul);
    EXPECT_EQ(g.m, 4096u);
    EXPECT_EQ(g.n, 1024u);
    EXPECT_EQ(g.k, 8192u);
    EXPECT_EQ(g.batch_count, 1u);
    EXPECT_EQ(g.transa, schema::GemmTranspose::kT);
    EXPECT_EQ(g.a_type, schema::DataType::kBfloat16);
    EXPECT_EQ(g.compute_type, schema::GemmComputeType::kFloat32);
    EXPECT_EQ(g.stream_id, 7u);
    EXPECT_EQ(g.heads, 0u);
    EXPECT_EQ(g.mask, schema::AttentionMask::kUnspecified);
    // The imported attention problem: its name, ids and the attention fields.
    const schema::GemmCallEvent& a = calls[1];
    EXPECT_EQ(a.start_ns, ::lumos::testing::kEveryKindBaseNs + 60'000);
    EXPECT_EQ(a.api, schema::GemmApi::kFrameworkAttention);
    EXPECT_EQ(call_names[1], "aten::_flash_attention_forward");
    EXPECT_EQ(call_names[0], "");
    EXPECT_EQ(a.m, 1024u);
    EXPECT_EQ(a.n, 1024u);
    EXPECT_EQ(a.k, 128u);
    EXPECT_EQ(a.batch_count, 32u);
    EXPECT_EQ(a.external_id, 12u);
    EXPECT_EQ(a.correlation_id, 99u);
    EXPECT_EQ(a.heads, 16u);
    EXPECT_EQ(a.kv_heads, 8u);
    EXPECT_EQ(a.head_dim_v, 128u);
    EXPECT_EQ(a.mask, schema::AttentionMask::kCausal);
  }
  auto again = TraceReader::Open(Path());
  ASSERT_TRUE(again.ok());
  std::vector<pb::GemmCall> rows;
  std::vector<int64_t> starts;
  std::vector<std::string> names;
  ASSERT_TRUE((*again)
                  ->ReadPackets(
                      [&](const pb::TracePacket& packet, const PacketContext& context) {
                        if (!packet.has_gemm_call()) return Status::Ok();
                        rows.push_back(packet.gemm_call());
                        starts.push_back(context.start_ns);
                        names.emplace_back(context.String(packet.gemm_call().name_iid()));
                        return Status::Ok();
                      },
                      &result)
                  .ok());
  ASSERT_EQ(rows.size(), v22 ? 2u : 0u);
  if (v22) {
    EXPECT_EQ(rows[0].m(), 4096u);
    EXPECT_EQ(starts[0], ::lumos::testing::kEveryKindBaseNs + 1'800);
    EXPECT_EQ(rows[1].api(), pb::GEMM_API_FRAMEWORK_ATTENTION);
    EXPECT_EQ(rows[1].heads(), 16u);
    EXPECT_EQ(rows[1].kv_heads(), 8u);
    EXPECT_EQ(rows[1].head_dim_v(), 128u);
    EXPECT_EQ(rows[1].mask(), pb::ATTENTION_MASK_CAUSAL);
    EXPECT_EQ(names[1], "aten::_flash_attention_forward");
    EXPECT_EQ(starts[1], ::lumos::testing::kEveryKindBaseNs + 60'000);
  }
}

// 2.4: the trailer names the device and versions the header could not; older files have none.
TEST_P(GoldenTraceTest, TrailerNamesTheDeviceFromSchema24) {
  auto reader = TraceReader::Open(Path());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  ReadResult result;
  ASSERT_TRUE(
      (*reader)
          ->ReadPackets([](const pb::TracePacket&, const PacketContext&) { return Status::Ok(); },
                        &result)
          .ok());
  ASSERT_TRUE(result.has_trailer);
  if (std::string(GetParam()) < "2.4") {
    EXPECT_EQ(result.trailer.devices_size(), 0);
    return;
  }
  ASSERT_EQ(result.trailer.devices_size(), 1);
  EXPECT_EQ(result.trailer.devices(0).name(), "NVIDIA H200");
  EXPECT_EQ(result.trailer.devices(0).sm_count(), 132u);
  EXPECT_EQ(result.trailer.devices(0).compute_major(), 9u);
  EXPECT_EQ(result.trailer.devices(0).pci_bus_id(), "0000:18:00.0");
  EXPECT_EQ(result.trailer.cuda_driver_version(), 13000u);
  EXPECT_EQ(result.trailer.nccl_version(), "2.28.9");
}

}  // namespace
}  // namespace lumos::modeler
