// The cuBLAS / cuBLASLt call sequence every interposition workload runs (linked, dlopen'd): one
// call of every entry point the agent wraps, each with its own shape, so a test knows exactly
// what a trace must hold (ExpectedGemmCalls(), the spec the sequence itself is run from).
#pragma once

#include <cublasLt.h>
#include <cublas_api.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "schema/enums.h"

namespace lumos::testing {

// How an entry point takes its problem.
enum class GemmForm {
  kTyped,                 // cublas{S,D,C,Z}gemm_v2, cublasHgemm
  kTypedBatched,          // cublas?gemmBatched
  kTypedStrided,          // cublas?gemmStridedBatched
  kSgemmEx,               // cublasSgemmEx
  kGemmEx,                // cublasGemmEx
  kGemmBatchedEx,         // cublasGemmBatchedEx
  kGemmStridedBatchedEx,  // cublasGemmStridedBatchedEx
  kLtMatmul,              // cublasLtMatmul
};

// One call of the sequence and the GemmCall record it must leave.
struct ExpectedGemm {
  std::string entry;  // "cublasSgemm_v2_64"
  GemmForm form = GemmForm::kTyped;
  char element = 'S';                      // Typed forms: S, D, C, Z or H.
  bool wide = false;                       // The _64 entry point.
  int64_t m = 0, n = 0, k = 0, batch = 1;  // As passed (negative: an invalid call).
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  cudaDataType a_type = CUDA_R_32F, b_type = CUDA_R_32F, c_type = CUDA_R_32F, d_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  bool lt_shared_cd = false;  // cublasLtMatmul with Ddesc == Cdesc.
  // What the record holds (written out here, not derived with the agent's own mapping).
  schema::GemmApi api = schema::GemmApi::kUnspecified;
  schema::GemmTranspose record_transa = schema::GemmTranspose::kUnspecified;
  schema::GemmTranspose record_transb = schema::GemmTranspose::kUnspecified;
  schema::DataType record_a = schema::DataType::kUnspecified;
  schema::DataType record_b = schema::DataType::kUnspecified;
  schema::DataType record_c = schema::DataType::kUnspecified;
  schema::DataType record_d = schema::DataType::kUnspecified;
  schema::GemmComputeType record_compute = schema::GemmComputeType::kUnspecified;
  int expected_status = 0;  // cublasStatus_t the fake returns.
  bool runs_on_lt = false;  // The fake calls cublasLtMatmul inside it.
};

// Every call, in order.
const std::vector<ExpectedGemm>& ExpectedGemmCalls();

// The math mode and stream the sequence sets on its cuBLAS handle, and the stream it gives
// cublasLtMatmul.
inline constexpr cublasMath_t kSequenceMathMode = CUBLAS_TF32_TENSOR_OP_MATH;
inline constexpr uint64_t kSequenceStream = 0x5000;
inline constexpr uint64_t kSequenceLtStream = 0x6000;

// Looks an entry point up by its name ("cublasGemmEx"); null when missing.
using CublasLookup = void* (*)(const char* name);

// The pointer types of the entry points cuBLAS's header overloads (an inline C++ overload takes
// a cudaDataType compute type), which decltype cannot name.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
using GemmEx64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t,
                                      int64_t, int64_t, const void*, const void*, cudaDataType,
                                      int64_t, const void*, cudaDataType, int64_t, const void*,
                                      void*, cudaDataType, int64_t, cublasComputeType_t,
                                      cublasGemmAlgo_t);
using GemmBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                           int, int, int, const void*, const void* const[],
                                           cudaDataType, int, const void* const[], cudaDataType,
                                           int, const void*, void* const[], cudaDataType, int, int,
                                           cublasComputeType_t, cublasGemmAlgo_t);
using GemmBatchedEx64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                             int64_t, int64_t, int64_t, const void*,
                                             const void* const[], cudaDataType, int64_t,
                                             const void* const[], cudaDataType, int64_t,
                                             const void*, void* const[], cudaDataType, int64_t,
                                             int64_t, cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
    cudaDataType, int, long long int, const void*, cudaDataType, int, long long int, const void*,
    void*, cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedEx64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                                    cublasOperation_t, int64_t, int64_t, int64_t,
                                                    const void*, const void*, cudaDataType, int64_t,
                                                    long long int, const void*, cudaDataType,
                                                    int64_t, long long int, const void*, void*,
                                                    cudaDataType, int64_t, long long int, int64_t,
                                                    cublasComputeType_t, cublasGemmAlgo_t);

// Runs the sequence through `lookup`, printing one line per call ("cublasGemmEx 0": the status)
// to `out`. Returns 0, or 3 when an entry point or a helper cannot be found.
int RunCublasSequence(CublasLookup lookup, FILE* out);

}  // namespace lumos::testing
