// Design: the kernels, copies and memsets of a PyTorch profiler (Kineto) trace with what the
// Lumos trace format does not carry yet: the shapes of the op that launched each one (the
// `cpu_op`'s `Input Dims` and `Input type`). The non-GEMM kernel model is calibrated and
// validated on them (kernel_validation.h); `lumos-model import` keeps op names but not shapes.
// Each GPU record is linked to its launch (the `cuda_runtime` / `cuda_driver` call with the
// same correlation id), the launch to the innermost `cpu_op` on its thread around it
// (kernel_op_link.h), and to the `ProfilerStep#N` range around it. Classes come from
// ClassifyKernel (kernel name and op name); copies and memsets from their record's name
// ("Memcpy HtoD (Pinned -> Device)", "Memset (Device)") with the record's bytes.
// Inputs: a .json or .json.gz trace, or a tar(.gz) of them (one per rank), as `lumos-model
// import kineto` reads them (modeler/import), as a stream (modeler/io/kineto_stream.h): memory
// follows the events kept (about 256 B each, refused past the memory budget), not the text.
// Errors name the file (and the archive member), and for a malformed event its batch.
// Threading: one call per thread; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/kernels/kernel_model.h"
#include "modeler/models/kernels/kernel_op_work.h"

namespace lumos::modeler::models {

struct KinetoOp {
  std::string name;  // "aten::add_"
  std::vector<OpInput> inputs;
  bool has_shapes = false;   // The trace recorded `Input Dims` for it.
  uint32_t gpu_records = 0;  // Kernels, copies and memsets it launched.
};

struct KinetoGpuRecord {
  std::string name;
  KernelKey key;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  uint64_t bytes = 0;  // Copies and memsets (the record's); 0 for kernels.
  int32_t op = -1;     // Index into KinetoTrace::ops; -1: no op around its launch.
  int64_t step = -1;   // The ProfilerStep#N around its launch; -1: none.
};

struct KinetoKernelTrace {
  std::string source;  // The file, or "archive:member".
  std::string device;  // The CUDA device name of its first GPU record ("Tesla V100-SXM2-32GB").
  std::vector<KinetoGpuRecord> records;  // In the file's order.
  std::vector<KinetoOp> ops;             // Only the ops some record links to.
};

StatusOr<std::vector<KinetoKernelTrace>> ReadKinetoKernels(const std::string& path);

// The work of a record that is a calibration sample: a copy or memset (its bytes), or a kernel
// that is the only GPU record of an op with shapes and an OpWork rule; nullopt otherwise.
std::optional<KernelWork> RecordWork(const KinetoKernelTrace& trace, const KinetoGpuRecord& r);

}  // namespace lumos::modeler::models
