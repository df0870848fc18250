// Design: the CUDA facts Kineto only writes as strings, turned back into schema enums: what a
// runtime/driver API call does (from its name, so it works for any CUPTI version's callback
// ids), the copy and memory kinds in "Memcpy HtoD (Pageable -> Device)" / "Memset (Device)"
// (Kineto's memcpyKindString / memoryKindString), and the `cuda_sync_kind` strings.
// Pure functions, no state.
#pragma once

#include <string_view>

#include "schema/enums.h"

namespace lumos::modeler::kineto {

// "cudaLaunchKernel", "cuLaunchKernelEx", "cudaMemcpyAsync_ptsz", ... → what it does for the
// execution graph. Version (_v2) and per-thread-stream (_ptsz, _ptds) suffixes are ignored.
schema::ApiKind ClassifyApiName(std::string_view name);

struct MemcpyKinds {
  schema::CopyKind copy = schema::CopyKind::kUnspecified;
  schema::MemoryKind src = schema::MemoryKind::kUnspecified;
  schema::MemoryKind dst = schema::MemoryKind::kUnspecified;
};
MemcpyKinds ParseMemcpyName(std::string_view name);
schema::MemoryKind ParseMemsetName(std::string_view name);
schema::MemoryKind MemoryKindFromName(std::string_view name);

schema::SyncType SyncTypeFromKineto(std::string_view cuda_sync_kind);

}  // namespace lumos::modeler::kineto
