// A single-rank NCCL job with a known shape: one communicator (ncclCommInitRank, nranks 1, device
// 0) and kAllReduces float32 sum all-reduces of kAllReduceElements on one stream, each inside an
// NVTX push/pop. The expected counts live in nccl_allreduce_workload.h. Exits 77 (ctest: skipped)
// when there is no usable GPU.
#include <cuda_runtime.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>

#include "cuda_tests/nccl_allreduce_workload.h"
#include "cuda_tests/workload_cuda.h"

namespace lumos::cuda_tests {
// Beside workload_cuda.h's Ok(cudaError_t), so one unqualified call finds both.
bool Ok(ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return true;
  std::fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
               ncclGetErrorString(result));
  return false;
}
}  // namespace lumos::cuda_tests

namespace {

__global__ void Fill(float* data, int n, float value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value;
}

}  // namespace

int main() {
  using namespace lumos::cuda_tests;
  if (NoCudaDevice()) return kSkipExitCode;
  if (!Ok(cudaSetDevice(0), "cudaSetDevice")) return 1;
  ncclUniqueId id;
  ncclComm_t comm;
  if (!Ok(ncclGetUniqueId(&id), "ncclGetUniqueId") ||
      !Ok(ncclCommInitRank(&comm, 1, id, 0), "ncclCommInitRank")) {
    return 1;
  }
  float* send = nullptr;
  float* recv = nullptr;
  cudaStream_t stream;
  if (!Ok(cudaMalloc(&send, kAllReduceBytes), "cudaMalloc") ||
      !Ok(cudaMalloc(&recv, kAllReduceBytes), "cudaMalloc") ||
      !Ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream")) {
    return 1;
  }
  Fill<<<(kAllReduceElements + 255) / 256, 256, 0, stream>>>(send, kAllReduceElements, 2.0f);
  for (int i = 0; i < kAllReduces; ++i) {
    nvtxRangePushA(kAllReduceRange);
    const bool issued =
        Ok(ncclAllReduce(send, recv, kAllReduceElements, ncclFloat32, ncclSum, comm, stream),
           "ncclAllReduce");
    nvtxRangePop();
    if (!issued) return 1;
  }
  if (!Ok(cudaStreamSynchronize(stream), "stream sync")) return 1;
  float last = 0.0f;
  if (!Ok(cudaMemcpy(&last, recv + kAllReduceElements - 1, sizeof(last), cudaMemcpyDeviceToHost),
          "copy back")) {
    return 1;
  }
  const bool right = last == 2.0f;  // One rank: the sum is its own data.
  std::printf("nccl_allreduce_workload: %s (%g)\n", right ? "ok" : "WRONG", last);
  ncclCommDestroy(comm);
  cudaStreamDestroy(stream);
  cudaFree(send);
  cudaFree(recv);
  return right ? 0 : 1;
}
