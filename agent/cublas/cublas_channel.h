// Design: the cublas channel's recording side, shared by the LD_PRELOAD wrappers
// (cublas_wrappers.cc, only in liblumos_agent.so) and the tests and benchmarks that drive it
// in-process. cuBLAS types stay in this folder (STYLE.md 1.2): callers outside it see
// GemmProblem, in schema enums.
//   Channel gate: CublasChannelOn() is decided once (LUMOS_ENABLE, LUMOS_CHANNELS, Agent::
//     Start(), at the first GEMM call of the process) and then costs one relaxed load; relaxed
//     is enough, the word publishes no data (the rings are published by Agent::rings()'
//     acquire). Off: the wrappers only pass through.
//   The problem of a call: the wrappers fill a GemmProblem from their arguments (cuBLAS) or by
//     reading the matmul descriptor and the matrix layouts (ReadLtProblem, cuBLASLt's own
//     getters, cheap host calls that neither allocate nor lock nor make a syscall:
//     docs/performance.md "cuBLAS channel"), then PushGemmRecord puts one record (two when a
//     dimension needs more than 32 bits) into the calling thread's ring.
//   Linking to kernels: the record carries the thread and the host span of the call; the
//     CUPTI callback channel records the launches cuBLAS makes inside it on the same thread
//     with the same clock, and the modeler attaches the shape to the kernels of those launches
//     (modeler/trace/gemm_link.h).
// Hot path (STYLE.md 5): one relaxed load, plain arithmetic and table look-ups, up to eleven
// cuBLASLt getter calls (cuBLASLt only), one ring push. No allocation, lock, syscall or log.
// Threading: any thread; pushes go to the calling thread's ring.
#pragma once

#include <cublasLt.h>
#include <cublas_api.h>

#include <cstdint>

#include "schema/enums.h"

namespace lumos::agent::cublas {

// True when the cublas channel is enabled and the agent runs. The first call starts the agent
// (not async-signal-safe; never from a signal handler). Never throws.
bool CublasChannelOn() noexcept;

// One GEMM call, in schema terms (GemmCall in schema/lumos/trace.proto).
struct GemmProblem {
  schema::GemmApi api = schema::GemmApi::kUnspecified;
  uint64_t m = 0, n = 0, k = 0;
  uint64_t batch_count = 1;
  schema::GemmTranspose transa = schema::GemmTranspose::kUnspecified;
  schema::GemmTranspose transb = schema::GemmTranspose::kUnspecified;
  schema::DataType a_type = schema::DataType::kUnspecified;
  schema::DataType b_type = schema::DataType::kUnspecified;
  schema::DataType c_type = schema::DataType::kUnspecified;
  schema::DataType d_type = schema::DataType::kUnspecified;
  schema::GemmComputeType compute_type = schema::GemmComputeType::kUnspecified;
  schema::GemmMathMode math_mode = schema::GemmMathMode::kUnspecified;
  uint64_t stream_id = 0;
};

// cuBLAS / CUDA enums -> schema enums (UNSPECIFIED for values this build does not know).
schema::DataType DataTypeFromCuda(cudaDataType type) noexcept;
schema::GemmTranspose TransposeFromCublas(cublasOperation_t op) noexcept;
schema::GemmComputeType ComputeTypeFromCublas(cublasComputeType_t type) noexcept;
// The DISALLOW_REDUCED_PRECISION_REDUCTION flag is dropped.
schema::GemmMathMode MathModeFromCublas(cublasMath_t mode) noexcept;

// A negative dimension (an invalid call, which cuBLAS refuses) reads as 0: not known.
inline uint64_t Dimension(int64_t value) noexcept {
  return value > 0 ? static_cast<uint64_t>(value) : 0;
}

// The cuBLASLt getters of the library whose cublasLtMatmul the call goes to.
struct LtGetters {
  decltype(&cublasLtMatmulDescGetAttribute) desc_get = nullptr;
  decltype(&cublasLtMatrixLayoutGetAttribute) layout_get = nullptr;
};

// Fills `problem` from the matmul descriptor and the layouts (D may be null: C's): m and n from
// D's rows and columns, k from A's columns (rows when A is transposed), batch count from D,
// types from every layout, transposes and compute type from the descriptor. Whatever cannot be
// read (no getters, a null layout, a getter that fails) stays "not known" (0). Eleven getter
// calls at most (ten when C and D share a layout).
void ReadLtProblem(const LtGetters& getters, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
                   cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                   GemmProblem* problem) noexcept;

// One GemmCall record (host start/end in CLOCK_MONOTONIC, this thread, cuBLAS's status) into
// the calling thread's ring; drop-and-count when it is full. No-op before the agent started.
void PushGemmRecord(const GemmProblem& problem, int64_t start_ns, int64_t end_ns,
                    int32_t status) noexcept;

}  // namespace lumos::agent::cublas
