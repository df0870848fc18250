#include "agent/cupti/cupti_api.h"

#include <dlfcn.h>

#include <vector>

namespace lumos::agent::cupti {

void* OpenCuptiLibrary(const std::string& fallback_path, std::string* tried) {
  // RTLD_NOLOAD: only a copy already in the process (its reference count goes up; never closed).
  if (void* handle = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD)) return handle;
  std::vector<std::string> candidates = {"libcupti.so.13"};
  if (!fallback_path.empty()) {
    candidates.push_back(fallback_path);
  } else {
    for (const char* path : kToolkitCuptiPaths) candidates.push_back(path);
  }
  for (const std::string& candidate : candidates) {
    // RTLD_LOCAL: CUPTI's symbols stay out of the global scope, as with the framework's own load.
    if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* error = dlerror();
    // "; " between attempts: the reason ends up in one warning line (dlerror names the path).
    *tried += (tried->empty() ? "" : "; ") + (error != nullptr ? std::string(error) : candidate);
  }
  return nullptr;
}

namespace {

template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* fn, std::string* missing) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*fn == nullptr) *missing += std::string(missing->empty() ? "" : ", ") + name;
  return *fn != nullptr;
}

}  // namespace

StatusOr<CuptiApi> LoadCuptiApi(const std::string& fallback_path) {
  std::string tried;
  void* handle = OpenCuptiLibrary(fallback_path, &tried);
  if (handle == nullptr) return Status::Error("libcupti.so.13 not found (tried: " + tried + ")");
  CuptiApi api;
  std::string missing;
  Resolve(handle, "cuptiGetVersion", &api.get_version, &missing);
  Resolve(handle, "cuptiGetTimestamp", &api.get_timestamp, &missing);
  Resolve(handle, "cuptiGetResultString", &api.get_result_string, &missing);
  Resolve(handle, "cuptiActivityEnable", &api.activity_enable, &missing);
  Resolve(handle, "cuptiActivityDisable", &api.activity_disable, &missing);
  Resolve(handle, "cuptiActivityRegisterCallbacks", &api.activity_register_callbacks, &missing);
  Resolve(handle, "cuptiActivityGetNextRecord", &api.activity_get_next_record, &missing);
  Resolve(handle, "cuptiActivityGetNumDroppedRecords", &api.activity_get_num_dropped_records,
          &missing);
  Resolve(handle, "cuptiActivityFlushAll", &api.activity_flush_all, &missing);
  Resolve(handle, "cuptiSubscribe", &api.subscribe, &missing);
  Resolve(handle, "cuptiUnsubscribe", &api.unsubscribe, &missing);
  Resolve(handle, "cuptiEnableCallback", &api.enable_callback, &missing);
  std::string optional_missing;
  Resolve(handle, "cuptiActivityEnableCudaEventDeviceTimestamps",
          &api.activity_enable_cuda_event_device_timestamps, &optional_missing);
  Dl_info info{};
  api.library_path =
      dladdr(reinterpret_cast<void*>(api.get_version), &info) != 0 && info.dli_fname != nullptr
          ? info.dli_fname
          : "libcupti.so.13";
  if (!missing.empty()) {
    return Status::Error(api.library_path + " lacks " + missing);
  }
  return api;
}

std::string CuptiResultName(const CuptiApi& api, CUptiResult result) {
  const char* text = nullptr;
  if (api.get_result_string == nullptr || api.get_result_string(result, &text) != CUPTI_SUCCESS ||
      text == nullptr) {
    text = "CUPTI_ERROR";
  }
  return std::string(text) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

}  // namespace lumos::agent::cupti
