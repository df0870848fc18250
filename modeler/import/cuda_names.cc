#include "modeler/import/cuda_names.h"

namespace lumos::modeler::kineto {
namespace {

using schema::ApiKind;
using schema::CopyKind;
using schema::MemoryKind;
using schema::SyncType;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Drops "_v2", "_v3020", "_ptsz", "_ptds" (in any combination) from the end of an API name.
std::string_view StripApiSuffixes(std::string_view name) {
  while (true) {
    if (EndsWith(name, "_ptsz") || EndsWith(name, "_ptds")) {
      name.remove_suffix(5);
      continue;
    }
    size_t underscore = name.rfind('_');
    if (underscore != std::string_view::npos && name.substr(underscore + 1, 1) == "v") {
      std::string_view digits = name.substr(underscore + 2);
      bool all_digits = !digits.empty();
      for (char c : digits) all_digits = all_digits && c >= '0' && c <= '9';
      if (all_digits) {
        name = name.substr(0, underscore);
        continue;
      }
    }
    return name;
  }
}

struct NamedKind {
  std::string_view name;
  ApiKind kind;
};

// Exact names (after suffix stripping). Families matched by prefix are handled in code.
constexpr NamedKind kExactNames[] = {
    {"cudaLaunchKernel", ApiKind::kLaunchKernel},
    {"__cudaLaunchKernel", ApiKind::kLaunchKernel},  // CUDA 13's <<<>>> launches.
    {"cudaLaunchKernelExC", ApiKind::kLaunchKernel},
    {"cudaLaunchCooperativeKernel", ApiKind::kLaunchKernel},
    {"cudaLaunchCooperativeKernelMultiDevice", ApiKind::kLaunchKernel},
    {"cuLaunchKernel", ApiKind::kLaunchKernel},
    {"cuLaunchKernelEx", ApiKind::kLaunchKernel},
    {"cuLaunchCooperativeKernel", ApiKind::kLaunchKernel},
    {"cuLaunchCooperativeKernelMultiDevice", ApiKind::kLaunchKernel},
    {"cuLaunch", ApiKind::kLaunchKernel},
    {"cuLaunchGrid", ApiKind::kLaunchKernel},
    {"cuLaunchGridAsync", ApiKind::kLaunchKernel},
    {"cudaGraphLaunch", ApiKind::kLaunchGraph},
    {"cuGraphLaunch", ApiKind::kLaunchGraph},
    {"cudaEventRecord", ApiKind::kEventRecord},
    {"cudaEventRecordWithFlags", ApiKind::kEventRecord},
    {"cuEventRecord", ApiKind::kEventRecord},
    {"cuEventRecordWithFlags", ApiKind::kEventRecord},
    {"cudaStreamWaitEvent", ApiKind::kStreamWaitEvent},
    {"cuStreamWaitEvent", ApiKind::kStreamWaitEvent},
    {"cudaEventSynchronize", ApiKind::kEventSynchronize},
    {"cuEventSynchronize", ApiKind::kEventSynchronize},
    {"cudaStreamSynchronize", ApiKind::kStreamSynchronize},
    {"cuStreamSynchronize", ApiKind::kStreamSynchronize},
    {"cudaDeviceSynchronize", ApiKind::kDeviceSynchronize},
    {"cudaThreadSynchronize", ApiKind::kDeviceSynchronize},
    {"cuCtxSynchronize", ApiKind::kDeviceSynchronize},
    {"cudaEventQuery", ApiKind::kEventQuery},
    {"cuEventQuery", ApiKind::kEventQuery},
    {"cudaStreamQuery", ApiKind::kStreamQuery},
    {"cuStreamQuery", ApiKind::kStreamQuery},
    {"cudaHostAlloc", ApiKind::kMalloc},
    {"cuMemHostAlloc", ApiKind::kMalloc},
};

}  // namespace

ApiKind ClassifyApiName(std::string_view raw_name) {
  std::string_view name = StripApiSuffixes(raw_name);
  for (const NamedKind& entry : kExactNames) {
    if (entry.name == name) return entry.kind;
  }
  bool async = name.find("Async") != std::string_view::npos;
  // cudaMemcpy, cudaMemcpy2DAsync, cudaMemcpyPeer, cuMemcpyHtoD, cuMemcpyDtoHAsync, ...
  if (StartsWith(name, "cudaMemcpy") || StartsWith(name, "cuMemcpy")) {
    return async ? ApiKind::kMemcpyAsync : ApiKind::kMemcpy;
  }
  // cudaMemset, cudaMemset2DAsync, cuMemsetD8, cuMemsetD32Async, ...
  if (StartsWith(name, "cudaMemset") || StartsWith(name, "cuMemset")) {
    return async ? ApiKind::kMemsetAsync : ApiKind::kMemset;
  }
  // cudaMalloc, cudaMallocHost, cudaMallocAsync, cudaMallocManaged, cuMemAlloc, ...
  if (StartsWith(name, "cudaMalloc") || StartsWith(name, "cuMemAlloc")) return ApiKind::kMalloc;
  // cudaFree, cudaFreeHost, cudaFreeAsync, cudaFreeArray, cuMemFree, cuMemFreeHost, ...
  if (StartsWith(name, "cudaFree") || StartsWith(name, "cuMemFree")) return ApiKind::kFree;
  return ApiKind::kOther;
}

MemoryKind MemoryKindFromName(std::string_view name) {
  // Kineto's memoryKindString(): also "Device Static" and "Managed Static" (CUDA statics).
  if (StartsWith(name, "Pageable")) return MemoryKind::kPageable;
  if (StartsWith(name, "Pinned")) return MemoryKind::kPinned;
  if (StartsWith(name, "Device")) return MemoryKind::kDevice;
  if (StartsWith(name, "Array")) return MemoryKind::kArray;
  if (StartsWith(name, "Managed")) return MemoryKind::kManaged;
  return MemoryKind::kUnspecified;
}

MemcpyKinds ParseMemcpyName(std::string_view name) {
  MemcpyKinds kinds;
  if (!StartsWith(name, "Memcpy ")) return kinds;
  name.remove_prefix(7);
  size_t space = name.find(' ');
  std::string_view kind = name.substr(0, space);
  // Arrays are device memory: copies to or from them are host<->device or device-local.
  if (kind == "HtoD" || kind == "HtoA") kinds.copy = CopyKind::kHtod;
  if (kind == "DtoH" || kind == "AtoH") kinds.copy = CopyKind::kDtoh;
  if (kind == "DtoD" || kind == "AtoA" || kind == "AtoD" || kind == "DtoA") {
    kinds.copy = CopyKind::kDtod;
  }
  if (kind == "HtoH") kinds.copy = CopyKind::kHtoh;
  if (kind == "PtoP") kinds.copy = CopyKind::kPtop;
  if (space == std::string_view::npos) return kinds;
  std::string_view rest = name.substr(space + 1);
  size_t open = rest.find('('), arrow = rest.find(" -> "), close = rest.rfind(')');
  if (open == std::string_view::npos || arrow == std::string_view::npos ||
      close == std::string_view::npos || !(open < arrow && arrow < close)) {
    return kinds;
  }
  kinds.src = MemoryKindFromName(rest.substr(open + 1, arrow - open - 1));
  kinds.dst = MemoryKindFromName(rest.substr(arrow + 4, close - arrow - 4));
  return kinds;
}

MemoryKind ParseMemsetName(std::string_view name) {
  size_t open = name.find('(');
  if (!StartsWith(name, "Memset") || open == std::string_view::npos) {
    return MemoryKind::kUnspecified;
  }
  return MemoryKindFromName(name.substr(open + 1));
}

SyncType SyncTypeFromKineto(std::string_view kind) {
  if (kind == "Event Sync") return SyncType::kEventSynchronize;
  if (kind == "Stream Wait Event") return SyncType::kStreamWaitEvent;
  if (kind == "Stream Sync") return SyncType::kStreamSynchronize;
  if (kind == "Context Sync") return SyncType::kContextSynchronize;
  return SyncType::kUnspecified;  // "Unknown Sync" and anything newer.
}

}  // namespace lumos::modeler::kineto
