// The shape of cublas_gemm_calls.cu (run by cublas_gemm_workload.cu), shared with the checker
// (cublas_gemm_test.cc): the GEMM calls it makes, in order, each on one stream of its own
// making, with a kernel of its own (Fill) before each.
#pragma once

#include <cstdint>

#include "cuda_tests/workload_exit.h"

namespace lumos::cuda_tests {

enum class GemmEntry {
  kSgemm,                 // cublasSgemm_v2: float, N N.
  kGemmEx,                // cublasGemmEx: bf16 operands and output, compute 32F, T N.
  kGemmStridedBatchedEx,  // cublasGemmStridedBatchedEx: fp16, compute 32F, N N.
  kSgemmStridedBatched,   // cublasSgemmStridedBatched: float, N T.
  kLtMatmul,              // cublasLtMatmul: fp16 A, B, C = D, compute 32F, T N, strided batch.
};

struct GemmCallSpec {
  GemmEntry entry;
  const char* name;
  int m, n, k, batch;
};

inline constexpr GemmCallSpec kGemmCalls[] = {
    {GemmEntry::kSgemm, "cublasSgemm_v2", 256, 128, 64, 1},
    {GemmEntry::kGemmEx, "cublasGemmEx", 512, 256, 128, 1},
    {GemmEntry::kGemmStridedBatchedEx, "cublasGemmStridedBatchedEx", 128, 64, 32, 4},
    {GemmEntry::kSgemmStridedBatched, "cublasSgemmStridedBatched", 64, 96, 48, 3},
    {GemmEntry::kLtMatmul, "cublasLtMatmul", 192, 96, 64, 2},
};
inline constexpr int kGemmCallCount = sizeof(kGemmCalls) / sizeof(kGemmCalls[0]);

// The library holding the calls (beside the workload), linked against libcublas and
// libcublasLt, and its entry point: returns 0, 1 (a call failed, said on stderr) or
// kSkipExitCode (no GPU).
inline constexpr char kGemmLibrary[] = "libcublas_gemm_calls.so";
inline constexpr char kGemmEntryPoint[] = "lumos_cublas_gemm_calls";

}  // namespace lumos::cuda_tests
