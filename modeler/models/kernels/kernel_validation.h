// Design: the non-GEMM kernel model's validation on real traces (docs/validation.md, "Non-GEMM
// kernels"), shared by its test (tests/modeler/models/kernels/kernel_validation_test.cc, which
// asserts what holds) and the report tool (bench/kernel_validation.cc,
// scripts/validate-kernels.sh). A trace set is the PyTorch profiler traces of one job on one GPU
// model (DLRM's 8 V100 ranks; one HTA trace). Its samples are the GPU records of known work
// (kernel_kineto.h, RecordWork: copies and memsets by their bytes, kernels of single-kernel ops
// with shapes by OpWork), in file and record order; sample i is in the calibration half when
// InCalibrationHalf(i, seed) (gemm_validation.h), else it is scored. Calibration and scored samples
// never mix:
//   * Predict: per key, (e, floor) fitted on the calibration half (at least
//     KernelCalibration::kMinSamples samples, else the key has no calibration and predicts
//     from the roofline), scored on the other half against two baselines: the roofline only
//     (e = 1, the default floor) and the class mean efficiency (e = the mean of roofline /
//     measured over the calibration half, the default floor);
//   * Scale: within the scored half, the same kernel name at two different sizes (bytes), each
//     size's duration the median of its measurements; every ordered pair predicts the second
//     from the first with the factor of their work, on the same GPU (the floor from the
//     calibration half), against "proportional" (t × the bytes factor) and "unchanged" (t).
//     Beside it, the spread of a kernel measured again at the same size (what no model beats).
// Cross-GPU: no job here ran on two GPU models, so nothing is scored across GPUs.
// Errors are |predicted − measured| / measured as in gemm_validation.h (median, p90,
// time-weighted).
// Threading: no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/gemm/gemm_validation.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/kernels/kernel_kineto.h"
#include "modeler/models/kernels/kernel_model.h"

namespace lumos::modeler::models {

struct KernelTraceSet {
  std::string name;  // "dlrm-8rank-v100", "control"
  std::vector<KinetoKernelTrace> traces;
  const GpuSpec* gpu = nullptr;
};

// The trace sets of ../shared/data/traces (`dir`) whose kernels can be validated: DLRM's 8 V100
// ranks (op shapes), HTA's control (A100 40 GB, shapes) and rank0 (A100 80 GB, shapes, CUDA
// graphs), df_index_resolver (V100) and nccl_data (A100 40 GB), which have no op shapes: only
// their copies and memsets count.
struct KernelTraceSetFiles {
  std::string name;
  std::vector<std::string> paths;
};
std::vector<KernelTraceSetFiles> SharedKernelTraceSets(const std::string& dir);

// Reads `paths` (kernel_kineto.h) and finds their GPU in `specs` by the traces' device name
// (all must agree).
StatusOr<KernelTraceSet> LoadKernelTraceSet(std::string name, const std::vector<std::string>& paths,
                                            const SpecTable& specs);

struct KeyValidation {
  KernelKey key;
  int64_t class_time_ns = 0;  // All records of the key in the set.
  int64_t known_time_ns = 0;  // Those of known work (the samples).
  size_t calibration_samples = 0;
  bool calibrated = false;  // Enough samples for a fit.
  double efficiency = 0;    // The fit's (when calibrated).
  int64_t floor_ns = 0;
  ErrorStats ours;
  ErrorStats roofline;
  ErrorStats mean_efficiency;
};

// One row of the Scale table: ours with the work known, ours with the bytes factor only (no
// FLOPs or bytes given: the class's bound), and the baselines.
struct ScaleErrors {
  ErrorStats ours;
  ErrorStats bytes_only;
  ErrorStats proportional;  // t × the bytes factor.
  ErrorStats unchanged;     // t.
};

struct ScaleValidation {
  size_t names = 0;  // Kernel names with two sizes or more in the scored half.
  ScaleErrors all;
  ScaleErrors near;   // Bytes factor within 4× either way (hidden ×2, sequence ×2, ...).
  ScaleErrors far;    // Beyond.
  ErrorStats repeat;  // The same kernel and size measured again: what no model beats.
};

struct TraceSetValidation {
  std::string name;
  std::string gpu;
  size_t records = 0;
  size_t samples = 0;
  std::vector<KeyValidation> keys;  // By class, then copy kind.
  ScaleValidation scale;
  KernelModel model;  // Fitted on the calibration half.
};

StatusOr<TraceSetValidation> ValidateKernelTraceSet(const KernelTraceSet& set, uint64_t seed);

// Markdown tables of `results` (docs/validation.md).
std::string KernelValidationMarkdown(const std::vector<TraceSetValidation>& results);

}  // namespace lumos::modeler::models
