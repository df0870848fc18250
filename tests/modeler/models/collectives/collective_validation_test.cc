// The collective model's validation targets (issue 13) on NVIDIA's measured tables
// (../shared/data/costs): fit the 2- and 4-rank rows, predict the 8-rank rows (median error
// <= 8 %); fit H100, predict A100. Calibration and test rows are kept apart (checked on the
// fitted models), and the model is compared with the baselines. The numbers themselves are in
// docs/validation.md ("Collective model"; scripts/validate-collectives.sh).
#include "modeler/models/collectives/collective_validation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "modeler/models/collectives/collective_fit.h"
#include "tests/modeler/models/collectives/collective_test_util.h"

namespace lumos::modeler::models {
namespace {

constexpr double kMedianTarget = 0.08;

class CollectiveValidationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    StatusOr<CollectiveValidation> v = ValidateCollectiveModel(
        testing::CostsTable("nccl_h100.csv"), testing::CostsTable("nccl_a100.csv"));
    ASSERT_TRUE(v.ok()) << v.status().message();
    validation_ = new CollectiveValidation(std::move(v).value());
  }
  static void TearDownTestSuite() {
    delete validation_;
    validation_ = nullptr;
  }
  static const ValidationCase& Case(size_t i) { return validation_->cases.at(i); }
  static CollectiveValidation* validation_;
};

CollectiveValidation* CollectiveValidationTest::validation_ = nullptr;

void ExpectBeatsEveryBaseline(const ValidationCase& c, bool on_median) {
  for (const auto& [name, s] : c.baselines) {
    EXPECT_LT(c.ours.time_weighted, s.time_weighted) << c.name << " vs " << name;
    if (on_median) {
      EXPECT_LT(c.ours.median, s.median) << c.name << " vs " << name;
    }
  }
}

TEST_F(CollectiveValidationTest, MoreRanksMeetTheTargetOnBothGpus) {
  for (size_t i : {0u, 1u}) {
    const ValidationCase& c = Case(i);
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.ours.rows, 168u);  // Every 8-rank row: 4 operations x 2 types x 21 sizes.
    EXPECT_TRUE(c.calibration_clean);
    EXPECT_LE(c.ours.median, kMedianTarget);
    EXPECT_LE(c.ours.time_weighted, kMedianTarget);
    ExpectBeatsEveryBaseline(c, /*on_median=*/true);
  }
}

TEST_F(CollectiveValidationTest, AnotherGpuBeatsTheBaselinesWeightedByTime) {
  const ValidationCase& c = Case(2);
  EXPECT_EQ(c.ours.rows, 504u);
  EXPECT_TRUE(c.calibration_clean);
  EXPECT_LE(c.ours.time_weighted, kMedianTarget);
  ExpectBeatsEveryBaseline(c, /*on_median=*/false);
  // The median target (8 %) is not met for another GPU: the small, latency-bound
  // messages take 1.5-1.8x longer on A100 than on H100, more than the clock ratio the model
  // scales latencies by (1.40); docs/validation.md has the numbers. This bound keeps what was
  // reached from getting worse.
  EXPECT_LE(c.ours.median, 0.11);
}

// The calibration never sees a test row: the 8-rank rows never reach the fit that predicts
// them, and the A100 rows never reach the H100 fit.
TEST(CollectiveValidationSplitTest, TestRowsNeverReachTheFit) {
  const CalibrationSet h100 = testing::Table("nccl_h100.csv");
  const CollectiveModel few =
      testing::Fit(testing::Filter(h100, [](const CalibrationPoint& p) { return p.ranks <= 4; }),
                   H100SxmFabric());
  for (const CollectiveMeasurement& m : few.measurements) EXPECT_LE(m.ranks, 4u);
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(few.ops[c].rank_counts, (std::vector<uint32_t>{2, 4})) << c;
    EXPECT_EQ(few.ops[c].points, 84u) << c;
  }
  const CollectiveModel all = testing::Fit(h100, H100SxmFabric());
  EXPECT_EQ(all.origins, std::vector<std::string>{"nccl_h100.csv (H100-SXM5-80GB)"});
  EXPECT_EQ(all.measurements.size(), 504u);
}

TEST_F(CollectiveValidationTest, TheMarkdownNamesEveryCaseAndBaseline) {
  const std::string text = CollectiveValidationMarkdown(*validation_);
  for (const ValidationCase& c : validation_->cases) {
    EXPECT_NE(text.find(c.name), std::string::npos);
    for (const auto& [name, s] : c.baselines) EXPECT_NE(text.find(name), std::string::npos);
  }
  const std::string rows = CollectiveValidationRowsCsv(*validation_);
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 1 + 168 + 168 + 504);
}

}  // namespace
}  // namespace lumos::modeler::models
