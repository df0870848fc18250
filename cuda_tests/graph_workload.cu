// A CUDA graph and NVTX ranges with a known shape: kGraphKernels kernels captured from a stream
// into a graph, instantiated once and launched kGraphLaunches times, each launch inside an NVTX
// push/pop, the capture inside another, all launches inside one start/end range, and a mark at
// the end. The expected counts live in graph_workload.h. Exits 77 (ctest: skipped) when there is
// no usable GPU.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>

#include "cuda_tests/graph_workload.h"
#include "cuda_tests/workload_cuda.h"

namespace {

__global__ void AddValue(float* data, int n, float value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += value;
}

}  // namespace

int main() {
  using namespace lumos::cuda_tests;
  if (NoCudaDevice()) return kSkipExitCode;
  constexpr int kN = 1 << 16;
  float* data = nullptr;
  cudaStream_t stream;
  if (!Ok(cudaMalloc(&data, kN * sizeof(float)), "cudaMalloc") ||
      !Ok(cudaMemset(data, 0, kN * sizeof(float)), "cudaMemset") ||
      !Ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream")) {
    return 1;
  }
  const dim3 block(256), grid((kN + 255) / 256);

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  nvtxRangePushA(kCaptureRange);
  if (!Ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture")) {
    return 1;
  }
  // Kernel k adds k + 1: one graph launch adds 1 + 2 + ... + kGraphKernels.
  for (int k = 0; k < kGraphKernels; ++k) {
    AddValue<<<grid, block, 0, stream>>>(data, kN, static_cast<float>(k + 1));
  }
  if (!Ok(cudaStreamEndCapture(stream, &graph), "end capture") ||
      !Ok(cudaGraphInstantiate(&exec, graph, 0), "instantiate")) {
    return 1;
  }
  nvtxRangePop();

  const nvtxRangeId_t replays = nvtxRangeStartA(kReplaysRange);
  for (int i = 0; i < kGraphLaunches; ++i) {
    nvtxRangePushA(kLaunchRange);
    Ok(cudaGraphLaunch(exec, stream), "graph launch");
    nvtxRangePop();
  }
  if (!Ok(cudaStreamSynchronize(stream), "stream sync")) return 1;
  nvtxRangeEnd(replays);
  nvtxMarkA(kDoneMark);

  float first = 0.0f;
  if (!Ok(cudaMemcpy(&first, data, sizeof(first), cudaMemcpyDeviceToHost), "copy back")) return 1;
  const float expected = kGraphLaunches * (kGraphKernels * (kGraphKernels + 1) / 2.0f);
  const bool right = first == expected;
  std::printf("graph_workload: %s (%g)\n", right ? "ok" : "WRONG", first);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cudaFree(data);
  return right ? 0 : 1;
}
