// The defaults hold a launch-bound loop's rate (agent/core/thread_rings.h: a ring filled to half
// wakes the writer). Its own binary: the agent starts once per process, and
// agent_runtime_test.cc starts it with other settings.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/runtime/agent_runtime.h"
#include "modeler/trace/trace_reader.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

// The defaults hold a launch-bound loop on a fast GPU: the H200's 8-layer loop (est-layers.pb.zst)
// made about 2,000 records per 27-ms step, 80,000 in its 40 steps, and lost 18,316 to full rings
// with the 1 MiB ring drained every second. A ring filled to half wakes the writer now: the same
// rate from one thread, with every default, loses nothing (scripts/test.sh runs this on one busy
// core too).
TEST(AgentRuntimeTest, TheDefaultsKeepALaunchBoundLoopsRate) {
  lumos::testing::TempDir dir;
  setenv("LUMOS_OUTPUT_DIR", dir.path().c_str(), 1);
  Agent& agent = Agent::Get();
  ASSERT_TRUE(agent.Start());
  ASSERT_EQ(agent.config().ring_bytes, uint64_t{1} << 20);
  ASSERT_EQ(agent.config().flush_interval_ms, 1000u);
  constexpr int kSteps = 40, kPerStep = 2'000;
  for (int step = 0; step < kSteps; ++step) {
    for (int i = 0; i < kPerStep; ++i) {
      Record record{};
      record.kind = RecordKind::kApiCall;
      record.start_ns = MonotonicNowNs();
      record.end_ns = record.start_ns + 1;
      ASSERT_TRUE(agent.rings()->Push(record)) << "step " << step << " record " << i;
    }
    usleep(27'000);
  }
  agent.Stop();
  int api_calls = 0, losses = 0;
  auto reader = modeler::TraceReader::Open(agent.trace_path());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  modeler::ReadResult result;
  Status status = (*reader)->ReadPackets(
      [&](const modeler::pb::TracePacket& packet, const modeler::PacketContext&) {
        if (packet.has_api_call()) ++api_calls;
        // (CHANNEL_FAILED records say the process never ran CUDA or NCCL: no record lost.)
        if (packet.has_loss() &&
            packet.loss().source() != modeler::pb::LOSS_SOURCE_CHANNEL_FAILED) {
          ++losses;
        }
        return Status::Ok();
      },
      &result);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(api_calls, kSteps * kPerStep);
  EXPECT_EQ(losses, 0);
}

}  // namespace
}  // namespace lumos::agent
