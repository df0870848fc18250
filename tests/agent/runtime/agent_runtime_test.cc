#include "agent/runtime/agent_runtime.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lumos::agent
