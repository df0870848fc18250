#include "agent/runtime/agent_runtime.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "modeler/trace/trace_reader.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

TEST(AgentRuntimeTest, TraceFileNameHasJobHostPidRank) {
  RankInfo rank;
  rank.rank = 3;
  EXPECT_EQ(TraceFileName("job42", "node-a", 123, rank), "job42.node-a.123.rank3.pb.zst");
}

TEST(AgentRuntimeTest, TraceFileNameOmitsUnknownJobAndRank) {
  EXPECT_EQ(TraceFileName("", "node-a", 7, RankInfo{}), "node-a.7.norank.pb.zst");
}

TEST(AgentRuntimeTest, TraceFileNameKeepsOnePathComponent) {
  RankInfo rank;
  rank.rank = 0;
  EXPECT_EQ(TraceFileName("a/../b c", "", 1, rank), "a_.._b_c.unknown.1.rank0.pb.zst");
}

TEST(AgentRuntimeTest, MonotonicClockAdvances) {
  const int64_t first = MonotonicNowNs();
  const int64_t second = MonotonicNowNs();
  EXPECT_GT(first, 0);
  EXPECT_GE(second, first);
}

// A signal's flush (FlushFromSignal, as the SIGTERM/SIGINT handler asks for it) writes out
// everything the rings hold, more than one writer pass takes (Agent::kMaxDrainPerRing): 70,000
// records in one ring, pushed while the writer sleeps (the longest flush interval, no fast-clock
// refinements), are all in the file once the flush is done (it used to write 65,536). The wait
// is long, so however late the writer runs, the flush is over when the file is read. The agent
// starts once per process: the only test here that starts it.
TEST(AgentRuntimeTest, SignalFlushWritesEverythingTheRingsHold) {
  lumos::testing::TempDir dir;
  setenv("LUMOS_OUTPUT_DIR", dir.path().c_str(), 1);
  setenv("LUMOS_RING_BYTES", "8M", 1);
  setenv("LUMOS_FLUSH_INTERVAL_MS", "60000", 1);
  setenv("LUMOS_CLOCK", "monotonic", 1);
  Agent& agent = Agent::Get();
  ASSERT_TRUE(agent.Start());
  constexpr int kRecords = 70'000;
  static_assert(kRecords > Agent::kMaxDrainPerRing);
  for (int i = 0; i < kRecords; ++i) {
    Record record{};
    record.kind = RecordKind::kApiCall;
    record.start_ns = 1000 + i;
    record.end_ns = 1001 + i;
    ASSERT_TRUE(agent.rings()->Push(record)) << i;
  }
  ASSERT_TRUE(agent.FlushFromSignal(/*finish=*/false, /*timeout_ns=*/60'000'000'000));
  const std::string path = agent.trace_path();
  int api_calls = 0;
  {
    auto reader = modeler::TraceReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    modeler::ReadResult result;
    Status status = (*reader)->ReadPackets(
        [&](const modeler::pb::TracePacket& packet, const modeler::PacketContext&) {
          if (packet.has_api_call()) ++api_calls;
          return Status::Ok();
        },
        &result);
    EXPECT_TRUE(status.ok()) << status.message();
  }
  agent.Stop();
  EXPECT_EQ(api_calls, kRecords);
}

}  // namespace
}  // namespace lumos::agent
