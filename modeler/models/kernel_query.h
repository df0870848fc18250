// Design: what a kernel cost model is asked and what it answers. A query is a kernel class, its
// shape, its dtype and the GPU it runs on; the answer is a duration in integer ns with its
// source: what the figure rests on (a measurement of that very kernel, an interpolation among
// measured neighbours, a measurement on another GPU or dtype carried over through both
// rooflines, the fitted efficiency surface alone, or the bare roofline), so a report can say
// how much of an estimate rests on what.
// Only GEMMs have a model yet; attention, elementwise, norm, ... come as further classes with
// their own shape (by FLOPs and bytes, calibrated from a trace's own kernels) once traces carry
// kernel shapes; a class is one more enum value and one more shape member.
// Threading: plain values.
#pragma once

#include <cstdint>

#include "modeler/models/dtype.h"

namespace lumos::modeler::models {

struct GpuSpec;

enum class KernelClass : uint8_t { kGemm = 0 };

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
};

struct Prediction {
  int64_t duration_ns = 0;
  SourceKind source = SourceKind::kRoofline;
  int32_t calibration = -1;   // Which calibration of the model it rests on; -1: none.
  bool batch_folded = false;  // batch > 1 was looked up as a GEMM of m·batch rows.
};

}  // namespace lumos::modeler::models
