// libcublas_gemm_calls.so: the GEMM calls of cublas_gemm_workload.h, made through the real
// libcublas / libcublasLt it links (as libtorch_cuda.so does), on one stream, each after a
// Fill kernel of its own (a kernel no GEMM call launched). Checks one result: the float GEMM of
// ones by twos is 2k everywhere. Returns kSkipExitCode when there is no usable GPU.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>

#include "cuda_tests/cublas_gemm_workload.h"
#include "cuda_tests/workload_cuda.h"

namespace lumos::cuda_tests {
// Beside workload_cuda.h's Ok(cudaError_t), so one unqualified call finds both.
bool Ok(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return true;
  std::fprintf(stderr, "%s: %s: cuBLAS status %d\n", program_invocation_short_name, what,
               static_cast<int>(status));
  return false;
}
}  // namespace lumos::cuda_tests

namespace {

using lumos::cuda_tests::GemmCallSpec;
using lumos::cuda_tests::GemmEntry;
using lumos::cuda_tests::Ok;

constexpr size_t kBufferBytes = 8 << 20;  // Each operand; every call's fit.

__global__ void Fill(float* data, int n, float value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value;
}

struct Buffers {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 32 << 20;
};

bool FillFloats(void* data, int n, float value, cudaStream_t stream) {
  Fill<<<(n + 255) / 256, 256, 0, stream>>>(static_cast<float*>(data), n, value);
  return Ok(cudaGetLastError(), "Fill");
}

// The cuBLASLt matmul: op(A) = A^T (A stored k x m), fp16 in and out, batched by strides.
bool LtMatmul(const GemmCallSpec& g, const Buffers& buffers, cudaStream_t stream) {
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  if (!Ok(cublasLtCreate(&lt), "cublasLtCreate") ||
      !Ok(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul desc") ||
      !Ok(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa,
                                         sizeof(transa)),
          "transa") ||
      !Ok(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb,
                                         sizeof(transb)),
          "transb") ||
      !Ok(cublasLtMatrixLayoutCreate(&a, CUDA_R_16F, g.k, g.m, g.k), "layout A") ||
      !Ok(cublasLtMatrixLayoutCreate(&b, CUDA_R_16F, g.k, g.n, g.k), "layout B") ||
      !Ok(cublasLtMatrixLayoutCreate(&c, CUDA_R_16F, g.m, g.n, g.m), "layout C")) {
    return false;
  }
  const int32_t batch = g.batch;
  const int64_t strides[3] = {int64_t{g.k} * g.m, int64_t{g.k} * g.n, int64_t{g.m} * g.n};
  cublasLtMatrixLayout_t layouts[3] = {a, b, c};
  for (int i = 0; i < 3; ++i) {
    if (!Ok(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                             sizeof(batch)),
            "batch count") ||
        !Ok(cublasLtMatrixLayoutSetAttribute(layouts[i],
                                             CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &strides[i], sizeof(strides[i])),
            "batch stride")) {
      return false;
    }
  }
  cublasLtMatmulHeuristicResult_t heuristic = {};
  int found = 0;
  if (!Ok(cublasLtMatmulPreferenceCreate(&preference), "preference") ||
      !Ok(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &buffers.workspace_bytes,
                                               sizeof(buffers.workspace_bytes)),
          "workspace preference") ||
      !Ok(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, c, preference, 1, &heuristic, &found),
          "heuristic")) {
    return false;
  }
  if (found == 0) {
    std::fprintf(stderr, "%s: cuBLASLt found no algorithm\n", program_invocation_short_name);
    return false;
  }
  const float alpha = 1.0f, beta = 0.0f;
  const bool ran = Ok(
      cublasLtMatmul(lt, desc, &alpha, buffers.a, a, buffers.b, b, &beta, buffers.c, c, buffers.c,
                     c, &heuristic.algo, buffers.workspace, buffers.workspace_bytes, stream),
      "cublasLtMatmul");
  cublasLtMatmulPreferenceDestroy(preference);
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(c);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  return ran;
}

bool Call(const GemmCallSpec& g, cublasHandle_t handle, const Buffers& buffers,
          cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  const long long m = g.m, n = g.n, k = g.k;
  switch (g.entry) {
    case GemmEntry::kSgemm:
      return Ok(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, g.m, g.n, g.k, &alpha,
                            static_cast<const float*>(buffers.a), g.m,
                            static_cast<const float*>(buffers.b), g.k, &beta,
                            static_cast<float*>(buffers.c), g.m),
                g.name);
    case GemmEntry::kGemmEx:  // A stored k x m, transposed.
      return Ok(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, g.m, g.n, g.k, &alpha, buffers.a,
                             CUDA_R_16BF, g.k, buffers.b, CUDA_R_16BF, g.k, &beta, buffers.c,
                             CUDA_R_16BF, g.m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                g.name);
    case GemmEntry::kGemmStridedBatchedEx:
      return Ok(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, g.m, g.n, g.k, &alpha,
                                           buffers.a, CUDA_R_16F, g.m, m * k, buffers.b, CUDA_R_16F,
                                           g.k, k * n, &beta, buffers.c, CUDA_R_16F, g.m, m * n,
                                           g.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                g.name);
    case GemmEntry::kSgemmStridedBatched:  // B stored n x k, transposed.
      return Ok(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_T, g.m, g.n, g.k, &alpha,
                                          static_cast<const float*>(buffers.a), g.m, m * k,
                                          static_cast<const float*>(buffers.b), g.n, n * k, &beta,
                                          static_cast<float*>(buffers.c), g.m, m * n, g.batch),
                g.name);
    case GemmEntry::kLtMatmul:
      return LtMatmul(g, buffers, stream);
  }
  return false;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int lumos_cublas_gemm_calls() {
  using namespace lumos::cuda_tests;
  if (NoCudaDevice()) return kSkipExitCode;
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
  Buffers buffers;
  if (!Ok(cudaSetDevice(0), "cudaSetDevice") ||
      !Ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream") ||
      !Ok(cudaMalloc(&buffers.a, kBufferBytes), "cudaMalloc A") ||
      !Ok(cudaMalloc(&buffers.b, kBufferBytes), "cudaMalloc B") ||
      !Ok(cudaMalloc(&buffers.c, kBufferBytes), "cudaMalloc C") ||
      !Ok(cudaMalloc(&buffers.workspace, buffers.workspace_bytes), "cudaMalloc workspace") ||
      !Ok(cublasCreate(&handle), "cublasCreate") ||
      !Ok(cublasSetStream(handle, stream), "cublasSetStream")) {
    return 1;
  }
  const int floats = static_cast<int>(kBufferBytes / sizeof(float));
  for (const GemmCallSpec& g : kGemmCalls) {
    // Ones by twos (as floats; the fp16 and bf16 calls read the same bytes as other numbers).
    if (!FillFloats(buffers.a, floats, 1.0f, stream) ||
        !FillFloats(buffers.b, floats, 2.0f, stream) || !Call(g, handle, buffers, stream)) {
      return 1;
    }
    if (g.entry == GemmEntry::kSgemm) {
      float first = 0.0f;
      if (!Ok(cudaMemcpyAsync(&first, buffers.c, sizeof(first), cudaMemcpyDeviceToHost, stream),
              "copy back") ||
          !Ok(cudaStreamSynchronize(stream), "stream sync")) {
        return 1;
      }
      if (first != 2.0f * g.k) {
        std::fprintf(stderr, "%s: %s gave %g, not %g\n", program_invocation_short_name, g.name,
                     first, 2.0f * g.k);
        return 1;
      }
    }
  }
  if (!Ok(cudaStreamSynchronize(stream), "stream sync")) return 1;
  std::printf("%s: ok (%d GEMM calls)\n", program_invocation_short_name, kGemmCallCount);
  cublasDestroy(handle);
  cudaFree(buffers.a);
  cudaFree(buffers.b);
  cudaFree(buffers.c);
  cudaFree(buffers.workspace);
  cudaStreamDestroy(stream);
  return 0;
}
