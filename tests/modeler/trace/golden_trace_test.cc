// Golden traces of released schema versions stay readable (STYLE.md 7.6): one file per minor
// version under tests/data/schema_vX.Y/, written once by lumos_write_golden_trace, never
// regenerated. Reading them checks the reader against bytes an older writer produced.
#include <gtest/gtest.h>

#include <map>

#include "modeler/trace/packet_util.h"
#include "modeler/trace/trace_reader.h"
#include "tests/testing/every_packet_kind.h"

namespace lumos::modeler {
namespace {

TEST(GoldenTraceTest, Schema1_0EveryPacketKindReads) {
  std::string path =
      std::string(LUMOS_SOURCE_DIR) + "/tests/data/schema_v1.0/every_packet_kind.pb.zst";
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

}  // namespace
}  // namespace lumos::modeler
