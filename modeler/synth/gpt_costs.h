// Design: the durations `synth gpt` gives its GPU work, from the project's cost models on one
// GPU (hardware_specs.h): GEMMs from the GEMM model (gemm_model.h), attention, norms,
// elementwise, softmax, embedding, optimizer kernels and memsets from the kernel model of their
// class and work (kernel_model.h, classes by kernel name: kernel_class.h), all-reduces from the
// collective model on the GPU's fabric (collective_model.h: NCCL's algorithm and protocol
// choice, ranks beyond one NVLink domain over the network asked for, else the default one). With a
// fitted model file
// (`lumos-model costs fit`) its calibrations answer, else every model answers from its
// defaults (rooflines and NCCL's constants): what a GPU run would take by the models, not a
// measurement. Threading: built once, then const.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "base/status.h"
#include "modeler/models/collectives/collective_model.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/kernels/kernel_work.h"

namespace lumos::modeler {

class GptCosts {
 public:
  // `model` may be empty (no calibrations): the models' defaults. Collectives that span nodes
  // cross `network` (the specs' default network when null).
  static StatusOr<std::unique_ptr<GptCosts>> Make(const models::GpuSpec& gpu,
                                                  const models::SpecTable& specs,
                                                  models::CostModel model,
                                                  const models::NetworkSpec* network = nullptr);
  GptCosts(const GptCosts&) = delete;
  GptCosts& operator=(const GptCosts&) = delete;

  // A bf16 GEMM C[m x n] = A[m x k] B[k x n].
  StatusOr<int64_t> Gemm(int64_t m, int64_t n, int64_t k) const;
  // The same in `dtype` (fp8: e4m3 inputs, as the fp8 tables measure).
  StatusOr<int64_t> Gemm(int64_t m, int64_t n, int64_t k, models::DType dtype) const;
  // A kernel of the class its name says, moving `bytes` and doing `flops`.
  StatusOr<int64_t> Kernel(std::string_view name, double bytes, double flops,
                           models::DType dtype) const;
  StatusOr<int64_t> Attention(const models::AttentionShape& shape) const;
  StatusOr<int64_t> Memset(double bytes) const;

  struct Collective {
    int64_t transfer_ns = 0;
    schema::NcclAlgorithm algorithm = schema::NcclAlgorithm::kRing;
    schema::NcclProtocol protocol = schema::NcclProtocol::kSimple;
  };
  // An all-reduce of `bytes` per rank over `ranks` ranks.
  StatusOr<Collective> AllReduce(uint64_t bytes, schema::DataType type, uint32_t ranks) const;
  // Any collective `op` of `bytes` (the model's bytes: collective_class.h ModelBytes) over
  // `ranks` ranks on `nodes` nodes (0: as few as hold them).
  StatusOr<Collective> Run(schema::CollectiveOp op, uint64_t bytes, schema::DataType type,
                           uint32_t ranks, uint32_t nodes) const;

  const models::GpuSpec& gpu() const { return *gpu_; }

 private:
  GptCosts() = default;

  const models::GpuSpec* gpu_ = nullptr;
  models::CostModel model_;
  models::CollectiveModel constants_;  // When the model file has no collectives.
  std::unique_ptr<models::CollectivePredictor> collectives_;
};

}  // namespace lumos::modeler
