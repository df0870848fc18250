// A test double for libcublas.so.13 (SONAME libcublas.so.13, NEEDs libcublasLt.so.13, symbols
// versioned libcublas.so.13 like the real library's), for what cannot run here: real cuBLAS
// needs a GPU. It stands in for a GPU, not for cuBLAS's arithmetic: no GEMM computes anything.
//   Handles keep what the agent reads: the math mode (cublasSetMathMode / GetMathMode) and the
//   stream (cublasSetStream_v2 / GetStream_v2).
//   Every GEMM entry point the agent wraps (each also as _64) counts the call
//   (fake_cublas_gemm_calls) and returns CUBLAS_STATUS_INVALID_VALUE for a negative m, n, k or
//   batch count, CUBLAS_STATUS_NOT_INITIALIZED for a null handle, else CUBLAS_STATUS_SUCCESS.
//   cublasGemmEx and cublasGemmEx_64 run "on cuBLASLt" as the real ones can: they build a
//   matmul descriptor and layouts and call cublasLtMatmul through the PLT, where a preloaded
//   agent's wrapper sees the inner call.
//   Built twice: as here, and with FAKE_CUBLAS_BARE (fake_cublas_bare/): without
//   cublasGetMathMode and cublasGetStream_v2, so the agent's recording must fail open.
#include <cublasLt.h>
#include <cublas_api.h>

#include <atomic>
#include <cstdint>

struct cublasContext {
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
  cudaStream_t stream = nullptr;
};

namespace {

std::atomic<int> g_gemm_calls{0};

template <typename Int>
cublasStatus_t Gemm(cublasHandle_t handle, Int m, Int n, Int k, Int batch = 1) {
  g_gemm_calls.fetch_add(1);
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0 || batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

// cublasGemmEx on cuBLASLt: the same problem through cublasLtMatmul (PLT), column-major.
cublasStatus_t GemmOnLt(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                        uint64_t m, uint64_t n, uint64_t k, cudaDataType a_type,
                        cudaDataType b_type, cudaDataType c_type, cublasComputeType_t compute) {
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtCreate(&lt);
  cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F);
  int32_t op = transa;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof(op));
  op = transb;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op, sizeof(op));
  const bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
  cublasLtMatrixLayoutCreate(&a, a_type, ta ? k : m, ta ? m : k, static_cast<int64_t>(ta ? k : m));
  cublasLtMatrixLayoutCreate(&b, b_type, tb ? n : k, tb ? k : n, static_cast<int64_t>(tb ? n : k));
  cublasLtMatrixLayoutCreate(&c, c_type, m, n, static_cast<int64_t>(m));
  const cublasStatus_t status =
      cublasLtMatmul(lt, desc, nullptr, nullptr, a, nullptr, b, nullptr, nullptr, c, nullptr, c,
                     nullptr, nullptr, 0, handle->stream);
  cublasLtMatrixLayoutDestroy(c);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  return status;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int fake_cublas_gemm_calls() {
  return g_gemm_calls.load();
}

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new cublasContext();
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

#ifndef FAKE_CUBLAS_BARE
cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  if (handle == nullptr || mode == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  *mode = handle->math_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
  if (handle == nullptr || stream == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}
#endif

#define FAKE_TYPED_GEMM(NAME, T, INT)                                                            \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t, cublasOperation_t, INT m, INT n, \
                      INT k, const T*, const T*, INT, const T*, INT, const T*, T*, INT) {        \
    return Gemm<INT>(handle, m, n, k);                                                           \
  }
#define FAKE_TYPED_GEMM_BATCHED(NAME, T, INT)                                                    \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t, cublasOperation_t, INT m, INT n, \
                      INT k, const T*, const T* const[], INT, const T* const[], INT, const T*,   \
                      T* const[], INT, INT batch) {                                              \
    return Gemm<INT>(handle, m, n, k, batch);                                                    \
  }
#define FAKE_TYPED_GEMM_STRIDED(NAME, T, INT)                                                      \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t, cublasOperation_t, INT m, INT n,   \
                      INT k, const T*, const T*, INT, long long int, const T*, INT, long long int, \
                      const T*, T*, INT, long long int, INT batch) {                               \
    return Gemm<INT>(handle, m, n, k, batch);                                                      \
  }
// clang-format reflows X-macro lists differently on every pass (as in schema/enums.h).
// clang-format off
#define FAKE_TYPED_FAMILY(MACRO, S, D, C, Z, H)                                       \
  MACRO(cublas##S, float, int) MACRO(cublas##S##_64, float, int64_t)                  \
  MACRO(cublas##D, double, int) MACRO(cublas##D##_64, double, int64_t)                \
  MACRO(cublas##C, cuComplex, int) MACRO(cublas##C##_64, cuComplex, int64_t)          \
  MACRO(cublas##Z, cuDoubleComplex, int) MACRO(cublas##Z##_64, cuDoubleComplex, int64_t) \
  MACRO(cublas##H, __half, int) MACRO(cublas##H##_64, __half, int64_t)
// clang-format on

FAKE_TYPED_FAMILY(FAKE_TYPED_GEMM, Sgemm_v2, Dgemm_v2, Cgemm_v2, Zgemm_v2, Hgemm)
FAKE_TYPED_FAMILY(FAKE_TYPED_GEMM_BATCHED, SgemmBatched, DgemmBatched, CgemmBatched, ZgemmBatched,
                  HgemmBatched)
FAKE_TYPED_FAMILY(FAKE_TYPED_GEMM_STRIDED, SgemmStridedBatched, DgemmStridedBatched,
                  CgemmStridedBatched, ZgemmStridedBatched, HgemmStridedBatched)

#define FAKE_SGEMM_EX(NAME, INT)                                                                 \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t, cublasOperation_t, INT m, INT n, \
                      INT k, const float*, const void*, cudaDataType, INT, const void*,          \
                      cudaDataType, INT, const float*, void*, cudaDataType, INT) {               \
    return Gemm<INT>(handle, m, n, k);                                                           \
  }
FAKE_SGEMM_EX(cublasSgemmEx, int)
FAKE_SGEMM_EX(cublasSgemmEx_64, int64_t)

#define FAKE_GEMM_EX(NAME, INT)                                                                  \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, \
                      INT m, INT n, INT k, const void*, const void*, cudaDataType a_type, INT,   \
                      const void*, cudaDataType b_type, INT, const void*, void*,                 \
                      cudaDataType c_type, INT, cublasComputeType_t compute, cublasGemmAlgo_t) { \
    const cublasStatus_t status = Gemm<INT>(handle, m, n, k);                                    \
    if (status != CUBLAS_STATUS_SUCCESS) return status;                                          \
    return GemmOnLt(handle, transa, transb, static_cast<uint64_t>(m), static_cast<uint64_t>(n),  \
                    static_cast<uint64_t>(k), a_type, b_type, c_type, compute);                  \
  }
FAKE_GEMM_EX(cublasGemmEx, int)
FAKE_GEMM_EX(cublasGemmEx_64, int64_t)

#define FAKE_GEMM_BATCHED_EX(NAME, INT)                                                          \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t, cublasOperation_t, INT m, INT n, \
                      INT k, const void*, const void* const[], cudaDataType, INT,                \
                      const void* const[], cudaDataType, INT, const void*, void* const[],        \
                      cudaDataType, INT, INT batch, cublasComputeType_t, cublasGemmAlgo_t) {     \
    return Gemm<INT>(handle, m, n, k, batch);                                                    \
  }
FAKE_GEMM_BATCHED_EX(cublasGemmBatchedEx, int)
FAKE_GEMM_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)

#define FAKE_GEMM_STRIDED_BATCHED_EX(NAME, INT)                                                  \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t, cublasOperation_t, INT m, INT n, \
                      INT k, const void*, const void*, cudaDataType, INT, long long int,         \
                      const void*, cudaDataType, INT, long long int, const void*, void*,         \
                      cudaDataType, INT, long long int, INT batch, cublasComputeType_t,          \
                      cublasGemmAlgo_t) {                                                        \
    return Gemm<INT>(handle, m, n, k, batch);                                                    \
  }
FAKE_GEMM_STRIDED_BATCHED_EX(cublasGemmStridedBatchedEx, int)
FAKE_GEMM_STRIDED_BATCHED_EX(cublasGemmStridedBatchedEx_64, int64_t)
