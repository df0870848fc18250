// The GEMM cost model's query rate (issue 13, item 7: >= 1M queries/s on one core), on a model
// fitted to the shared measured tables (../shared/data/costs: A100 bf16, H100 bf16 and fp8).
// The queries are a fixed mix (seed 13), generated once: a third measured shapes, a third
// unseen shapes between measured ones, a sixth beyond the measured range, and a sixth on GPUs
// without a calibration (B200, H200: carried over through both rooflines). Each iteration
// answers one query; items_per_second is queries/s. BM_CostsPredictCsv is the whole of
// `costs predict` after reading: CSV rows in, CSV text out.
// Collectives: a model fitted by `costs fit` on both NCCL tables (H100, A100); a fixed mix of
// 16,384 queries (seed 17): every operation, half / bfloat16 / float / int8, 1 B to 8 GiB,
// 2 to 512 ranks (most across nodes, over ib400), on H100 and A100 (their own calibrations:
// measured and interpolated answers where they were measured) and on B200 and H200 (carried
// from H100). BM_CostsPredictCollective is one CollectivePredictor::Predict on the fabric the
// command builds for the row (the model); BM_CostsPredictCollectiveCsv the whole of `costs
// predict` after reading, as for GEMMs.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "modeler/models/collectives/collective_calibration.h"
#include "modeler/models/collectives/collective_costs.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/costs/cost_queries.h"
#include "modeler/models/hardware/hardware_specs.h"

namespace lumos::modeler::models {
namespace {

std::string Costs(const std::string& name) {
  return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/costs/" + name;
}

const CostModel* Model() {
  static const CostModel* const model = [] {
    auto fitted = FitCostTables(
        {Costs("gemm_a100_bf16.csv"), Costs("gemm_h100_bf16.csv"), Costs("gemm_h100_fp8.csv")},
        SpecTable::Builtin());
    if (!fitted.ok()) {
      std::fprintf(stderr, "%s\n", fitted.status().message().c_str());
      return static_cast<CostModel*>(nullptr);
    }
    return new CostModel(std::move(*fitted));
  }();
  return model;
}

std::vector<KernelQuery> Queries(size_t count) {
  const SpecTable& specs = SpecTable::Builtin();
  const GpuSpec* gpus[] = {specs.FindGpu("H100-SXM5-80GB"), specs.FindGpu("B200"),
                           specs.FindGpu("H200-SXM-141GB")};
  const std::vector<GemmPoint>& measured = Model()->gemm.calibrations()[1].points();  // H100.
  std::mt19937_64 random(13);
  std::vector<KernelQuery> queries(count);
  for (KernelQuery& q : queries) {
    const GemmPoint& p = measured[random() % measured.size()];
    q.gemm = p.shape;
    q.dtype = random() % 4 == 0 ? DType::kFp8 : DType::kBf16;
    q.gpu = gpus[0];
    switch (random() % 6) {
      case 0:
      case 1:
        break;  // Measured.
      case 2:
      case 3:
        q.gemm.m = q.gemm.m * 3 / 2 + 1;  // Unseen, between measured ones (mostly).
        q.gemm.k = q.gemm.k * 5 / 4 + 3;
        break;
      case 4:
        q.gemm.m *= 8;  // Beyond m = 32768 for the largest.
        q.gemm.n += 7;
        break;
      default:
        q.gpu = gpus[1 + random() % 2];
        break;
    }
  }
  return queries;
}

void BM_CostsPredictGemm(benchmark::State& state) {
  if (Model() == nullptr) {
    state.SkipWithError("no model (../shared/data/costs missing?)");
    return;
  }
  const std::vector<KernelQuery> queries = Queries(1 << 16);
  size_t i = 0;
  int64_t sum = 0;
  for (auto _ : state) {
    auto p = Model()->gemm.Predict(queries[i]);
    sum += p.ok() ? p->duration_ns : 0;
    i = (i + 1) & (queries.size() - 1);
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CostsPredictGemm);

void BM_CostsPredictCsv(benchmark::State& state) {
  if (Model() == nullptr) {
    state.SkipWithError("no model (../shared/data/costs missing?)");
    return;
  }
  const std::vector<KernelQuery> queries = Queries(1 << 14);
  std::string text = "gpu,dtype,m,n,k\n";
  for (const KernelQuery& q : queries) {
    text += q.gpu->name + "," + std::string(DTypeName(q.dtype)) + "," + std::to_string(q.gemm.m) +
            "," + std::to_string(q.gemm.n) + "," + std::to_string(q.gemm.k) + "\n";
  }
  auto table = io::ParseCsv(text, "queries.csv");
  for (auto _ : state) {
    auto out = PredictCostQueries(*Model(), *table, nullptr, SpecTable::Builtin());
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(queries.size()));
}
BENCHMARK(BM_CostsPredictCsv)->Unit(benchmark::kMillisecond);

const CostModel* CollectiveModel() {
  static const CostModel* const model = [] {
    auto fitted =
        FitCostTables({Costs("nccl_h100.csv"), Costs("nccl_a100.csv")}, SpecTable::Builtin());
    if (!fitted.ok()) {
      std::fprintf(stderr, "%s\n", fitted.status().message().c_str());
      return static_cast<CostModel*>(nullptr);
    }
    return new CostModel(std::move(*fitted));
  }();
  return model;
}

struct CollectiveRowQuery {
  const char* gpu;
  const char* op;
  const char* dtype;
  uint32_t ranks;
  uint64_t bytes;
};

std::vector<CollectiveRowQuery> CollectiveMix(size_t count) {
  const char* gpus[] = {"H100-SXM5-80GB", "A100-SXM4-80GB", "B200", "H200-SXM-141GB"};
  const char* ops[] = {"all_reduce", "all_gather", "reduce_scatter",
                       "alltoall",   "broadcast",  "sendrecv"};
  const char* types[] = {"half", "bfloat16", "float", "int8"};
  std::mt19937_64 random(17);
  std::vector<CollectiveRowQuery> queries(count);
  for (CollectiveRowQuery& q : queries) {
    q.gpu = gpus[random() % 4];
    const size_t op = random() % 6;
    q.op = ops[op];
    q.dtype = types[random() % 4];
    q.bytes = uint64_t{1} << (random() % 33);
    q.bytes += random() % q.bytes;
    q.ranks = op == 5 ? 2 : 2u << (random() % 9);
    if (random() % 4 == 0) {  // A measured case: 8 ranks, a size of the tables.
      q.ranks = 8;
      q.bytes = uint64_t{512} << (random() % 21);
    }
  }
  return queries;
}

void BM_CostsPredictCollective(benchmark::State& state) {
  if (CollectiveModel() == nullptr) {
    state.SkipWithError("no model (../shared/data/costs missing?)");
    return;
  }
  // The predictors the command builds for each GPU (collective_costs.cc): a calibration's own
  // GPU on its stored fabric, another GPU on its fabric from the specs; ib400 between nodes.
  const SpecTable& specs = SpecTable::Builtin();
  const NetworkSpec& network = *specs.FindNetwork("ib400");
  const std::vector<CollectiveCalibration>& calibrations = CollectiveModel()->collectives;
  std::map<std::string, std::unique_ptr<CollectivePredictor>> predictors;
  for (const char* name : {"H100-SXM5-80GB", "A100-SXM4-80GB", "B200", "H200-SXM-141GB"}) {
    const GpuSpec& gpu = *specs.FindGpu(name);
    const CollectiveCalibration& c =
        calibrations[static_cast<size_t>(SelectCollectiveCalibration(calibrations, gpu))];
    auto fabric = FabricFromSpecs(gpu, &network);
    predictors[name] = std::make_unique<CollectivePredictor>(
        c.model, c.gpu == gpu.name ? c.model.fabric : *fabric);
  }
  std::vector<std::pair<const CollectivePredictor*, CollectiveQuery>> queries;
  for (const CollectiveRowQuery& r : CollectiveMix(1 << 14)) {
    CollectiveQuery q;
    q.op = *CollectiveOpFromTableName(r.op);
    q.data_type = *DataTypeFromTableName(r.dtype);
    q.ranks = r.ranks;
    q.bytes = r.bytes;
    queries.emplace_back(predictors[r.gpu].get(), q);
  }
  size_t i = 0;
  int64_t sum = 0;
  for (auto _ : state) {
    sum += queries[i].first->Predict(queries[i].second).duration_ns;
    i = (i + 1) & (queries.size() - 1);
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CostsPredictCollective);

void BM_CostsPredictCollectiveCsv(benchmark::State& state) {
  if (CollectiveModel() == nullptr) {
    state.SkipWithError("no model (../shared/data/costs missing?)");
    return;
  }
  const std::vector<CollectiveRowQuery> queries = CollectiveMix(1 << 14);
  std::string text = "gpu,op,dtype,ranks,bytes\n";
  for (const CollectiveRowQuery& q : queries) {
    text += std::string(q.gpu) + "," + q.op + "," + q.dtype + "," + std::to_string(q.ranks) + "," +
            std::to_string(q.bytes) + "\n";
  }
  auto table = io::ParseCsv(text, "queries.csv");
  const NetworkSpec& network = *SpecTable::Builtin().FindNetwork("ib400");
  for (auto _ : state) {
    auto out =
        PredictCostQueries(*CollectiveModel(), *table, nullptr, SpecTable::Builtin(), &network);
    if (!out.ok()) {
      state.SkipWithError(out.status().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(queries.size()));
}
BENCHMARK(BM_CostsPredictCollectiveCsv)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lumos::modeler::models
