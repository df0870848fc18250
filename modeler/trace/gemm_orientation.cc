// GEMM shapes in one orientation; see gemm_orientation.h.
#include "modeler/trace/gemm_orientation.h"

#include <utility>

namespace lumos::modeler {

bool IsColumnMajorGemmApi(schema::GemmApi api) {
  switch (api) {
    case schema::GemmApi::kCublasGemm:
    case schema::GemmApi::kCublasGemmBatched:
    case schema::GemmApi::kCublasGemmStridedBatched:
    case schema::GemmApi::kCublasGemmEx:
    case schema::GemmApi::kCublasGemmBatchedEx:
    case schema::GemmApi::kCublasGemmStridedBatchedEx:
    case schema::GemmApi::kCublasltMatmul:
      return true;
    default:
      return false;
  }
}

void ToRowMajor(schema::GemmCallEvent* call) {
  std::swap(call->m, call->n);
  std::swap(call->transa, call->transb);
  std::swap(call->a_type, call->b_type);
}

size_t GemmCallsToRowMajor(std::vector<schema::GemmCallEvent>* calls) {
  size_t turned = 0;
  for (schema::GemmCallEvent& call : *calls) {
    if (!IsColumnMajorGemmApi(call.api)) continue;
    ToRowMajor(&call);
    ++turned;
  }
  return turned;
}

}  // namespace lumos::modeler
