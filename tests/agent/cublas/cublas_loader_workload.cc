// Programs that reach (fake) cuBLAS without linking it:
//   torch LIB     dlopen(LIB = libfaketorch_cublas.so, RTLD_LOCAL) and run its sequence (the
//                 PyTorch shape: cuBLAS in a local group, where RTLD_NEXT finds nothing);
//   unresolved    no libcublas at all: call whatever cublasGemmEx and cublasLtMatmul
//                 RTLD_DEFAULT finds (the preloaded agent's wrappers, with nothing behind them).
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#include "tests/agent/cublas/cublas_sequence.h"

namespace {

int RunTorch(const char* path) {
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  auto run = library != nullptr
                 ? reinterpret_cast<int (*)()>(dlsym(library, "faketorch_cublas_run"))
                 : nullptr;
  if (run == nullptr) {
    std::printf("cannot load %s: %s\n", path, dlerror());
    return 3;
  }
  const int failed = run();
  auto gemm_calls = reinterpret_cast<int (*)()>(dlsym(library, "fake_cublas_gemm_calls"));
  auto lt_calls = reinterpret_cast<int (*)()>(dlsym(library, "fake_cublaslt_matmul_calls"));
  if (gemm_calls != nullptr && lt_calls != nullptr) {
    std::printf("fake cublas gemm calls %d, cublasLt matmul calls %d\n", gemm_calls(), lt_calls());
  }
  return failed;
}

int RunUnresolved() {
  auto gemm_ex = reinterpret_cast<lumos::testing::GemmExFn>(dlsym(RTLD_DEFAULT, "cublasGemmEx"));
  auto lt_matmul =
      reinterpret_cast<decltype(&cublasLtMatmul)>(dlsym(RTLD_DEFAULT, "cublasLtMatmul"));
  if (gemm_ex == nullptr || lt_matmul == nullptr) {
    std::printf("no cublasGemmEx\n");
    return 0;
  }
  for (int i = 0; i < 3; ++i) {
    const cublasStatus_t status = gemm_ex(
        nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, nullptr, nullptr, CUDA_R_32F, 8, nullptr,
        CUDA_R_32F, 8, nullptr, nullptr, CUDA_R_32F, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    std::printf("cublasGemmEx returned %d\n", static_cast<int>(status));
  }
  const cublasStatus_t status =
      lt_matmul(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                nullptr, nullptr, nullptr, nullptr, nullptr, 0, nullptr);
  std::printf("cublasLtMatmul returned %d\n", static_cast<int>(status));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "torch") == 0) return RunTorch(argv[2]);
  if (argc >= 2 && std::strcmp(argv[1], "unresolved") == 0) return RunUnresolved();
  std::fprintf(stderr, "usage: cublas_loader_workload torch LIB | unresolved\n");
  return 2;
}
