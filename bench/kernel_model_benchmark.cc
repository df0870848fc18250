// The non-GEMM kernel model's query rate (issue 13: >= 1M queries/s on one core), on the model
// fitted to the real DLRM trace (../shared/data/traces/dlrm-8rank-v100: V100 calibrations of
// elementwise, reduction, copies and memsets). The queries are a fixed mix (seed 13), generated
// once: classes with and without a calibration, 1 KB to 1 GB, on the V100 (own calibration),
// A100 and H100 (carried over). BM_KernelPredict answers KernelModel::Predict;
// BM_KernelScale scales a measured kernel of known work by factors of 1/4 to 4 to another GPU;
// BM_KernelScaleBytesOnly the same without its work (the class's bound). Each iteration answers
// one query; items_per_second is queries/s.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/kernels/kernel_validation.h"

namespace lumos::modeler::models {
namespace {

const KernelModel* Model() {
  static const KernelModel* const model = [] {
    auto set = LoadKernelTraceSet("dlrm",
                                  {std::string(LUMOS_SOURCE_DIR) +
                                   "/../shared/data/traces/dlrm-8rank-v100/dlrm_kineto.tar.gz"},
                                  SpecTable::Builtin());
    if (!set.ok()) {
      std::fprintf(stderr, "%s\n", set.status().message().c_str());
      return static_cast<KernelModel*>(nullptr);
    }
    auto v = ValidateKernelTraceSet(*set, kValidationSeed);
    if (!v.ok()) {
      std::fprintf(stderr, "%s\n", v.status().message().c_str());
      return static_cast<KernelModel*>(nullptr);
    }
    return new KernelModel(std::move(v->model));
  }();
  return model;
}

struct Mix {
  std::vector<KernelWorkQuery> predict;
  std::vector<MeasuredKernel> measured;
  std::vector<WorkFactors> factors;
  std::vector<const GpuSpec*> to;
};

const Mix& Queries() {
  static const Mix* const mix = [] {
    const SpecTable& specs = SpecTable::Builtin();
    const GpuSpec* gpus[] = {specs.FindGpu("V100-SXM2-32GB"), specs.FindGpu("A100-SXM4-80GB"),
                             specs.FindGpu("H100-SXM5-80GB")};
    const KernelKey keys[] = {{KernelClass::kElementwise},
                              {KernelClass::kReduction},
                              {KernelClass::kNorm},
                              {KernelClass::kSoftmax},
                              {KernelClass::kMemcpy, CopyKind::kDeviceToDevice},
                              {KernelClass::kMemcpy, CopyKind::kHostToDevice, false},
                              {KernelClass::kMemset}};
    std::mt19937_64 random(13);
    std::uniform_real_distribution<double> log_bytes(std::log(1e3), std::log(1e9));
    std::uniform_real_distribution<double> log_factor(std::log(0.25), std::log(4.0));
    auto* m = new Mix;
    for (int i = 0; i < (1 << 16); ++i) {
      const KernelKey key = keys[random() % std::size(keys)];
      const double bytes = std::exp(log_bytes(random));
      const KernelWork work{bytes / 4, bytes};
      m->predict.push_back({key, work, DType::kFp32, gpus[random() % 3]});
      const GpuSpec* from = gpus[random() % 3];
      m->measured.push_back({key, std::llround(2500 + bytes / from->hbm_bytes_per_s * 1.5e9), from,
                             DType::kFp32, work, "kernel"});
      const double f = std::exp(log_factor(random));
      m->factors.push_back({f, f});
      m->to.push_back(gpus[random() % 3]);
    }
    return m;
  }();
  return *mix;
}

void BM_KernelPredict(benchmark::State& state) {
  if (Model() == nullptr) {
    state.SkipWithError("no model (../shared/data/traces missing?)");
    return;
  }
  const Mix& mix = Queries();
  size_t i = 0;
  int64_t sum = 0;
  for (auto _ : state) {
    auto p = Model()->Predict(mix.predict[i]);
    sum += p.ok() ? p->duration_ns : 0;
    i = (i + 1) & (mix.predict.size() - 1);
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KernelPredict);

void Scale(benchmark::State& state, bool with_work) {
  if (Model() == nullptr) {
    state.SkipWithError("no model (../shared/data/traces missing?)");
    return;
  }
  const Mix& mix = Queries();
  std::vector<MeasuredKernel> measured = mix.measured;
  if (!with_work) {
    for (MeasuredKernel& k : measured) k.work = {};
  }
  size_t i = 0;
  int64_t sum = 0;
  for (auto _ : state) {
    auto p = Model()->Scale(measured[i], mix.factors[i], *mix.to[i]);
    sum += p.ok() ? p->duration_ns : 0;
    i = (i + 1) & (measured.size() - 1);
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}

void BM_KernelScale(benchmark::State& state) { Scale(state, true); }
BENCHMARK(BM_KernelScale);

void BM_KernelScaleBytesOnly(benchmark::State& state) { Scale(state, false); }
BENCHMARK(BM_KernelScaleBytesOnly);

}  // namespace
}  // namespace lumos::modeler::models
