// The repeating block finder and the range-name rules of structure recovery.
#include <gtest/gtest.h>

#include "modeler/structure/structure_internal.h"

namespace lumos::modeler::structure::internal {
namespace {

std::vector<uint32_t> Seq(std::string_view letters) {
  std::vector<uint32_t> out;
  for (char c : letters) out.push_back(static_cast<uint32_t>(c));
  return out;
}

TEST(RepetitionTest, FindsTheLongestRunOfABlock) {
  const Repetition r = LongestRepetition(Seq("xABCDABCDABCDABCDyz"), 3);
  EXPECT_EQ(r.start, 1u);
  EXPECT_EQ(r.period, 4u);
  EXPECT_EQ(r.count, 4u);
}

TEST(RepetitionTest, PrefersTheSmallerPeriodOfEqualCover) {
  // ABCD x4 is also ABCDABCD x2: the layer, not two of them.
  const Repetition r = LongestRepetition(Seq("ABCDABCDABCDABCD"), 3);
  EXPECT_EQ(r.period, 4u);
  EXPECT_EQ(r.count, 4u);
}

TEST(RepetitionTest, NoneBelowTheMinimumPeriodOrWithoutRepeats) {
  EXPECT_EQ(LongestRepetition(Seq("ABABAB"), 3).period, 0u);
  EXPECT_EQ(LongestRepetition(Seq("ABCDEFGH"), 3).period, 0u);
  EXPECT_EQ(LongestRepetition({}, 3).period, 0u);
}

TEST(RepetitionTest, ALongerBlockCoveringMoreWins) {
  // ABC x2 (6) against EFGHI x3 (15).
  const Repetition r = LongestRepetition(Seq("ABCABCzEFGHIEFGHIEFGHI"), 3);
  EXPECT_EQ(r.start, 7u);
  EXPECT_EQ(r.period, 5u);
  EXPECT_EQ(r.count, 3u);
}

TEST(RangeNamesTest, LayerNames) {
  for (const char* name :
       {"layers.3", "decoder.layers.17", "layer_2", "model.layers.0", "transformer.h.11",
        "nn.Module: ParallelTransformerLayer_3", "TransformerLayer", "LlamaDecoderLayer"}) {
    EXPECT_TRUE(IsLayerRangeName(name)) << name;
  }
  for (const char* name : {"decoder.layers.3.self_attention", "forward", "aten::linear",
                           "ProfilerStep#3", "conv2d_1x1", "layers"}) {
    EXPECT_FALSE(IsLayerRangeName(name)) << name;
  }
}

TEST(RangeNamesTest, PhaseNames) {
  EXPECT_EQ(PhaseOfRangeName("forward"), Phase::kForward);
  EXPECT_EQ(PhaseOfRangeName("Forward-compute"), Phase::kForward);
  EXPECT_EQ(PhaseOfRangeName("backward"), Phase::kBackward);
  EXPECT_EQ(PhaseOfRangeName("backward_step"), Phase::kBackward);
  EXPECT_EQ(PhaseOfRangeName("optimizer"), Phase::kOptimizer);
  EXPECT_EQ(PhaseOfRangeName("Optimizer.step#Adam.step"), Phase::kOptimizer);
  EXPECT_EQ(PhaseOfRangeName("Optimizer.zero_grad#Adam.zero_grad"), Phase::kOther);
  EXPECT_EQ(PhaseOfRangeName("forward-backward"), Phase::kOther);
  EXPECT_EQ(PhaseOfRangeName("aten::mm"), Phase::kOther);
}

}  // namespace
}  // namespace lumos::modeler::structure::internal
