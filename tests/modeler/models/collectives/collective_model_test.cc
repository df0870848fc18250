// The collective model's formulas and predictor: NCCL's structure where nothing is measured,
// algorithm and protocol choice, nodes and networks, fabric scaling, and the source of every
// answer (on a model fitted to the real H100 table).
#include "modeler/models/collectives/collective_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "modeler/models/collectives/collective_fit.h"
#include "tests/modeler/models/collectives/collective_test_util.h"

namespace lumos::modeler::models {
namespace {

using schema::CollectiveOp;
using schema::DataType;
using schema::NcclAlgorithm;
using schema::NcclProtocol;
using testing::Filter;
using testing::Fit;
using testing::Table;

constexpr uint64_t kGiB = 1ull << 30;

CollectiveFabric Nvlink450() {
  CollectiveFabric f;
  f.name = "test NVLink 450";
  f.gpus_per_node = 8;
  f.intra_bandwidth_gbps = 450;
  return f;
}

CollectiveQuery Query(CollectiveOp op, uint32_t ranks, uint64_t bytes,
                      DataType type = DataType::kFloat32) {
  CollectiveQuery q;
  q.op = op;
  q.ranks = ranks;
  q.bytes = bytes;
  q.data_type = type;
  return q;
}

CollectiveQuery Forced(CollectiveQuery q, NcclAlgorithm a, NcclProtocol p) {
  q.algorithm = a;
  q.protocol = p;
  return q;
}

// ps per byte of a link of `gbps` (1 GB/s = 1 byte per ns).
double PsPerByte(double gbps) { return 1000.0 / gbps; }

TEST(CollectiveModelTest, WithoutMeasurementsItIsNcclsTuningModel) {
  const CollectiveModel model = Fit(CalibrationSet(), Nvlink450());
  const CollectivePredictor predictor(model);
  // Ring all-reduce, Simple: NCCL's base latency, 2(n-1) NVLink steps, 2(n-1)/n bytes per byte
  // at the datasheet bandwidth.
  const CollectivePrediction p = predictor.Predict(Forced(
      Query(CollectiveOp::kAllReduce, 8, kGiB), NcclAlgorithm::kRing, NcclProtocol::kSimple));
  const double expected = 8400 + 14 * 3400 + 2.0 * 7 / 8 * kGiB * PsPerByte(450) / 1000;
  EXPECT_NEAR(static_cast<double>(p.duration_ns), expected, 1);
  EXPECT_EQ(p.source, CostSource::kModelOnly);
  EXPECT_EQ(p.fit, -1);
  EXPECT_NE(predictor.Describe(p).find("NCCL's tuning constants"), std::string::npos)
      << predictor.Describe(p);
  // NCCL's protocol choice: LL for a tiny message, Simple for a large one.
  EXPECT_EQ(predictor.Predict(Query(CollectiveOp::kAllReduce, 8, 8)).protocol, NcclProtocol::kLl);
  EXPECT_EQ(predictor.Predict(Query(CollectiveOp::kAllReduce, 8, kGiB)).protocol,
            NcclProtocol::kSimple);
}

TEST(CollectiveModelTest, RingStepsAndBusFactorsFollowTheOperation) {
  const CollectiveModel model = Fit(CalibrationSet(), Nvlink450());
  const CollectivePredictor predictor(model);
  const uint64_t bytes = 64ull << 20;
  auto simple = [&](CollectiveOp op, uint32_t ranks) {
    return static_cast<double>(
        predictor
            .Predict(Forced(Query(op, ranks, bytes), NcclAlgorithm::kRing, NcclProtocol::kSimple))
            .duration_ns);
  };
  const double per_byte_ns = PsPerByte(450) / 1000;
  // All-gather and reduce-scatter: n-1 steps, (n-1)/n bytes per byte.
  for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
    EXPECT_NEAR(simple(op, 8) - simple(op, 2), 6 * 3400 + (7.0 / 8 - 1.0 / 2) * bytes * per_byte_ns,
                2);
  }
  // All-reduce: twice the steps and twice the bytes.
  EXPECT_NEAR(simple(CollectiveOp::kAllReduce, 8) - simple(CollectiveOp::kAllReduce, 2),
              12 * 3400 + 2 * (7.0 / 8 - 1.0 / 2) * bytes * per_byte_ns, 2);
  // Broadcast and reduce move the whole message whatever the ranks.
  EXPECT_NEAR(simple(CollectiveOp::kBroadcast, 8) - simple(CollectiveOp::kBroadcast, 2), 6 * 3400,
              2);
  EXPECT_EQ(simple(CollectiveOp::kReduce, 8), simple(CollectiveOp::kBroadcast, 8));
}

TEST(CollectiveModelTest, NvlsOnlyWhereTheSwitchCanReduce) {
  CollectiveFabric nvls = Nvlink450();
  nvls.nvls = true;
  const CollectiveModel model = Fit(CalibrationSet(), nvls);
  const CollectivePredictor predictor(model);
  const uint64_t bytes = 512ull << 20;
  const CollectivePrediction half =
      predictor.Predict(Query(CollectiveOp::kAllReduce, 8, bytes, DataType::kFloat16));
  EXPECT_EQ(half.algorithm, NcclAlgorithm::kNvls);
  // (1 + 1/n) bytes per byte at NCCL's Hopper NVLS efficiency, after its latency.
  const double latency = 8400 + 2 * 3400 + 14600;
  EXPECT_NEAR(static_cast<double>(half.duration_ns),
              latency + 9.0 / 8 / 0.85 * bytes * PsPerByte(450) / 1000, 1);
  // 8-bit types: the switch cannot reduce them.
  EXPECT_EQ(predictor.Predict(Query(CollectiveOp::kAllReduce, 8, bytes, DataType::kInt8)).algorithm,
            NcclAlgorithm::kRing);
  // All-gather has nothing to reduce: the ring.
  EXPECT_EQ(
      predictor.Predict(Query(CollectiveOp::kAllGather, 8, bytes, DataType::kFloat16)).algorithm,
      NcclAlgorithm::kRing);
  // Without NVLS in the fabric: the ring, and NVLS asked for has no answer.
  const CollectivePredictor plain(model, Nvlink450());
  EXPECT_EQ(plain.Predict(Query(CollectiveOp::kAllReduce, 8, bytes, DataType::kFloat16)).algorithm,
            NcclAlgorithm::kRing);
  const CollectivePrediction none =
      plain.Predict(Forced(Query(CollectiveOp::kAllReduce, 8, bytes, DataType::kFloat16),
                           NcclAlgorithm::kNvls, NcclProtocol::kUnspecified));
  EXPECT_EQ(none.source, CostSource::kNone);
  EXPECT_EQ(none.duration_ns, -1);
  // NVLS runs Simple only.
  EXPECT_EQ(predictor
                .Predict(Forced(Query(CollectiveOp::kAllReduce, 8, bytes, DataType::kFloat16),
                                NcclAlgorithm::kNvls, NcclProtocol::kLl))
                .source,
            CostSource::kNone);
}

TEST(CollectiveModelTest, AcrossNodesTheNetworkIsTheSlowerLink) {
  CollectiveFabric f = Nvlink450();
  f.inter_bandwidth_gbps = 50;  // 8x 400 Gb/s for 8 GPUs.
  const CollectiveModel model = Fit(CalibrationSet(), f);
  const CollectivePredictor predictor(model);
  // 16 ranks on 2 nodes: 2 of the 30 ring steps cross the network (NCCL's 14 µs for Simple);
  // what leaves a node goes through its 8 NICs at 96 % of their line rate (NVIDIA measures 192
  // GB/s on a DGX A100's 8x 25 GB/s), faster here than the NVLink fit.
  const CollectivePrediction p = predictor.Predict(Forced(
      Query(CollectiveOp::kAllReduce, 16, kGiB), NcclAlgorithm::kRing, NcclProtocol::kSimple));
  EXPECT_EQ(p.nodes, 2u);
  const double latency = 8400 + 28 * 3400 + 2 * 14000;
  EXPECT_NEAR(static_cast<double>(p.duration_ns),
              latency + 2.0 * 15 / 16 * kGiB * PsPerByte(8 * 50 * 0.96) / 1000, 1);
  EXPECT_EQ(p.source, CostSource::kModelOnly);
  // One rank a node (16 nodes): every byte through one NIC, at 96 % of its 50 GB/s.
  CollectiveQuery spread = Forced(Query(CollectiveOp::kAllReduce, 16, kGiB), NcclAlgorithm::kRing,
                                  NcclProtocol::kSimple);
  spread.nodes = 16;
  EXPECT_NEAR(static_cast<double>(predictor.Predict(spread).duration_ns),
              8400 + 30 * 14000 + 2.0 * 15 / 16 * kGiB * PsPerByte(50 * 0.96) / 1000, 1);
  // Two a node: twice the NICs, half the time on the network.
  spread.nodes = 8;
  EXPECT_NEAR(
      static_cast<double>(predictor.Predict(spread).duration_ns),
      8400 + 16 * 3400 + 14 * 14000 + 2.0 * 15 / 16 * kGiB * PsPerByte(2 * 50 * 0.96) / 1000, 1);
  // 64 nodes, a tiny message: the tree's log2(64) network steps beat the ring's 126.
  EXPECT_EQ(predictor.Predict(Query(CollectiveOp::kAllReduce, 512, 8)).algorithm,
            NcclAlgorithm::kTree);
  // The tree is an all-reduce across nodes only.
  EXPECT_EQ(predictor
                .Predict(Forced(Query(CollectiveOp::kAllGather, 512, 8), NcclAlgorithm::kTree,
                                NcclProtocol::kUnspecified))
                .source,
            CostSource::kNone);
  EXPECT_EQ(predictor
                .Predict(Forced(Query(CollectiveOp::kAllReduce, 8, 8), NcclAlgorithm::kTree,
                                NcclProtocol::kUnspecified))
                .source,
            CostSource::kNone);
  // In-network reduction: each GPU sends 1/8 of the message through the network.
  CollectiveFabric sharp = f;
  sharp.collnet = true;
  const CollectivePredictor with_sharp(model, sharp);
  EXPECT_EQ(with_sharp.Predict(Query(CollectiveOp::kAllReduce, 32, kGiB)).algorithm,
            NcclAlgorithm::kCollnetDirect);
  // No network: no answer across nodes.
  const CollectivePredictor single(model, Nvlink450());
  EXPECT_EQ(single.Predict(Query(CollectiveOp::kAllReduce, 16, kGiB)).source, CostSource::kNone);
  // More nodes than ranks cannot be.
  CollectiveQuery q = Query(CollectiveOp::kAllReduce, 4, kGiB);
  q.nodes = 8;
  EXPECT_EQ(predictor.Predict(q).source, CostSource::kNone);
}

TEST(CollectiveModelTest, InvalidQueriesHaveNoAnswer) {
  const CollectiveModel model = Fit(CalibrationSet(), Nvlink450());
  const CollectivePredictor predictor(model);
  for (const CollectiveQuery& q :
       {Query(CollectiveOp::kUnspecified, 8, 1024), Query(CollectiveOp::kAllReduce, 0, 1024)}) {
    const CollectivePrediction p = predictor.Predict(q);
    EXPECT_EQ(p.source, CostSource::kNone);
    EXPECT_EQ(p.duration_ns, -1);
    EXPECT_EQ(predictor.Describe(p).rfind("none", 0), 0u);
  }
}

class CollectiveSourcesTest : public ::testing::Test {
 protected:
  CollectiveSourcesTest()
      : table_(Table("nccl_h100.csv")),
        model_(Fit(Filter(table_, [](const CalibrationPoint& p) { return p.ranks <= 4; }),
                   Nvlink450())),
        predictor_(model_) {}

  // The table's time of a row.
  int64_t Measured(CollectiveOp op, DataType type, uint32_t ranks, uint64_t bytes) const {
    for (const CalibrationPoint& p : table_.points) {
      if (p.op == op && p.data_type == type && p.ranks == ranks && p.bytes == bytes) {
        return p.time_ns;
      }
    }
    ADD_FAILURE() << "no such row";
    return 0;
  }

  CalibrationSet table_;
  CollectiveModel model_;
  CollectivePredictor predictor_;
};

TEST_F(CollectiveSourcesTest, AMeasuredCaseIsItsMeasurement) {
  const CollectivePrediction p =
      predictor_.Predict(Query(CollectiveOp::kAllReduce, 4, 1 << 20, DataType::kFloat16));
  EXPECT_EQ(p.source, CostSource::kMeasured);
  EXPECT_EQ(p.duration_ns, Measured(CollectiveOp::kAllReduce, DataType::kFloat16, 4, 1 << 20));
  const std::string text = predictor_.Describe(p);
  EXPECT_NE(text.find("measured (nccl_h100.csv (H100-SXM5-80GB): all_reduce, 4 ranks"),
            std::string::npos)
      << text;
  // Another fabric has measured nothing.
  CollectiveFabric other = Nvlink450();
  other.name = "another";
  EXPECT_EQ(CollectivePredictor(model_, other)
                .Predict(Query(CollectiveOp::kAllReduce, 4, 1 << 20, DataType::kFloat16))
                .source,
            CostSource::kScaled);
}

TEST_F(CollectiveSourcesTest, BetweenMeasuredSizesItInterpolatesTheResiduals) {
  const uint64_t lo = 1 << 20, hi = 2 << 20;
  const CollectivePrediction mid =
      predictor_.Predict(Query(CollectiveOp::kAllGather, 2, 3 << 19, DataType::kInt8));
  EXPECT_EQ(mid.source, CostSource::kInterpolated);
  EXPECT_NE(predictor_.Describe(mid).find("1048576 B .. 2097152 B"), std::string::npos)
      << predictor_.Describe(mid);
  // Next to a measured size the interpolation is (almost) that measurement: the residual is
  // carried, not the formula alone.
  const double at_lo = static_cast<double>(
      predictor_.Predict(Query(CollectiveOp::kAllGather, 2, lo + 1, DataType::kInt8)).duration_ns);
  const double at_hi = static_cast<double>(
      predictor_.Predict(Query(CollectiveOp::kAllGather, 2, hi - 1, DataType::kInt8)).duration_ns);
  EXPECT_NEAR(at_lo,
              static_cast<double>(Measured(CollectiveOp::kAllGather, DataType::kInt8, 2, lo)),
              0.001 * at_lo);
  EXPECT_NEAR(at_hi,
              static_cast<double>(Measured(CollectiveOp::kAllGather, DataType::kInt8, 2, hi)),
              0.001 * at_hi);
}

TEST_F(CollectiveSourcesTest, OtherRankCountsAreScaledFromTheFit) {
  const CollectivePrediction p =
      predictor_.Predict(Query(CollectiveOp::kAllReduce, 8, 1 << 20, DataType::kInt8));
  EXPECT_EQ(p.source, CostSource::kScaled);
  EXPECT_EQ(p.fit, static_cast<int8_t>(CollectiveClass::kAllReduce));
  const std::string text = predictor_.Describe(p);
  EXPECT_NE(text.find("the fit of all_reduce: 84 points, ranks 2,4, 512 B .. 536870912 B"),
            std::string::npos)
      << text;
}

TEST_F(CollectiveSourcesTest, AnOperationNeverMeasuredBorrowsARelatedFit) {
  const CollectivePrediction b =
      predictor_.Predict(Query(CollectiveOp::kBroadcast, 8, 1 << 24, DataType::kFloat16));
  EXPECT_EQ(b.source, CostSource::kScaled);
  EXPECT_EQ(b.fit, static_cast<int8_t>(CollectiveClass::kAllGather));
  // A send/recv of S bytes costs what a 2-rank all-to-all of 2S costs (a size not measured,
  // so both come from the formula).
  const uint64_t bytes = 3 << 20;
  const CollectivePrediction s =
      predictor_.Predict(Query(CollectiveOp::kSendRecv, 2, bytes, DataType::kFloat16));
  EXPECT_EQ(s.fit, static_cast<int8_t>(CollectiveClass::kAllToAll));
  CollectiveFabric other = Nvlink450();
  other.name = "another";
  const CollectivePredictor elsewhere(model_, other);
  EXPECT_EQ(elsewhere.Predict(Query(CollectiveOp::kSend, 2, bytes)).duration_ns,
            elsewhere.Predict(Query(CollectiveOp::kAllToAll, 2, 2 * bytes)).duration_ns);
}

TEST_F(CollectiveSourcesTest, AnotherFabricScalesLinksBandwidthsAndClocks) {
  CollectiveFabric source = Nvlink450();
  source.gpu_clock_mhz = 2000;
  source.memory_bandwidth_gbps = 3000;
  source.compute_capability = 90;
  const CollectiveModel model =
      Fit(Filter(table_, [](const CalibrationPoint& p) { return p.ranks <= 4; }), source);
  CollectiveFabric target = source;
  target.name = "slower";
  target.intra_bandwidth_gbps = 300;
  target.gpu_clock_mhz = 1000;
  target.memory_bandwidth_gbps = 1000;
  target.compute_capability = 80;
  const CollectivePredictor predictor(model, target);
  const ProtocolCost& from = model.ops[0].protocol[2];
  const ProtocolCost& to = predictor.cost(CollectiveClass::kAllReduce).protocol[2];
  EXPECT_DOUBLE_EQ(to.link_ps_per_byte, from.link_ps_per_byte * 450 / 300);
  EXPECT_DOUBLE_EQ(to.local_ps_per_byte, from.local_ps_per_byte * 3);
  EXPECT_DOUBLE_EQ(to.base_ns, from.base_ns * 2);
  EXPECT_DOUBLE_EQ(to.step_ns, from.step_ns * 2);
  // LL128 is capped per channel at 36.7 GB/s on Hopper, 20 on Ampere (NCCL): that ratio wins
  // over the links' where it is larger.
  const ProtocolCost& ll128 = predictor.cost(CollectiveClass::kAllReduce).protocol[1];
  EXPECT_DOUBLE_EQ(ll128.link_ps_per_byte, model.ops[0].protocol[1].link_ps_per_byte * 36.7 / 20);
  // Per-hop latencies, when both fabrics give them, scale the steps instead of the clocks.
  source.intra_latency_us = 1;
  target.intra_latency_us = 3;
  const CollectiveModel with_hops =
      Fit(Filter(table_, [](const CalibrationPoint& p) { return p.ranks <= 4; }), source);
  EXPECT_DOUBLE_EQ(
      CollectivePredictor(with_hops, target).cost(CollectiveClass::kAllReduce).protocol[2].step_ns,
      with_hops.ops[0].protocol[2].step_ns * 3);
}

// A faster fabric is faster: the costs per byte shrink by the ratios of the links and the
// memories, whether or not the fabrics give a compute capability (NCCL's per-architecture
// limits of LL and LL128 only ever slow a protocol down further).
TEST_F(CollectiveSourcesTest, AFasterFabricScalesTheCostsDownToo) {
  CollectiveFabric source = Nvlink450();
  source.memory_bandwidth_gbps = 3000;
  const CollectiveModel model =
      Fit(Filter(table_, [](const CalibrationPoint& p) { return p.ranks <= 4; }), source);
  CollectiveFabric target = source;
  target.name = "twice as fast";
  target.intra_bandwidth_gbps = 900;
  target.memory_bandwidth_gbps = 6000;
  const ProtocolCost& from = model.ops[0].protocol[2];
  {
    const CollectivePredictor predictor(model, target);
    const ProtocolCost& to = predictor.cost(CollectiveClass::kAllReduce).protocol[2];
    EXPECT_DOUBLE_EQ(to.link_ps_per_byte, from.link_ps_per_byte / 2);
    EXPECT_DOUBLE_EQ(to.local_ps_per_byte, from.local_ps_per_byte / 2);
    const CollectiveQuery big = Query(CollectiveOp::kAllReduce, 8, kGiB, DataType::kFloat16);
    EXPECT_LT(predictor.Predict(big).duration_ns,
              0.6 * static_cast<double>(CollectivePredictor(model).Predict(big).duration_ns));
  }
  // Hopper to Blackwell: NCCL's LL limit doubles (141 to 282 GB/s), as the links do.
  source.compute_capability = 90;
  target.compute_capability = 100;
  const CollectiveModel hopper =
      Fit(Filter(table_, [](const CalibrationPoint& p) { return p.ranks <= 4; }), source);
  const CollectivePredictor blackwell(hopper, target);
  EXPECT_DOUBLE_EQ(blackwell.cost(CollectiveClass::kAllReduce).protocol[2].link_ps_per_byte,
                   hopper.ops[0].protocol[2].link_ps_per_byte / 2);
  EXPECT_DOUBLE_EQ(blackwell.cost(CollectiveClass::kAllReduce).protocol[0].link_ps_per_byte,
                   hopper.ops[0].protocol[0].link_ps_per_byte * 141.0 / 282.0);
}

}  // namespace
}  // namespace lumos::modeler::models
