// The shape of launch_paths_workload.cu, shared with the checker (launch_paths_test.cc): one
// kernel through each launch path a training job takes, with the API name CUPTI reports for it.
#pragma once

#include "cuda_tests/workload_exit.h"

namespace lumos::cuda_tests {

struct LaunchPath {
  const char* api_name;  // As the agent records it (runtime names without their _vNNNN).
  int launches;
};

// nvcc 13 compiles <<<>>> into __cudaLaunchKernel (crt/host_runtime.h); one of the two runs on a
// second host thread. The driver launches go through entry points the runtime hands out
// (cudaGetDriverEntryPointByVersion), as Triton and PyTorch reach the driver.
inline constexpr LaunchPath kLaunchPaths[] = {
    {"__cudaLaunchKernel", 2},          {"cudaLaunchKernel", 1}, {"cudaLaunchKernelExC", 1},
    {"cudaLaunchCooperativeKernel", 1}, {"cuLaunchKernel", 1},   {"cuLaunchKernelEx", 1},
};
inline constexpr int kLaunches = 7;
inline constexpr int kLaunchThreads = 2;

}  // namespace lumos::cuda_tests
