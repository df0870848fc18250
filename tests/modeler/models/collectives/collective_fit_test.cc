// Fitting the collective model: known costs come back from points they generate, labels pin
// protocols, what the points cannot tell apart takes NCCL's values, and what cannot calibrate
// is counted and left out.
#include "modeler/models/collectives/collective_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "modeler/models/collectives/collective_model_json.h"
#include "tests/modeler/models/collectives/collective_test_util.h"

namespace lumos::modeler::models {
namespace {

using schema::CollectiveOp;
using schema::DataType;
using schema::NcclAlgorithm;
using schema::NcclProtocol;

CollectiveFabric Fabric() {
  CollectiveFabric f;
  f.name = "test";
  f.gpus_per_node = 8;
  f.intra_bandwidth_gbps = 300;
  return f;
}

CalibrationPoint Point(CollectiveOp op, uint32_t ranks, uint64_t bytes, double time_ns,
                       NcclProtocol protocol = NcclProtocol::kUnspecified) {
  CalibrationPoint p;
  p.op = op;
  p.data_type = DataType::kFloat32;
  p.ranks = ranks;
  p.bytes = bytes;
  p.time_ns = std::llround(time_ns);
  p.protocol = protocol;
  return p;
}

// The documented all-gather formula: base + (n-1) step + bytes (local + (n-1)/n link).
double AllGather(const ProtocolCost& c, double n, double bytes) {
  return c.base_ns + (n - 1) * c.step_ns +
         bytes * 1e-3 * (c.local_ps_per_byte + (n - 1) / n * c.link_ps_per_byte);
}

TEST(CollectiveFitTest, RecoversTheCostsThatMadeThePoints) {
  ProtocolCost truth;
  truth.base_ns = 9000;
  truth.step_ns = 1500;
  truth.local_ps_per_byte = 1.25;
  truth.link_ps_per_byte = 2.5;
  CalibrationSet set;
  set.origins = {"made up"};
  for (uint32_t n : {2u, 4u, 8u}) {
    for (uint64_t bytes = 1 << 20; bytes <= (1u << 30); bytes <<= 1) {
      set.points.push_back(Point(CollectiveOp::kAllGather, n, bytes, AllGather(truth, n, bytes),
                                 NcclProtocol::kSimple));
    }
  }
  CollectiveFitReport report;
  const CollectiveModel model = testing::Fit(set, Fabric());
  ASSERT_TRUE(FitCollectiveModel(set, Fabric(), &report).ok());
  EXPECT_EQ(report.fitted, set.points.size());
  const OperationCost& op = model.ops[static_cast<size_t>(CollectiveClass::kAllGather)];
  const ProtocolCost& fit = op.protocol[2];
  EXPECT_EQ(fit.points, set.points.size());
  // The times are whole ns: the fit is as exact as that rounding allows (0.5 ns in 10 µs).
  EXPECT_NEAR(fit.base_ns, truth.base_ns, 2);
  EXPECT_NEAR(fit.step_ns, truth.step_ns, 1);
  EXPECT_NEAR(fit.local_ps_per_byte, truth.local_ps_per_byte, 1e-4 * truth.local_ps_per_byte);
  EXPECT_NEAR(fit.link_ps_per_byte, truth.link_ps_per_byte, 1e-4 * truth.link_ps_per_byte);
  EXPECT_LT(op.rms_error, 1e-4);
  EXPECT_EQ(op.rank_counts, (std::vector<uint32_t>{2, 4, 8}));
  // The other protocols saw nothing: the predictor will not pick them.
  EXPECT_EQ(op.protocol[0].points, 0u);
  EXPECT_EQ(op.protocol[1].points, 0u);
}

TEST(CollectiveFitTest, UnlabelledPointsGoToTheFastestProtocol) {
  // Two regimes: a cheap-latency, expensive-byte one (LL-like) for small messages and an
  // expensive-latency, cheap-byte one for large ones; the points carry no protocol.
  ProtocolCost ll{5000, 500, 20, 30, 0}, simple{20000, 2000, 1, 2, 0};
  CalibrationSet set;
  set.origins = {"made up"};
  for (uint32_t n : {2u, 4u}) {
    for (uint64_t bytes = 512; bytes <= (1u << 29); bytes <<= 1) {
      const double t = std::min(AllGather(ll, n, bytes), AllGather(simple, n, bytes));
      set.points.push_back(Point(CollectiveOp::kAllGather, n, bytes, t));
    }
  }
  const CollectiveModel model = testing::Fit(set, Fabric());
  const OperationCost& op = model.ops[static_cast<size_t>(CollectiveClass::kAllGather)];
  EXPECT_LT(op.rms_error, 0.01);
  // 8 ranks, never seen: the fitted envelope extrapolates both regimes.
  const CollectivePredictor predictor(model);
  for (uint64_t bytes : {1024ull, 1ull << 29}) {
    CollectiveQuery q;
    q.op = CollectiveOp::kAllGather;
    q.data_type = DataType::kFloat32;
    q.ranks = 8;
    q.bytes = bytes;
    const double truth = std::min(AllGather(ll, 8, bytes), AllGather(simple, 8, bytes));
    EXPECT_NEAR(static_cast<double>(predictor.Predict(q).duration_ns), truth, 0.02 * truth)
        << bytes;
  }
}

TEST(CollectiveFitTest, OneRankCountSplitsTheLatencyAsNcclAndPutsTheBytesOnTheLink) {
  CalibrationSet set;
  set.origins = {"one rank count"};
  for (uint64_t bytes = 1 << 20; bytes <= (1u << 28); bytes <<= 1) {
    set.points.push_back(Point(CollectiveOp::kAllReduce, 8, bytes,
                               30000 + bytes * 2.0 * 7 / 8 * 4e-3, NcclProtocol::kSimple));
  }
  const CollectiveModel model = testing::Fit(set, Fabric());
  const ProtocolCost& c = model.ops[0].protocol[2];
  const ProtocolCost nccl = DefaultOperationCost(Fabric()).protocol[2];
  EXPECT_NEAR(c.step_ns / c.base_ns, nccl.step_ns / nccl.base_ns, 1e-9);
  EXPECT_EQ(c.local_ps_per_byte, 0);
  EXPECT_NEAR(c.link_ps_per_byte, 4.0, 1e-4);
  EXPECT_NEAR(c.base_ns + 14 * c.step_ns, 30000, 2);
}

TEST(CollectiveFitTest, WhatCannotCalibrateIsCountedAndLeftOut) {
  CalibrationSet set;
  set.origins = {"mixed"};
  set.points.push_back(Point(CollectiveOp::kAllReduce, 8, 0, 5000));       // No size.
  set.points.push_back(Point(CollectiveOp::kAllReduce, 8, 1024, 0));       // No time.
  set.points.push_back(Point(CollectiveOp::kUnspecified, 8, 1024, 5000));  // No op.
  CalibrationPoint tree = Point(CollectiveOp::kAllReduce, 8, 1024, 5000);
  tree.algorithm = NcclAlgorithm::kTree;  // Within one node: not modelled.
  set.points.push_back(tree);
  CalibrationPoint spread = Point(CollectiveOp::kAllReduce, 16, 1024, 50000);  // Two nodes.
  set.points.push_back(spread);
  set.points.push_back(Point(CollectiveOp::kAllReduce, 8, 4096, 7000));
  CollectiveFitReport report;
  StatusOr<CollectiveModel> model = FitCollectiveModel(set, Fabric(), &report);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(report.no_size, 2u);
  EXPECT_EQ(report.not_modelled, 2u);
  EXPECT_EQ(report.multi_node, 1u);
  EXPECT_EQ(report.fitted, 1u);
  EXPECT_EQ(report.by_op[0], 1u);
  // Measurements: the tree point, the two-node one and the last one (sorted by ranks).
  ASSERT_EQ(model->measurements.size(), 3u);
  EXPECT_EQ(model->measurements.back().nodes, 2u);
  EXPECT_EQ(model->measurements.back().ranks, 16u);
  // One point fits no protocol: all-reduce keeps NCCL's costs and still answers; its own
  // case is its measurement.
  const CollectivePredictor predictor(*model);
  CollectiveQuery q;
  q.op = CollectiveOp::kAllReduce;
  q.data_type = DataType::kFloat32;
  q.ranks = 8;
  q.bytes = 8192;
  const CollectivePrediction p = predictor.Predict(q);
  EXPECT_EQ(p.source, CostSource::kModelOnly);
  EXPECT_EQ(p.fit, -1);
  q.bytes = 4096;
  EXPECT_EQ(predictor.Predict(q).source, CostSource::kMeasured);
  EXPECT_EQ(predictor.Predict(q).duration_ns, 7000);
}

TEST(CollectiveFitTest, RepeatsOfACaseMergeIntoTheirMedian) {
  CalibrationSet set;
  set.origins = {"repeats"};
  for (double t : {7000.0, 5000.0, 6000.0}) {
    set.points.push_back(Point(CollectiveOp::kAllReduce, 8, 4096, t, NcclProtocol::kLl));
  }
  set.points.back().protocol = NcclProtocol::kLl128;
  const CollectiveModel model = testing::Fit(set, Fabric());
  ASSERT_EQ(model.measurements.size(), 1u);
  EXPECT_EQ(model.measurements[0].time_ns, 6000);
  EXPECT_EQ(model.measurements[0].repeats, 3u);
  EXPECT_EQ(model.measurements[0].protocol, NcclProtocol::kUnspecified);  // They disagree.
}

TEST(CollectiveFitTest, AFabricWithoutBandwidthIsAnError) {
  CollectiveFabric f = Fabric();
  f.intra_bandwidth_gbps = 0;
  StatusOr<CollectiveModel> model = FitCollectiveModel(CalibrationSet(), f);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("fabric 'test'"), std::string::npos);
}

TEST(CollectiveFitTest, TheSamePointsGiveTheSameModel) {
  const CalibrationSet set = testing::Table("nccl_h100.csv");
  const CollectiveModel a = testing::Fit(set, Fabric());
  const CollectiveModel b = testing::Fit(set, Fabric());
  EXPECT_EQ(CollectiveModelJson(a), CollectiveModelJson(b));
}

TEST(CollectiveFitTest, AppendKeepsEachPointsOrigin) {
  CalibrationSet a, b;
  a.origins = {"a"};
  a.points.push_back(Point(CollectiveOp::kAllReduce, 2, 64, 5000));
  b.origins = {"b0", "b1"};
  b.points.push_back(Point(CollectiveOp::kAllReduce, 2, 64, 5000));
  b.points.back().origin = 1;
  AppendCalibration(b, &a);
  ASSERT_EQ(a.points.size(), 2u);
  EXPECT_EQ(a.origins[a.points[1].origin], "b1");
}

}  // namespace
}  // namespace lumos::modeler::models
