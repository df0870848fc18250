// Design: what a kernel cost model is asked and what it answers. A query is a kernel class, its
// shape, its dtype and the GPU it runs on; the answer is a duration in integer ns with its
// source: what the figure rests on (a measurement of that very kernel, an interpolation among
// measured neighbours, a measurement on another GPU or dtype carried over through both
// rooflines, the fitted efficiency surface alone, or the bare roofline), so a report can say
// how much of an estimate rests on what.
// GEMMs have their own model (gemm_model.h, shape m, n, k, batch); every other class is modelled
// by its FLOPs and bytes (kernel_model.h: the roofline above a floor, a per-class efficiency
// calibrated from a trace's own kernels of that class, or a measured kernel scaled to new work
// and another GPU); how a kernel's class is recognised: kernel_class.h.
// Threading: plain values.
#pragma once

#include <cstdint>

#include "modeler/models/hardware/dtype.h"

namespace lumos::modeler::models {

struct GpuSpec;

// What a kernel does, as far as its cost goes (kernel_class.h names them and tells them apart).
enum class KernelClass : uint8_t {
  kGemm = 0,       // Matrix multiplies (cuBLAS, cuBLASLt, CUTLASS, GEMV): gemm_model.h.
  kAttention,      // Fused attention (FlashAttention, memory-efficient, cuDNN SDPA), fwd or bwd.
  kConvolution,    // cuDNN / CUTLASS convolutions (implicit GEMM, Winograd, FFT).
  kElementwise,    // Pointwise kernels, copies and layout transforms done by a kernel, fills.
  kNorm,           // Layer, RMS, batch, group norms, forward and backward.
  kSoftmax,        // Softmax and log-softmax, forward and backward.
  kReduction,      // Sums, means, max, scans, pooling.
  kOptimizer,      // Optimizer steps (multi_tensor_apply, fused Adam / SGD / ..., AMP unscale).
  kEmbedding,      // Embedding lookups and their backward, gathers, scatters, index kernels.
  kMemcpy,         // A copy (not a kernel: a trace's copy record, with bytes and direction).
  kMemset,         // A memset record.
  kCommunication,  // NCCL kernels: the collective model's (collective_model.h), not a kernel
                   // model's.
  kOther,          // None of the above (sorts, searches, unnamed generated kernels).
};
inline constexpr int kKernelClassCount = 13;

// C[m×n] = A[m×k]·B[k×n], `batch` times (a strided batched GEMM: every operand per batch).
struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;
};

struct KernelQuery {
  KernelClass kind = KernelClass::kGemm;
  GemmShape gemm;
  DType dtype = DType::kBf16;
  const GpuSpec* gpu = nullptr;  // The GPU it runs on (hardware_specs.h); not owned.
};

// What a predicted duration rests on, best first.
enum class SourceKind : uint8_t {
  kMeasured = 0,        // This shape, dtype and GPU were measured.
  kInterpolated,        // Among measured neighbouring shapes on this GPU and dtype.
  kScaledMeasured,      // A measurement of this shape on another GPU or dtype, carried over.
  kScaledInterpolated,  // Interpolated on another GPU or dtype, carried over.
  kSurface,             // Roofline times the efficiency surface fitted to a calibration.
  kRoofline,            // No calibration at all: the roofline and the default floor only.
  // Kernels other than GEMMs (kernel_model.h):
  kClassFit,  // The roofline at the efficiency and floor fitted to a trace's kernels of its class.
  kScaledKernel,  // A measured kernel carried to new work and/or another GPU through both
                  // rooflines.
};
inline constexpr int kSourceKindCount = 8;

struct Prediction {
  int64_t duration_ns = 0;
  SourceKind source = SourceKind::kRoofline;
  int32_t calibration = -1;   // Which calibration of the model it rests on; -1: none.
  bool batch_folded = false;  // batch > 1 was looked up as a GEMM of m·batch rows.
  // kScaledKernel: the measured kernel's work was not known (no FLOPs or bytes), so it was
  // scaled as its class's bound (memory, or compute for attention and convolutions) alone.
  bool work_assumed = false;
};

}  // namespace lumos::modeler::models
