// One kernel through every launch path a training job takes (launch_paths_workload.h), plus the
// stream work around launches that two_streams_workload does not do: an event recorded with
// flags and waited for, a blocking memset, a host function, and a context synchronize through
// the driver. Exits 77 (ctest: skipped) when there is no usable GPU. Never links libcuda (a
// CPU-only machine could not even start it): the driver functions come from the runtime.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <thread>

#include "cuda_tests/launch_paths_workload.h"
#include "cuda_tests/workload_cuda.h"

namespace {

__global__ void AddOne(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

// The entry point of `name` as of CUDA `version`, whose prototype F must be that version's
// (cudaTypedefs.h's PFN_<name>_v<version>): asked for 13000, "cuCtxSynchronize" is
// cuCtxSynchronize_v2(CUcontext), and calling it as the old cuCtxSynchronize(void) passed it
// whatever the register held as a context (its own error without a profiler; inside CUPTI's
// instrumentation of the call, a SIGSEGV on the H200 of 2026-12-04).
template <typename F>
bool DriverFunction(const char* name, int version, F* out) {
  cudaDriverEntryPointQueryResult found{};
  void* pointer = nullptr;
  if (!lumos::cuda_tests::Ok(
          cudaGetDriverEntryPointByVersion(name, &pointer, version, cudaEnableDefault, &found),
          name) ||
      found != cudaDriverEntryPointSuccess || pointer == nullptr) {
    std::fprintf(stderr, "launch_paths_workload: no driver entry point %s\n", name);
    return false;
  }
  *out = reinterpret_cast<F>(pointer);
  return true;
}

void CUDART_CB SetFlag(void* flag) { *static_cast<volatile int*>(flag) = 1; }

}  // namespace

int main() {
  using namespace lumos::cuda_tests;
  if (NoCudaDevice()) return kSkipExitCode;
  PFN_cuLaunchKernel_v4000 launch_kernel = nullptr;
  PFN_cuLaunchKernelEx_v11060 launch_kernel_ex = nullptr;
  PFN_cuCtxSynchronize_v13000 context_synchronize = nullptr;
  if (!DriverFunction("cuLaunchKernel", 4000, &launch_kernel) ||
      !DriverFunction("cuLaunchKernelEx", 11060, &launch_kernel_ex) ||
      !DriverFunction("cuCtxSynchronize", 13000, &context_synchronize)) {
    return 1;
  }
  int n = 1 << 16;
  float* data = nullptr;
  cudaStream_t main_stream, other_stream;
  cudaEvent_t done;
  cudaFunction_t function = nullptr;
  if (!Ok(cudaMalloc(&data, n * sizeof(float)), "cudaMalloc") ||
      !Ok(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking), "stream") ||
      !Ok(cudaStreamCreateWithFlags(&other_stream, cudaStreamNonBlocking), "stream") ||
      !Ok(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "event") ||
      !Ok(cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(AddOne)), "function")) {
    return 1;
  }
  // A blocking memset starts from zeros; every launch below adds one to each element.
  if (!Ok(cudaMemset(data, 0, n * sizeof(float)), "blocking memset")) return 1;
  const dim3 block(256), grid((n + 255) / 256);
  void* args[] = {&data, &n};

  AddOne<<<grid, block, 0, main_stream>>>(data, n);
  Ok(cudaLaunchKernel(reinterpret_cast<const void*>(AddOne), grid, block, args, 0, main_stream),
     "cudaLaunchKernel");
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = main_stream;
  Ok(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(AddOne), args),
     "cudaLaunchKernelExC");
  Ok(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(AddOne), grid, block, args, 0,
                                 main_stream),
     "cudaLaunchCooperativeKernel");
  const CUfunction driver_function = reinterpret_cast<CUfunction>(function);
  const auto driver_stream = reinterpret_cast<CUstream>(main_stream);
  if (launch_kernel(driver_function, grid.x, 1, 1, block.x, 1, 1, 0, driver_stream, args,
                    nullptr) != CUDA_SUCCESS) {
    std::fprintf(stderr, "launch_paths_workload: cuLaunchKernel failed\n");
    return 1;
  }
  CUlaunchConfig driver_config{};
  driver_config.gridDimX = grid.x;
  driver_config.gridDimY = driver_config.gridDimZ = 1;
  driver_config.blockDimX = block.x;
  driver_config.blockDimY = driver_config.blockDimZ = 1;
  driver_config.hStream = driver_stream;
  if (launch_kernel_ex(&driver_config, driver_function, args, nullptr) != CUDA_SUCCESS) {
    std::fprintf(stderr, "launch_paths_workload: cuLaunchKernelEx failed\n");
    return 1;
  }
  Ok(cudaEventRecordWithFlags(done, main_stream, cudaEventRecordDefault), "event record");
  // A second host thread waits for the first six launches, then launches the seventh.
  std::thread other([&] {
    Ok(cudaStreamWaitEvent(other_stream, done, 0), "stream wait");
    AddOne<<<grid, block, 0, other_stream>>>(data, n);
    Ok(cudaStreamSynchronize(other_stream), "stream sync");
  });
  other.join();
  volatile int flag = 0;
  Ok(cudaLaunchHostFunc(main_stream, SetFlag, const_cast<int*>(&flag)), "host function");
  if (context_synchronize(nullptr) != CUDA_SUCCESS) {  // nullptr: the current context.
    std::fprintf(stderr, "launch_paths_workload: cuCtxSynchronize failed\n");
    return 1;
  }
  float first = 0, last = 0;
  Ok(cudaMemcpy(&first, data, sizeof(float), cudaMemcpyDeviceToHost), "copy");
  Ok(cudaMemcpy(&last, data + n - 1, sizeof(float), cudaMemcpyDeviceToHost), "copy");
  const bool right = first == kLaunches && last == kLaunches && flag == 1;
  std::printf("launch_paths_workload: %s (%g, host function %s)\n", right ? "ok" : "WRONG", first,
              flag == 1 ? "ran" : "did not run");
  cudaEventDestroy(done);
  cudaStreamDestroy(main_stream);
  cudaStreamDestroy(other_stream);
  cudaFree(data);
  return right ? 0 : 1;
}
