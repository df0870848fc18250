// A small CUDA workload with a known shape, for checking what the agent records on a real GPU:
// kernels on two streams, an event recorded on one and waited for by the other, a blocking and
// an async copy, an async memset, and stream / event / device synchronisation. The expected
// counts live in two_streams_workload.h, shared with the checker. Exits 77 (ctest: skipped) when
// there is no usable GPU.
#include <cuda_runtime.h>

#include <cstdio>

#include "cuda_tests/two_streams_workload.h"
#include "cuda_tests/workload_cuda.h"

namespace {

__global__ void Scale(float* data, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

__global__ void AddOne(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

}  // namespace

int main() {
  using namespace lumos::cuda_tests;
  if (NoCudaDevice()) return kSkipExitCode;
  constexpr int kN = 1 << 20;
  constexpr size_t kBytes = kN * sizeof(float);
  float* host = nullptr;
  float* device_a = nullptr;
  float* device_b = nullptr;
  cudaStream_t first, second;
  cudaEvent_t produced;
  if (!Ok(cudaMallocHost(&host, kBytes), "cudaMallocHost") ||
      !Ok(cudaMalloc(&device_a, kBytes), "cudaMalloc") ||
      !Ok(cudaMalloc(&device_b, kBytes), "cudaMalloc") ||
      !Ok(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking), "stream") ||
      !Ok(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking), "stream") ||
      !Ok(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming), "event")) {
    return 1;
  }
  for (int i = 0; i < kN; ++i) host[i] = 1.0f;
  const dim3 block(256), grid((kN + 255) / 256);

  if (!Ok(cudaMemcpy(device_a, host, kBytes, cudaMemcpyHostToDevice), "blocking copy")) return 1;
  Ok(cudaMemsetAsync(device_b, 0, kBytes, first), "memset");
  for (int i = 0; i < kKernelsPerStream; ++i) Scale<<<grid, block, 0, first>>>(device_a, kN, 2.0f);
  Ok(cudaEventRecord(produced, first), "event record");
  Ok(cudaStreamWaitEvent(second, produced, 0), "stream wait");
  for (int i = 0; i < kKernelsPerStream; ++i) AddOne<<<grid, block, 0, second>>>(device_a, kN);
  Ok(cudaMemcpyAsync(host, device_a, kBytes, cudaMemcpyDeviceToHost, second), "async copy");
  Ok(cudaStreamSynchronize(second), "stream sync");
  Ok(cudaEventSynchronize(produced), "event sync");
  if (!Ok(cudaDeviceSynchronize(), "device sync")) return 1;

  const float expected = 1.0f * (1 << kKernelsPerStream) + kKernelsPerStream;
  const bool right = host[0] == expected && host[kN - 1] == expected;
  std::printf("two_streams_workload: %s (%g)\n", right ? "ok" : "WRONG", host[0]);
  cudaEventDestroy(produced);
  cudaStreamDestroy(first);
  cudaStreamDestroy(second);
  cudaFree(device_a);
  cudaFree(device_b);
  cudaFreeHost(host);
  return right ? 0 : 1;
}
