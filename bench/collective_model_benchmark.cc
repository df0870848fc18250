// The collective cost model's answers per second on one core (issue 13: >= 1 M queries/s),
// with a model fitted once on NVIDIA's H100 table (../shared/data/costs/nccl_h100.csv). The
// queries are a fixed pseudo-random mix (seed 1) of 4096: every operation, data type float16 /
// bfloat16 / float32 / int8, 1 B to 8 GiB, 2 to 4096 ranks; items are queries.
//   BM_CollectivePredictScaled     another fabric (A100 + a 400 Gb/s-per-GPU network): the
//                                  formula, no lookups, multi-node queries included
//   BM_CollectivePredictOnModel    the model's own fabric with a network: measured and
//                                  interpolated answers need the lookup in the measurements
//   BM_CollectivePredictMeasured   the table's own rows: every answer a lookup hit
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "modeler/models/collectives/collective_calibration.h"
#include "modeler/models/collectives/collective_fit.h"
#include "modeler/models/collectives/collective_validation.h"

namespace lumos::bench {
namespace {

// NOLINTNEXTLINE(google-build-using-namespace): one module's bench.
using namespace ::lumos::modeler::models;

CollectiveFabric WithNetwork(CollectiveFabric f) {
  f.inter_bandwidth_gbps = 50;
  return f;
}

const CalibrationSet& Table() {
  static const CalibrationSet* table = [] {
    StatusOr<CalibrationSet> set =
        ReadCollectiveTable(std::string(LUMOS_SOURCE_DIR) + "/../shared/data/costs/nccl_h100.csv");
    if (!set.ok()) {
      std::fprintf(stderr, "%s\n", set.status().message().c_str());
      std::exit(1);
    }
    return new CalibrationSet(std::move(set).value());
  }();
  return *table;
}

const CollectiveModel& Model() {
  static const CollectiveModel* model = [] {
    StatusOr<CollectiveModel> m = FitCollectiveModel(Table(), WithNetwork(H100SxmFabric()));
    if (!m.ok()) std::exit(1);
    return new CollectiveModel(std::move(m).value());
  }();
  return *model;
}

std::vector<CollectiveQuery> Mix() {
  std::mt19937_64 rng(1);
  const schema::CollectiveOp ops[] = {
      schema::CollectiveOp::kAllReduce,     schema::CollectiveOp::kAllGather,
      schema::CollectiveOp::kReduceScatter, schema::CollectiveOp::kAllToAll,
      schema::CollectiveOp::kBroadcast,     schema::CollectiveOp::kSendRecv};
  const schema::DataType types[] = {schema::DataType::kFloat16, schema::DataType::kBfloat16,
                                    schema::DataType::kFloat32, schema::DataType::kInt8};
  std::vector<CollectiveQuery> queries(4096);
  for (CollectiveQuery& q : queries) {
    q.op = ops[rng() % 6];
    q.data_type = types[rng() % 4];
    q.bytes = uint64_t{1} << (rng() % 33);
    q.bytes += rng() % q.bytes;
    q.ranks = q.op == schema::CollectiveOp::kSendRecv ? 2 : 2u << (rng() % 12);
  }
  return queries;
}

void Run(benchmark::State& state, const CollectivePredictor& predictor,
         const std::vector<CollectiveQuery>& queries) {
  size_t i = 0;
  int64_t sum = 0;
  for (auto _ : state) {
    sum += predictor.Predict(queries[i]).duration_ns;
    i = (i + 1) % queries.size();
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}

void BM_CollectivePredictScaled(benchmark::State& state) {
  const CollectivePredictor predictor(Model(), WithNetwork(A100SxmFabric()));
  Run(state, predictor, Mix());
}
BENCHMARK(BM_CollectivePredictScaled);

void BM_CollectivePredictOnModel(benchmark::State& state) {
  const CollectivePredictor predictor(Model());
  Run(state, predictor, Mix());
}
BENCHMARK(BM_CollectivePredictOnModel);

void BM_CollectivePredictMeasured(benchmark::State& state) {
  const CollectivePredictor predictor(Model());
  std::vector<CollectiveQuery> queries;
  for (const CalibrationPoint& p : Table().points) {
    CollectiveQuery q;
    q.op = p.op;
    q.data_type = p.data_type;
    q.bytes = p.bytes;
    q.ranks = p.ranks;
    queries.push_back(q);
  }
  Run(state, predictor, queries);
}
BENCHMARK(BM_CollectivePredictMeasured);

}  // namespace
}  // namespace lumos::bench
