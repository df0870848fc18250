// Design: the CUPTI functions the agent uses, as a table of function pointers filled by dlopen
// (DESIGN.md: the agent never links libcupti, so it loads without CUDA and never drags in a second
// CUPTI copy). LoadCuptiApi tries, in order: the libcupti.so.13 already in the process
// (RTLD_NOLOAD: the one PyTorch/Kineto loaded), libcupti.so.13 on the loader path, then
// LUMOS_CUPTI_LIBRARY (AgentConfig::cupti_library) or the toolkit's paths (cupti_library.h). The
// handle is never closed (callbacks point into it until exit). Tests fill a table with fakes
// instead. CUPTI headers are included for types only; CUPTI types never leave agent/cupti/.
// Threading: load once; the table is immutable afterwards and read from any thread.
#pragma once

#include <cupti.h>

#include <string>

#include "agent/cupti/cupti_library.h"
#include "base/status.h"

namespace lumos::agent::cupti {

struct CuptiApi {
  CUptiResult (*get_version)(uint32_t* version) = nullptr;
  CUptiResult (*get_timestamp)(uint64_t* timestamp) = nullptr;
  CUptiResult (*get_result_string)(CUptiResult result, const char** text) = nullptr;
  CUptiResult (*activity_enable)(CUpti_ActivityKind kind) = nullptr;
  CUptiResult (*activity_disable)(CUpti_ActivityKind kind) = nullptr;
  CUptiResult (*activity_register_callbacks)(CUpti_BuffersCallbackRequestFunc requested,
                                             CUpti_BuffersCallbackCompleteFunc completed) = nullptr;
  CUptiResult (*activity_get_next_record)(uint8_t* buffer, size_t valid_bytes,
                                          CUpti_Activity** record) = nullptr;
  CUptiResult (*activity_get_num_dropped_records)(CUcontext context, uint32_t stream_id,
                                                  size_t* dropped) = nullptr;
  CUptiResult (*activity_flush_all)(uint32_t flag) = nullptr;
  // Optional (nullptr when absent): GPU timestamps in CUDA_EVENT records.
  CUptiResult (*activity_enable_cuda_event_device_timestamps)(uint8_t enable) = nullptr;
  CUptiResult (*subscribe)(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                           void* user_data) = nullptr;
  CUptiResult (*unsubscribe)(CUpti_SubscriberHandle subscriber) = nullptr;
  CUptiResult (*enable_callback)(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                 CUpti_CallbackDomain domain, CUpti_CallbackId cbid) = nullptr;
  std::string library_path;  // Where it came from (dladdr), for the log line.
};

// fallback_path: LUMOS_CUPTI_LIBRARY ("" = the toolkit paths). Fails with one message naming
// every place tried (or the missing symbol).
StatusOr<CuptiApi> LoadCuptiApi(const std::string& fallback_path);

// "CUPTI_ERROR_UNKNOWN (999)"; works with a table whose get_result_string is null.
std::string CuptiResultName(const CuptiApi& api, CUptiResult result);

}  // namespace lumos::agent::cupti
