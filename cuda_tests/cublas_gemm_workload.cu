// Runs the GEMM calls of libcublas_gemm_calls.so (cublas_gemm_workload.h), loaded from beside
// this program the way a framework loads its CUDA libraries:
//   cublas_gemm_workload          dlopen(RTLD_GLOBAL): libcublas in the global scope, where the
//                                 agent's wrappers find the real functions with RTLD_NEXT;
//   cublas_gemm_workload local    dlopen(RTLD_LOCAL), as Python loads libtorch_cuda.so:
//                                 libcublas in a local group RTLD_NEXT cannot see.
// This program itself links neither cuBLAS nor makes a CUDA call. Exits with the library's
// status: 0, 1 (a call failed) or 77 (no GPU: the checker skips).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "cuda_tests/cublas_gemm_workload.h"

int main(int argc, char** argv) {
  using namespace lumos::cuda_tests;
  const bool local = argc > 1 && std::strcmp(argv[1], "local") == 0;
  char self[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string path = length > 0 ? std::string(self, static_cast<size_t>(length)) : "";
  path = path.substr(0, path.rfind('/') + 1) + kGemmLibrary;
  void* library = dlopen(path.c_str(), RTLD_NOW | (local ? RTLD_LOCAL : RTLD_GLOBAL));
  auto run =
      library != nullptr ? reinterpret_cast<int (*)()>(dlsym(library, kGemmEntryPoint)) : nullptr;
  if (run == nullptr) {
    std::fprintf(stderr, "cublas_gemm_workload: cannot load %s: %s\n", path.c_str(), dlerror());
    return 1;
  }
  return run();
}
