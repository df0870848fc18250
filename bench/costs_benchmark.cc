// The GEMM cost model's query rate (issue 13, item 7: >= 1M queries/s on one core), on a model
// fitted to the shared measured tables (../shared/data/costs: A100 bf16, H100 bf16 and fp8).
// The queries are a fixed mix (seed 13), generated once: a third measured shapes, a third
// unseen shapes between measured ones, a sixth beyond the measured range, and a sixth on GPUs
// without a calibration (B200, H200: carried over through both rooflines). Each iteration
// answers one query; items_per_second is queries/s. BM_CostsPredictCsv is the whole of
// `costs predict` after reading: CSV rows in, CSV text out.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "modeler/models/cost_model.h"
#include "modeler/models/cost_queries.h"
#include "modeler/models/hardware_specs.h"

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
  auto table = ParseCsv(text, "queries.csv");
  for (auto _ : state) {
    auto out = PredictCostQueries(*Model(), *table, nullptr, SpecTable::Builtin());
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(queries.size()));
}
BENCHMARK(BM_CostsPredictCsv)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lumos::modeler::models
