#include "modeler/synth/gpt_costs.h"

#include "modeler/models/collectives/collective_class.h"
#include "modeler/models/collectives/collective_costs.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/kernels/kernel_class.h"

namespace lumos::modeler {

using models::DType;
using models::KernelClass;

StatusOr<std::unique_ptr<GptCosts>> GptCosts::Make(const models::GpuSpec& gpu,
                                                   const models::SpecTable& specs,
                                                   models::CostModel model,
                                                   const models::NetworkSpec* network) {
  std::unique_ptr<GptCosts> costs(new GptCosts());
  costs->gpu_ = &gpu;
  costs->model_ = std::move(model);
  if (network == nullptr) network = specs.FindNetwork(models::kDefaultNetwork);
  LUMOS_ASSIGN_OR_RETURN(models::CollectiveFabric fabric, models::FabricFromSpecs(gpu, network));
  // As `costs predict` answers: the GPU's own calibration on the fabric it was fitted on (the
  // network between nodes the one asked for), else the nearest GPU's carried to this fabric, else
  // NCCL's constants on it.
  const auto& calibrations = costs->model_.collectives;
  const int index = models::SelectCollectiveCalibration(calibrations, gpu);
  if (index >= 0 && calibrations[static_cast<size_t>(index)].gpu == gpu.name) {
    const models::CollectiveModel& own = calibrations[static_cast<size_t>(index)].model;
    models::CollectiveFabric across = own.fabric;
    across.inter_bandwidth_gbps = fabric.inter_bandwidth_gbps;
    across.inter_latency_us = fabric.inter_latency_us;
    costs->collectives_ = std::make_unique<models::CollectivePredictor>(own, across);
  } else if (index >= 0) {
    costs->collectives_ = std::make_unique<models::CollectivePredictor>(
        calibrations[static_cast<size_t>(index)].model, fabric);
  } else {
    costs->constants_.fabric = fabric;
    costs->collectives_ = std::make_unique<models::CollectivePredictor>(costs->constants_, fabric);
  }
  return costs;
}

StatusOr<int64_t> GptCosts::Gemm(int64_t m, int64_t n, int64_t k) const {
  return Gemm(m, n, k, DType::kBf16);
}

StatusOr<int64_t> GptCosts::Gemm(int64_t m, int64_t n, int64_t k, DType dtype) const {
  models::KernelQuery query;
  query.kind = KernelClass::kGemm;
  query.gemm = {m, n, k, 1};
  query.dtype = dtype;
  query.gpu = gpu_;
  LUMOS_ASSIGN_OR_RETURN(models::Prediction p, model_.gemm.Predict(query));
  return p.duration_ns;
}

StatusOr<int64_t> GptCosts::Kernel(std::string_view name, double bytes, double flops,
                                   DType dtype) const {
  models::KernelWorkQuery query;
  query.key.kind = models::ClassifyKernel(name);
  query.work = {flops, bytes};
  query.dtype = dtype;
  query.gpu = gpu_;
  LUMOS_ASSIGN_OR_RETURN(models::Prediction p, model_.kernels.Predict(query));
  return p.duration_ns;
}

StatusOr<int64_t> GptCosts::Attention(const models::AttentionShape& shape) const {
  LUMOS_ASSIGN_OR_RETURN(models::KernelWork work, models::AttentionWork(shape, DType::kBf16));
  models::KernelWorkQuery query;
  query.key.kind = KernelClass::kAttention;
  query.work = work;
  query.dtype = DType::kBf16;
  query.gpu = gpu_;
  LUMOS_ASSIGN_OR_RETURN(models::Prediction p, model_.kernels.Predict(query));
  return p.duration_ns;
}

StatusOr<int64_t> GptCosts::Memset(double bytes) const {
  models::KernelWorkQuery query;
  query.key.kind = KernelClass::kMemset;
  query.work = {0, bytes};
  query.dtype = DType::kBf16;
  query.gpu = gpu_;
  LUMOS_ASSIGN_OR_RETURN(models::Prediction p, model_.kernels.Predict(query));
  return p.duration_ns;
}

StatusOr<GptCosts::Collective> GptCosts::AllReduce(uint64_t bytes, schema::DataType type,
                                                   uint32_t ranks) const {
  return Run(schema::CollectiveOp::kAllReduce, bytes, type, ranks, 0);
}

StatusOr<GptCosts::Collective> GptCosts::Run(schema::CollectiveOp op, uint64_t bytes,
                                             schema::DataType type, uint32_t ranks,
                                             uint32_t nodes) const {
  models::CollectiveQuery query;
  query.op = op;
  query.data_type = type;
  query.bytes = bytes;
  query.ranks = ranks;
  query.nodes = nodes;
  const models::CollectivePrediction p = collectives_->Predict(query);
  if (p.source == models::CostSource::kNone || p.duration_ns <= 0) {
    const std::optional<models::CollectiveClass> cls = models::ClassOf(op);
    return ErrorStatus("the collective model cannot answer a %s of %llu bytes over %u ranks on %s",
                       cls ? models::ClassName(*cls) : "collective",
                       static_cast<unsigned long long>(bytes), ranks, gpu_->name.c_str());
  }
  return Collective{p.duration_ns, p.algorithm, p.protocol};
}

}  // namespace lumos::modeler
