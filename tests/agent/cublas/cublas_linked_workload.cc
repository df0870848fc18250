// A program linked to libcublas.so.13 and libcublasLt.so.13 (here the fakes) through their
// versioned symbols, as an application built against CUDA is: runs the sequence
// (cublas_sequence.h) and prints each call's status, then how often the fakes were reached.
#include <cstdio>

#include "tests/agent/cublas/cublas_linked_lookup.h"

extern "C" int fake_cublas_gemm_calls();
extern "C" int fake_cublaslt_matmul_calls();

int main() {
  const int failed = lumos::testing::RunCublasSequence(&lumos::testing::LinkedCublasLookup, stdout);
  std::printf("fake cublas gemm calls %d, cublasLt matmul calls %d\n", fake_cublas_gemm_calls(),
              fake_cublaslt_matmul_calls());
  return failed;
}
