// The collective model inside `lumos-model costs` (modeler/models/collectives/collective_costs.h):
// fabrics from the shipped specs, the rows of the real tables (../shared/data/costs/nccl_*.csv),
// one calibration per GPU that is the library's own fit, and query tables answered exactly as
// CollectivePredictor answers, with their sources, networks and every kind of bad row.
#include "modeler/models/collectives/collective_costs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "modeler/models/collectives/collective_calibration.h"
#include "modeler/models/collectives/collective_model_json.h"
#include "modeler/models/collectives/collective_validation.h"
#include "modeler/models/costs/cost_queries.h"

namespace lumos::modeler::models {
namespace {

using schema::CollectiveOp;
using schema::DataType;

constexpr char kH100[] = "H100-SXM5-80GB";
constexpr char kA100[] = "A100-SXM4-80GB";

std::string Costs(const std::string& name) {
  return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/costs/" + name;
}

const GpuSpec& Gpu(const char* name) {
  const GpuSpec* gpu = SpecTable::Builtin().FindGpu(name);
  EXPECT_NE(gpu, nullptr) << name;
  return *gpu;
}

const NetworkSpec& Net(const char* name) {
  const NetworkSpec* network = SpecTable::Builtin().FindNetwork(name);
  EXPECT_NE(network, nullptr) << name;
  return *network;
}

// Fits the real tables named (once per test binary and list).
const CostModel& Fitted() {
  static const CostModel* const model = [] {
    auto fitted =
        FitCostTables({Costs("nccl_h100.csv"), Costs("nccl_a100.csv")}, SpecTable::Builtin());
    EXPECT_TRUE(fitted.ok()) << fitted.status().message();
    return new CostModel(fitted.ok() ? std::move(*fitted) : CostModel());
  }();
  return *model;
}

StatusOr<PredictedTable> Predict(const std::string& csv, const char* gpu,
                                 const char* network = "ib400", const CostModel& model = Fitted()) {
  auto table = io::ParseCsv(csv, "q.csv");  // Its errors are the answer too.
  if (!table.ok()) return table.status();
  const GpuSpec* default_gpu = gpu != nullptr ? &Gpu(gpu) : nullptr;
  return PredictCostQueries(model, *table, default_gpu, SpecTable::Builtin(), &Net(network));
}

// The cells of row `row` (1: the first after the header) of a CSV text.
std::vector<std::string> Cells(const std::string& csv, size_t row) {
  auto table = io::ParseCsv(csv, "out.csv");
  EXPECT_TRUE(table.ok());
  if (!table.ok() || row == 0 || row > table->rows.size()) return {};
  return table->rows[row - 1];
}

double Us(const std::string& cell) { return std::stod(cell); }

std::string Us(int64_t ns) { return FormatMicroseconds(ns); }

TEST(CollectiveFabricTest, TheSpecsGiveTheValidationsDatasheetFabrics) {
  for (const auto& [name, expected] :
       {std::pair{kH100, H100SxmFabric()}, std::pair{kA100, A100SxmFabric()}}) {
    auto fabric = FabricFromSpecs(Gpu(name), nullptr);
    ASSERT_TRUE(fabric.ok()) << fabric.status().message();
    CollectiveFabric same = expected;
    same.name = fabric->name;
    EXPECT_EQ(*fabric, same) << name;
    EXPECT_EQ(fabric->name, name);
  }
  // Between nodes: the network's line rate per GPU and latency.
  auto b200 = FabricFromSpecs(Gpu("B200"), &Net("ib800"));
  ASSERT_TRUE(b200.ok());
  EXPECT_EQ(b200->name, "B200 over ib800");
  EXPECT_DOUBLE_EQ(b200->intra_bandwidth_gbps, 900);  // 1.8 TB/s both directions.
  EXPECT_DOUBLE_EQ(b200->inter_bandwidth_gbps, 100);  // 800 Gb/s.
  EXPECT_DOUBLE_EQ(b200->inter_latency_us, 3);
  EXPECT_TRUE(b200->nvls);
  EXPECT_EQ(b200->compute_capability, 100u);
  EXPECT_EQ(b200->gpu_clock_mhz, 0);  // Not published: clocks are not scaled.
  EXPECT_EQ(FabricFromSpecs(Gpu("GB200"), nullptr)->gpus_per_node, 72u);
  // A GPU of a user's specs without NVLink figures cannot run collectives.
  SpecTable specs;
  ASSERT_TRUE(
      specs.Add("gpu X1\n  sms 10\n  tflops bf16 100\n  hbm_gb_per_s 1000\n", "x.txt").ok());
  auto none = FabricFromSpecs(*specs.FindGpu("X1"), nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message().rfind("gpu X1 has no nvlink_gb_per_s in the specs", 0), 0u)
      << none.status().message();
}

TEST(CollectiveRowsTest, TheRealTablesReadAsTheCollectiveLibraryReadsThem) {
  for (const char* name : {"nccl_h100.csv", "nccl_a100.csv"}) {
    auto table = io::ReadCsv(Costs(name));
    ASSERT_TRUE(table.ok()) << table.status().message();
    auto rows = ReadCollectiveRows(*table, Latency::kRequired);
    ASSERT_TRUE(rows.ok()) << rows.status().message();
    auto set = ReadCollectiveTable(Costs(name));
    ASSERT_TRUE(set.ok());
    ASSERT_EQ(rows->size(), set->points.size());
    ASSERT_EQ(rows->size(), 504u);
    for (size_t i = 0; i < rows->size(); ++i) {
      const CollectiveRow& r = (*rows)[i];
      const CalibrationPoint& p = set->points[i];
      EXPECT_EQ(r.op, p.op);
      EXPECT_EQ(r.data_type, p.data_type);
      EXPECT_EQ(r.ranks, p.ranks);
      EXPECT_EQ(r.nodes, p.nodes);
      EXPECT_EQ(r.bytes, p.bytes);
      EXPECT_EQ(r.latency_ns, p.time_ns);
    }
  }
}

TEST(CollectiveCalibrationTest, EachGpuIsTheLibrarysOwnFitOnItsSpecFabric) {
  const CostModel& model = Fitted();
  ASSERT_EQ(model.collectives.size(), 2u);
  EXPECT_EQ(model.collectives[0].gpu, kA100);  // By GPU name.
  EXPECT_EQ(model.collectives[1].gpu, kH100);
  EXPECT_EQ(model.collectives[1].network, "ib400");
  for (const CollectiveCalibration& c : model.collectives) {
    auto set = ReadCollectiveTable(Costs(c.gpu == kH100 ? "nccl_h100.csv" : "nccl_a100.csv"));
    ASSERT_TRUE(set.ok());
    auto fabric = FabricFromSpecs(Gpu(c.gpu.c_str()), &Net("ib400"));
    ASSERT_TRUE(fabric.ok());
    auto direct = FitCollectiveModel(*set, *fabric);
    ASSERT_TRUE(direct.ok());
    EXPECT_EQ(CollectiveModelJson(c.model), CollectiveModelJson(*direct)) << c.gpu;
    EXPECT_EQ(c.FittedPoints(), 504u);
    EXPECT_EQ(c.MultiNodeMeasurements(), 0u);
  }
  // The same tables in another order: the same calibrations.
  auto again =
      FitCostTables({Costs("nccl_a100.csv"), Costs("nccl_h100.csv")}, SpecTable::Builtin());
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->collectives.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(CollectiveModelJson(again->collectives[i].model),
              CollectiveModelJson(model.collectives[i].model));
  }
}

TEST(CollectiveCalibrationTest, AnotherGpuTakesTheNearestCalibration) {
  const std::vector<CollectiveCalibration>& c = Fitted().collectives;
  auto gpu_of = [&c](const char* gpu) { return c[SelectCollectiveCalibration(c, Gpu(gpu))].gpu; };
  EXPECT_EQ(gpu_of(kH100), kH100);
  EXPECT_EQ(gpu_of(kA100), kA100);
  EXPECT_EQ(gpu_of("H200-SXM-141GB"), kH100);  // NVLS, the same NVLink.
  EXPECT_EQ(gpu_of("B200"), kH100);            // NVLS.
  EXPECT_EQ(gpu_of("V100-SXM2-32GB"), kA100);  // No NVLS.
  EXPECT_EQ(gpu_of("A100-SXM4-40GB"), kA100);
  EXPECT_EQ(SelectCollectiveCalibration({}, Gpu(kH100)), -1);
}

// Every answer is what CollectivePredictor gives for the same query on the same fabric.
TEST(CollectiveQueriesTest, AnswersAreThePredictorsOnTheFabricOfTheRow) {
  const CostModel& model = Fitted();
  const CollectiveCalibration& h100 = model.collectives[1];
  const CollectiveCalibration& a100 = model.collectives[0];
  auto out = Predict(
      "gpu,op,dtype,ranks,elements,bytes,note\n"
      "H100-SXM5-80GB,all_reduce,half,8,524288,1048576,measured\n"
      "NVIDIA H100 80GB HBM3,all_gather,half,8,,1000000,interpolated\n"
      ",all_reduce,bfloat16,8,,1048576,another dtype\n"
      "B200,all_reduce,half,8,524288,1048576,another GPU\n"
      "V100-SXM2-32GB,alltoall,int8,8,4096,4096,another GPU\n"
      "H100-SXM5-80GB,broadcast,half,8,,1048576,never measured\n"
      "H100-SXM5-80GB,all_reduce,half,16,,1073741824,two nodes\n",
      kH100);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->rows, 7u);
  EXPECT_EQ(out->csv.substr(0, out->csv.find('\n')),
            "gpu,op,dtype,ranks,elements,bytes,note,predicted_us,source");
  auto query = [](CollectiveOp op, DataType type, uint32_t ranks, uint64_t bytes) {
    CollectiveQuery q;
    q.op = op;
    q.data_type = type;
    q.ranks = ranks;
    q.bytes = bytes;
    return q;
  };
  const CollectivePredictor own(h100.model);
  auto b200 = FabricFromSpecs(Gpu("B200"), &Net("ib400"));
  auto v100 = FabricFromSpecs(Gpu("V100-SXM2-32GB"), &Net("ib400"));
  CollectiveFabric across = h100.model.fabric;  // The same network: the same fabric.
  ASSERT_TRUE(b200.ok() && v100.ok());
  const struct {
    CollectivePrediction expected;
    const char* source;
  } rows[] = {
      {own.Predict(query(CollectiveOp::kAllReduce, DataType::kFloat16, 8, 1 << 20)), "measured"},
      {own.Predict(query(CollectiveOp::kAllGather, DataType::kFloat16, 8, 1000000)),
       "interpolated"},
      {own.Predict(query(CollectiveOp::kAllReduce, DataType::kBfloat16, 8, 1 << 20)),
       "scaled from H100-SXM5-80GB all_reduce fit"},
      {CollectivePredictor(h100.model, *b200)
           .Predict(query(CollectiveOp::kAllReduce, DataType::kFloat16, 8, 1 << 20)),
       "scaled from H100-SXM5-80GB all_reduce fit"},
      {CollectivePredictor(a100.model, *v100)
           .Predict(query(CollectiveOp::kAllToAll, DataType::kInt8, 8, 4096)),
       "scaled from A100-SXM4-80GB all_to_all fit"},
      {own.Predict(query(CollectiveOp::kBroadcast, DataType::kFloat16, 8, 1 << 20)),
       "scaled from H100-SXM5-80GB all_gather fit"},
      {CollectivePredictor(h100.model, across)
           .Predict(query(CollectiveOp::kAllReduce, DataType::kFloat16, 16, 1ull << 30)),
       "model only (H100-SXM5-80GB all_reduce fit; network never measured)"},
  };
  for (size_t i = 0; i < std::size(rows); ++i) {
    const std::vector<std::string> cells = Cells(out->csv, i + 1);
    ASSERT_EQ(cells.size(), 9u) << i;
    EXPECT_EQ(cells[7], Us(rows[i].expected.duration_ns)) << cells[6];
    EXPECT_EQ(cells[8], rows[i].source) << cells[6];
  }
  EXPECT_EQ(own.Predict(query(CollectiveOp::kAllReduce, DataType::kFloat16, 8, 1 << 20)).source,
            CostSource::kMeasured);
  // The measured row is the table's own time (nccl_h100.csv: 25.4 us).
  EXPECT_EQ(Cells(out->csv, 1)[7], "25.400");
}

// Ranks across nodes cross the network: more nodes for the same ranks are slower, a faster
// network is faster, and within one node the network changes nothing.
TEST(CollectiveQueriesTest, NodesCrossTheNetworkOfTheQuery) {
  const std::string queries =
      "op,dtype,ranks,nodes,bytes\n"
      "all_reduce,bfloat16,8,1,268435456\n"
      "all_reduce,bfloat16,8,2,268435456\n"
      "all_reduce,bfloat16,8,8,268435456\n"
      "all_reduce,bfloat16,64,,1073741824\n";
  auto ib400 = Predict(queries, kH100, "ib400");
  auto ib800 = Predict(queries, kH100, "ib800");
  ASSERT_TRUE(ib400.ok() && ib800.ok()) << ib400.status().message();
  const double one_node = Us(Cells(ib400->csv, 1)[5]);
  const double two_nodes = Us(Cells(ib400->csv, 2)[5]);
  const double eight_nodes = Us(Cells(ib400->csv, 3)[5]);
  EXPECT_LT(one_node, two_nodes);
  EXPECT_LE(two_nodes, eight_nodes);
  EXPECT_EQ(Cells(ib800->csv, 1)[5], Cells(ib400->csv, 1)[5]);  // One node: no network.
  EXPECT_LT(Us(Cells(ib800->csv, 2)[5]), two_nodes);
  EXPECT_LT(Us(Cells(ib800->csv, 4)[5]), Us(Cells(ib400->csv, 4)[5]));
  EXPECT_EQ(Cells(ib400->csv, 2)[6],
            "model only (H100-SXM5-80GB all_reduce fit; network never measured)");
  // 64 ranks without a nodes column: 8 NVLink domains of 8, whose 8 NICs carry what leaves
  // each (the ring's bandwidth term is 2 (n-1)/n of the bytes at 8 x 50 GB/s at best).
  const double ring_us = 2.0 * 63 / 64 * (1ull << 30) / (8 * 50e9) * 1e6;
  EXPECT_GT(Us(Cells(ib400->csv, 4)[5]), ring_us);
  // The same spread one a node: every byte through one GPU's NIC.
  auto spread =
      Predict("op,dtype,ranks,nodes,bytes\nall_reduce,bfloat16,64,64,1073741824\n", kH100, "ib400");
  ASSERT_TRUE(spread.ok());
  EXPECT_GT(Us(Cells(spread->csv, 1)[5]), 8 * ring_us);
  // On B200 over ib800 the same 1 GiB on 64 GPUs takes less than on H100 over ib400.
  auto b200 = Predict(queries, "B200", "ib800");
  ASSERT_TRUE(b200.ok());
  EXPECT_LT(Us(Cells(b200->csv, 4)[5]), Us(Cells(ib400->csv, 4)[5]));
}

TEST(CollectiveQueriesTest, WithoutCollectivesInTheModelItIsNcclsConstants) {
  const CostModel empty;
  auto out = Predict("op,dtype,ranks,bytes\nall_gather,half,8,65536\n", kH100, "ib400", empty);
  ASSERT_TRUE(out.ok()) << out.status().message();
  auto fabric = FabricFromSpecs(Gpu(kH100), &Net("ib400"));
  CollectiveModel constants;
  constants.fabric = *fabric;
  CollectiveQuery q;
  q.op = CollectiveOp::kAllGather;
  q.data_type = DataType::kFloat16;
  q.ranks = 8;
  q.bytes = 65536;
  const std::vector<std::string> cells = Cells(out->csv, 1);
  EXPECT_EQ(cells[4], Us(CollectivePredictor(constants).Predict(q).duration_ns));
  EXPECT_EQ(cells[5], "model only (NCCL's constants)");
}

struct BadRow {
  const char* name;
  const char* queries;
  const char* error;  // The whole message.
};

class CollectiveBadQueryTest : public ::testing::TestWithParam<BadRow> {};

TEST_P(CollectiveBadQueryTest, IsOneErrorNamingTheRow) {
  auto out = Predict(GetParam().queries, nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, CollectiveBadQueryTest,
    ::testing::Values(
        BadRow{"UnknownOp",
               "gpu,op,dtype,ranks,bytes\nB200,all_reduce,half,8,8\nB200,allsum,half,8,8\n",
               "q.csv:3: op: unknown 'allsum' (all_reduce, all_gather, reduce_scatter, alltoall, "
               "broadcast, reduce, send, recv, sendrecv)"},
        BadRow{"UnknownDtype", "gpu,op,dtype,ranks,bytes\nB200,all_reduce,fp4,8,8\n",
               "q.csv:2: dtype: unknown 'fp4' (half, bfloat16, float, double, int8, uint8, "
               "int32, uint32, int64, uint64, fp8, e5m2)"},
        BadRow{"ZeroRanks", "gpu,op,dtype,ranks,bytes\nB200,all_reduce,half,0,8\n",
               "q.csv:2: ranks: '0' must be a whole number > 0"},
        BadRow{"NegativeBytes", "gpu,op,dtype,ranks,bytes\nB200,all_reduce,half,8,-8\n",
               "q.csv:2: bytes: '-8' must be a whole number > 0"},
        BadRow{"TooManyRanks", "gpu,op,dtype,ranks,bytes\nB200,all_reduce,half,16777217,8\n",
               "q.csv:2: ranks: 16777217 is more than 16777216"},
        BadRow{"ElementsAndBytesDisagree",
               "gpu,op,dtype,ranks,elements,bytes\nB200,all_reduce,half,8,8,8\n",
               "q.csv:2: bytes 8 is not elements 8 x 2 (half)"},
        BadRow{"MoreNodesThanRanks", "gpu,op,dtype,ranks,nodes,bytes\nB200,all_reduce,half,4,8,8\n",
               "q.csv:2: nodes: 8 is more than the 4 ranks"},
        BadRow{"MoreRanksThanTheNodesHold",
               "gpu,op,dtype,ranks,nodes,bytes\nB200,all_reduce,half,24,2,8\n",
               "q.csv:2: 24 ranks on 2 node(s): more than the 8 GPUs of an NVLink domain of B200 "
               "on each"},
        BadRow{"UnknownGpu", "gpu,op,dtype,ranks,bytes\nTPUv5,all_reduce,half,8,8\n",
               "q.csv:2: gpu 'TPUv5' is not in the specs (known: V100-SXM2-32GB, A100-SXM4-40GB, "
               "A100-SXM4-80GB, H100-SXM5-80GB, H200-SXM-141GB, B200, GB200; add it with --specs "
               "FILE)"},
        BadRow{"NoGpu", "gpu,op,dtype,ranks,bytes\n,all_reduce,half,8,8\n",
               "q.csv:2: no gpu (the row names none and no --gpu was given)"},
        BadRow{"MissingField", "gpu,op,dtype,ranks,bytes\nB200,all_reduce,half,8\n",
               "q.csv:2: 4 fields, the header has 5"},
        BadRow{"AnOutputAsInput",
               "gpu,op,dtype,ranks,bytes,predicted_us,source\nB200,all_reduce,half,8,8,1,x\n",
               "q.csv: already has a predicted_us column (an output of costs predict?)"}),
    [](const ::testing::TestParamInfo<BadRow>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace lumos::modeler::models
