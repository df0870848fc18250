// diff's host pace (modeler/diff/host_pace.h): hand-built call sequences whose pace is worked
// out by hand, and two real runs of the H200 loop whose hosts ran at different paces.
#include "modeler/diff/host_pace.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <vector>

#include "tests/testing/run_command.h"

namespace lumos::modeler::diff {
namespace {

using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;

// One thread: `n` launches, the i-th `gap_us[i % size]` µs after the previous one.
HostCallSequence Sequence(size_t n, const std::vector<int64_t>& gap_us, double scale = 1) {
  HostCallSequence s;
  for (size_t i = 0; i < n; ++i) {
    s.keys.push_back(i % 7 == 3 ? "cudaMemsetAsync memset" : "cudaLaunchKernel elementwise");
    s.gap_ns.push_back(i == 0 ? 0
                              : static_cast<int64_t>(
                                    static_cast<double>(gap_us[i % gap_us.size()] * 1000) * scale));
  }
  return s;
}

TEST(HostPaceTest, TheSameCallsTwiceAsSlowArePaceTwo) {
  const std::vector<int64_t> gaps = {10, 40, 120, 15};
  const auto pace = CompareHostPace({Sequence(50, gaps)}, {Sequence(50, gaps, 2.0)});
  ASSERT_TRUE(pace.has_value());
  EXPECT_DOUBLE_EQ(pace->ratio, 2.0);
  EXPECT_DOUBLE_EQ(pace->low, 2.0);
  EXPECT_DOUBLE_EQ(pace->high, 2.0);
  EXPECT_EQ(pace->matched, 49u);
}

// Positions compare up to the first call that differs; waits (over 1 ms) and gaps under 2 µs
// are left out; a pace needs 20 positions.
TEST(HostPaceTest, OnlyTheCommonPrefixOfOrdinaryGapsCompares) {
  HostCallSequence a = Sequence(60, {10, 20});
  HostCallSequence b = Sequence(60, {15, 30});
  b.keys[40] = "cudaLaunchKernel gemm";  // B diverges at call 40 (another layer).
  a.gap_ns[5] = 5'000'000;               // A wait for another thread: not host work.
  a.gap_ns[6] = 1'000;                   // Timer resolution.
  const auto pace = CompareHostPace({a}, {b});
  ASSERT_TRUE(pace.has_value());
  EXPECT_EQ(pace->matched, 37u);  // Positions 1-39 but 5 and 6.
  EXPECT_DOUBLE_EQ(pace->ratio, 1.5);
  b.keys[15] = "cudaLaunchKernel gemm";
  EXPECT_FALSE(CompareHostPace({a}, {b}).has_value());  // 12 positions.
  // Threads pair by rank and order: nothing pairs with another rank's thread.
  b = Sequence(60, {15, 30});
  b.rank = 1;
  EXPECT_FALSE(CompareHostPace({a}, {b}).has_value());
}

// The shared H200 loop: est-batch ran twice the samples of est-base, on a host that went
// through the same calls faster (its steps were even shorter than the base's: 12.59 against
// 15.32 ms traced). The forward's calls are the same in both; their gaps set the pace.
TEST(HostPaceTest, TwoRealRunsOfTheLoopAtDifferentPaces) {
  const std::string data = std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch";
  const auto run = RunCommand(LumosModelBinary() + " diff " + data + "/est-base.pb.zst " + data +
                              "/est-batch.pb.zst --iteration '^step$' --iterations 11- --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(run.out).get(doc), simdjson::SUCCESS) << run.out;
  const double ratio = double(doc["host_pace"]["ratio"]);
  EXPECT_GT(ratio, 0.6);
  EXPECT_LT(ratio, 0.95);
  EXPECT_LE(double(doc["host_pace"]["low"]), double(doc["host_pace"]["high"]));
  EXPECT_GE(int64_t(doc["host_pace"]["matched_gaps"]), 100);
  const auto text = RunCommand(LumosModelBinary() + " diff " + data + "/est-base.pb.zst " + data +
                               "/est-batch.pb.zst --iteration '^step$' --iterations 11-");
  EXPECT_NE(text.out.find("  host pace: B's host took 0."), std::string::npos) << text.out;
}

}  // namespace
}  // namespace lumos::modeler::diff
