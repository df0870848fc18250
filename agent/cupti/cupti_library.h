// Design: where libcupti.so.13 comes from, without CUPTI's types (so agent/nvtx/ can load the
// same library to chain NVTX to it). Order: the copy already in the process (RTLD_NOLOAD: the
// one PyTorch/Kineto loaded), libcupti.so.13 on the loader path, then fallback_path
// (LUMOS_CUPTI_LIBRARY) or, when it is empty, kToolkitCuptiPaths. RTLD_LOCAL; never closed.
// Threading: any thread (dlopen serializes).
#pragma once

#include <string>

namespace lumos::agent::cupti {

// The toolkit paths tried last when LUMOS_CUPTI_LIBRARY is unset.
inline constexpr const char* kToolkitCuptiPaths[] = {
    "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
    "/usr/local/cuda/lib64/libcupti.so.13",
};

// The dlopen handle, or null with each failed attempt's dlerror appended to *tried ("; "
// between them).
void* OpenCuptiLibrary(const std::string& fallback_path, std::string* tried);

}  // namespace lumos::agent::cupti
