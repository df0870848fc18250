// The sequence's entry points as the including module links them (cublas_sequence.h), for
// modules linked to (fake) libcublas and libcublasLt only.
#pragma once

#include <string>

#include "tests/agent/cublas/cublas_sequence.h"

namespace lumos::testing {

// The entry points as the including module links them. Internal linkage on purpose: each
// module (a program linked to libcublas, a library that NEEDs it and is dlopen'd RTLD_LOCAL)
// must take the addresses through its own relocations, as its calls would bind.
[[maybe_unused]] static void* LinkedCublasLookup(const char* name) {
  struct Entry {
    const char* name;
    void* fn;
  };
#define LUMOS_LINKED(fn) \
  { #fn, reinterpret_cast < void*>(&fn) }
#define LUMOS_LINKED_TYPED(fn, type) \
  { #fn, reinterpret_cast < void*>(static_cast <type>(&fn)) }
  static const Entry kEntries[] = {
      LUMOS_LINKED(cublasSgemm_v2),
      LUMOS_LINKED(cublasSgemm_v2_64),
      LUMOS_LINKED(cublasDgemm_v2),
      LUMOS_LINKED(cublasDgemm_v2_64),
      LUMOS_LINKED(cublasCgemm_v2),
      LUMOS_LINKED(cublasCgemm_v2_64),
      LUMOS_LINKED(cublasZgemm_v2),
      LUMOS_LINKED(cublasZgemm_v2_64),
      LUMOS_LINKED(cublasHgemm),
      LUMOS_LINKED(cublasHgemm_64),
      LUMOS_LINKED(cublasSgemmBatched),
      LUMOS_LINKED(cublasSgemmBatched_64),
      LUMOS_LINKED(cublasDgemmBatched),
      LUMOS_LINKED(cublasDgemmBatched_64),
      LUMOS_LINKED(cublasCgemmBatched),
      LUMOS_LINKED(cublasCgemmBatched_64),
      LUMOS_LINKED(cublasZgemmBatched),
      LUMOS_LINKED(cublasZgemmBatched_64),
      LUMOS_LINKED(cublasHgemmBatched),
      LUMOS_LINKED(cublasHgemmBatched_64),
      LUMOS_LINKED(cublasSgemmStridedBatched),
      LUMOS_LINKED(cublasSgemmStridedBatched_64),
      LUMOS_LINKED(cublasDgemmStridedBatched),
      LUMOS_LINKED(cublasDgemmStridedBatched_64),
      LUMOS_LINKED(cublasCgemmStridedBatched),
      LUMOS_LINKED(cublasCgemmStridedBatched_64),
      LUMOS_LINKED(cublasZgemmStridedBatched),
      LUMOS_LINKED(cublasZgemmStridedBatched_64),
      LUMOS_LINKED(cublasHgemmStridedBatched),
      LUMOS_LINKED(cublasHgemmStridedBatched_64),
      LUMOS_LINKED(cublasSgemmEx),
      LUMOS_LINKED(cublasSgemmEx_64),
      LUMOS_LINKED_TYPED(cublasGemmEx, GemmExFn),
      LUMOS_LINKED_TYPED(cublasGemmEx_64, GemmEx64Fn),
      LUMOS_LINKED_TYPED(cublasGemmBatchedEx, GemmBatchedExFn),
      LUMOS_LINKED_TYPED(cublasGemmBatchedEx_64, GemmBatchedEx64Fn),
      LUMOS_LINKED_TYPED(cublasGemmStridedBatchedEx, GemmStridedBatchedExFn),
      LUMOS_LINKED_TYPED(cublasGemmStridedBatchedEx_64, GemmStridedBatchedEx64Fn),
      LUMOS_LINKED(cublasLtMatmul),
      LUMOS_LINKED(cublasCreate_v2),
      LUMOS_LINKED(cublasDestroy_v2),
      LUMOS_LINKED(cublasSetMathMode),
      LUMOS_LINKED(cublasSetStream_v2),
      LUMOS_LINKED(cublasLtCreate),
      LUMOS_LINKED(cublasLtDestroy),
      LUMOS_LINKED(cublasLtMatmulDescCreate),
      LUMOS_LINKED(cublasLtMatmulDescDestroy),
      LUMOS_LINKED(cublasLtMatmulDescSetAttribute),
      LUMOS_LINKED(cublasLtMatrixLayoutCreate),
      LUMOS_LINKED(cublasLtMatrixLayoutDestroy),
      LUMOS_LINKED(cublasLtMatrixLayoutSetAttribute),
  };
#undef LUMOS_LINKED
#undef LUMOS_LINKED_TYPED
  for (const Entry& entry : kEntries) {
    if (std::string(entry.name) == name) return entry.fn;
  }
  return nullptr;
}

}  // namespace lumos::testing
