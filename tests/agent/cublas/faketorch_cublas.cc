// libfaketorch_cublas.so: a library that NEEDs libcublas.so.13 and libcublasLt.so.13 (here the
// fakes), the shape of PyTorch's libtorch_cuda.so. Loaded with dlopen(RTLD_LOCAL), its cuBLAS
// sits in a local group where the agent's RTLD_NEXT cannot see it.
#include <cstdio>

#include "tests/agent/cublas/cublas_linked_lookup.h"

extern "C" __attribute__((visibility("default"))) int faketorch_cublas_run() {
  return lumos::testing::RunCublasSequence(&lumos::testing::LinkedCublasLookup, stdout);
}
