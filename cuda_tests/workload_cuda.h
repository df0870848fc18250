// Shared by the .cu workloads: CUDA error lines and the no-GPU check, each naming the workload
// (the program's own name), so a failing checker's output says which call failed where.
#pragma once

#include <cuda_runtime.h>
#include <errno.h>  // program_invocation_short_name (glibc)

#include <cstdio>

#include "cuda_tests/workload_exit.h"

namespace lumos::cuda_tests {

// True on success; else one line on stderr: "<workload>: <what>: <CUDA's message>".
inline bool Ok(cudaError_t result, const char* what) {
  if (result == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
               cudaGetErrorString(result));
  return false;
}

// True when no CUDA device is usable, after saying so on stdout: the workload then exits with
// kSkipExitCode and its checker skips.
inline bool NoCudaDevice() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) return false;
  std::printf("%s: no CUDA device, skipping\n", program_invocation_short_name);
  return true;
}

}  // namespace lumos::cuda_tests
