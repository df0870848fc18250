#include "agent/cupti/api_callbacks.h"

// cupti.h (via api_callbacks.h) brings the params structs of every runtime/driver API.
#include <cstddef>
#include <iterator>
#include <string>
#include <type_traits>

#include "agent/core/string_table.h"
#include "agent/runtime/agent_runtime.h"

namespace lumos::agent::cupti {
namespace {

template <typename T>
uint64_t Handle(T value) {
  if constexpr (std::is_pointer_v<T>) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(value));
  } else {
    return static_cast<uint64_t>(value);
  }
}

// Reads whichever handle members the params struct P has (names as in CUDA's prototypes).
template <typename P>
void FillHandles(const void* raw, ApiCallPayload* out) {
  const P& p = *static_cast<const P*>(raw);
  if constexpr (requires { p.stream; }) out->stream_id = Handle(p.stream);
  if constexpr (requires { p.hStream; }) out->stream_id = Handle(p.hStream);
  if constexpr (requires { p.event; }) out->event_id = Handle(p.event);
  if constexpr (requires { p.hEvent; }) out->event_id = Handle(p.hEvent);
  if constexpr (requires { p.graphExec; }) out->graph_id = Handle(p.graphExec);
  if constexpr (requires { p.hGraph; }) out->graph_id = Handle(p.hGraph);  // cuGraphLaunch.
  // cudaLaunchKernelExC / cuLaunchKernelEx: the stream sits in the launch config.
  if constexpr (requires { p.config->stream; }) {
    if (p.config != nullptr) out->stream_id = Handle(p.config->stream);
  }
  if constexpr (requires { p.config->hStream; }) {
    if (p.config != nullptr) out->stream_id = Handle(p.config->hStream);
  }
}

// CUDA 13's nvcc compiles every `<<<>>>` launch into a call of __cudaLaunchKernel
// (crt/host_runtime.h, __cudaLaunch), CUPTI cbids 505/506, so most kernels of an nvcc-13 build
// (ATen's included) come through here rather than cudaLaunchKernel. CUPTI 13's
// generated_cuda_runtime_api_meta.h has no params struct for it; CUPTI's params structs are
// the prototype's parameters in order (see cudaLaunchKernel_v7000_params), so this mirrors the
// prototype in crt/device_functions.h. Not yet checked against a real CUPTI (it needs a GPU):
// the stream is taken only when the launch dimensions look like a launch's.
struct CompilerLaunchKernelParams {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};
static_assert(offsetof(CompilerLaunchKernelParams, stream) ==
              offsetof(cudaLaunchKernel_v7000_params, stream));

// The launched function of a launch's params struct (cudaLaunchKernel's func, cuLaunchKernel's
// f, cudaLaunchKernelExC's func); 0 when it has none.
template <typename P>
uint64_t LaunchedFunction(const void* raw) {
  const P& p = *static_cast<const P*>(raw);
  if constexpr (requires { p.func; }) {
    return Handle(p.func);
  } else if constexpr (requires { p.f; }) {
    return Handle(p.f);
  } else {
    return 0;
  }
}

uint64_t CompilerLaunchedFunction(const void* raw) {
  return Handle(static_cast<const CompilerLaunchKernelParams*>(raw)->kernel);
}

void FillCompilerLaunchHandles(const void* raw, ApiCallPayload* out) {
  const auto& p = *static_cast<const CompilerLaunchKernelParams*>(raw);
  const uint64_t threads = uint64_t{p.blockDim.x} * p.blockDim.y * p.blockDim.z;
  const bool plausible =
      p.gridDim.x != 0 && p.gridDim.y != 0 && p.gridDim.z != 0 && threads != 0 && threads <= 1024;
  if (plausible) out->stream_id = Handle(p.stream);
}

using schema::ApiKind;
#define LUMOS_RT(id, kind)                                                          \
  ApiSpec {                                                                         \
    CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##id, #id, ApiKind::kind, \
        &FillHandles<id##_params>, &LaunchedFunction<id##_params>                   \
  }
#define LUMOS_RT0(id, kind)                                                                 \
  ApiSpec {                                                                                 \
    CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##id, #id, ApiKind::kind, nullptr \
  }
#define LUMOS_RT_WITH(id, kind, fill, function)                                                    \
  ApiSpec {                                                                                        \
    CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##id, #id, ApiKind::kind, fill, function \
  }
#define LUMOS_DRV(id, kind)                                                       \
  ApiSpec {                                                                       \
    CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##id, #id, ApiKind::kind, \
        &FillHandles<id##_params>, &LaunchedFunction<id##_params>                 \
  }
#define LUMOS_DRV0(id, kind) \
  ApiSpec { CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##id, #id, ApiKind::kind, nullptr }

// clang-format off
constexpr ApiSpec kTracedApis[] = {
    // Runtime: kernel launches.
    LUMOS_RT_WITH(__cudaLaunchKernel_v13000, kLaunchKernel, &FillCompilerLaunchHandles,
                  &CompilerLaunchedFunction),
    LUMOS_RT_WITH(__cudaLaunchKernel_ptsz_v13000, kLaunchKernel, &FillCompilerLaunchHandles,
                  &CompilerLaunchedFunction),
    LUMOS_RT(cudaLaunchKernel_v7000, kLaunchKernel),
    LUMOS_RT(cudaLaunchKernel_ptsz_v7000, kLaunchKernel),
    LUMOS_RT(cudaLaunchKernelExC_v11060, kLaunchKernel),
    LUMOS_RT(cudaLaunchKernelExC_ptsz_v11060, kLaunchKernel),
    LUMOS_RT(cudaLaunchCooperativeKernel_v9000, kLaunchKernel),
    LUMOS_RT(cudaLaunchCooperativeKernel_ptsz_v9000, kLaunchKernel),
    LUMOS_RT0(cudaLaunchCooperativeKernelMultiDevice_v9000, kLaunchKernel),
    LUMOS_RT(cudaGraphLaunch_v10000, kLaunchGraph),
    LUMOS_RT(cudaGraphLaunch_ptsz_v10000, kLaunchGraph),
    // Runtime: events, waits, syncs.
    LUMOS_RT(cudaEventRecord_v3020, kEventRecord),
    LUMOS_RT(cudaEventRecord_ptsz_v7000, kEventRecord),
    LUMOS_RT(cudaEventRecordWithFlags_v11010, kEventRecord),
    LUMOS_RT(cudaEventRecordWithFlags_ptsz_v11010, kEventRecord),
    LUMOS_RT(cudaStreamWaitEvent_v3020, kStreamWaitEvent),
    LUMOS_RT(cudaStreamWaitEvent_ptsz_v7000, kStreamWaitEvent),
    LUMOS_RT(cudaStreamSynchronize_v3020, kStreamSynchronize),
    LUMOS_RT(cudaStreamSynchronize_ptsz_v7000, kStreamSynchronize),
    LUMOS_RT(cudaEventSynchronize_v3020, kEventSynchronize),
    LUMOS_RT0(cudaDeviceSynchronize_v3020, kDeviceSynchronize),
    LUMOS_RT0(cudaThreadSynchronize_v3020, kDeviceSynchronize),
    // Runtime: blocking copies and sets.
    LUMOS_RT(cudaMemcpy_v3020, kMemcpy),
    LUMOS_RT(cudaMemcpy_ptds_v7000, kMemcpy),
    LUMOS_RT(cudaMemcpy2D_v3020, kMemcpy),
    LUMOS_RT(cudaMemcpy2D_ptds_v7000, kMemcpy),
    LUMOS_RT(cudaMemcpy3D_v3020, kMemcpy),
    LUMOS_RT(cudaMemcpy3D_ptds_v7000, kMemcpy),
    LUMOS_RT(cudaMemcpyPeer_v4000, kMemcpy),
    LUMOS_RT(cudaMemcpy3DPeer_v4000, kMemcpy),
    LUMOS_RT(cudaMemcpyToSymbol_v3020, kMemcpy),
    LUMOS_RT(cudaMemcpyToSymbol_ptds_v7000, kMemcpy),
    LUMOS_RT(cudaMemcpyFromSymbol_v3020, kMemcpy),
    LUMOS_RT(cudaMemcpyFromSymbol_ptds_v7000, kMemcpy),
    LUMOS_RT(cudaMemcpy3DPeer_ptds_v7000, kMemcpy),
    LUMOS_RT(cudaMemcpyToArray_v3020, kMemcpy),
    LUMOS_RT(cudaMemcpyToArray_ptds_v7000, kMemcpy),
    LUMOS_RT(cudaMemcpy2DToArray_v3020, kMemcpy),
    LUMOS_RT(cudaMemcpy2DToArray_ptds_v7000, kMemcpy),
    LUMOS_RT(cudaMemcpyFromArray_v3020, kMemcpy),
    LUMOS_RT(cudaMemcpyFromArray_ptds_v7000, kMemcpy),
    LUMOS_RT(cudaMemcpy2DFromArray_v3020, kMemcpy),
    LUMOS_RT(cudaMemcpy2DFromArray_ptds_v7000, kMemcpy),
    LUMOS_RT(cudaMemcpyArrayToArray_v3020, kMemcpy),
    LUMOS_RT(cudaMemcpyArrayToArray_ptds_v7000, kMemcpy),
    LUMOS_RT(cudaMemcpy2DArrayToArray_v3020, kMemcpy),
    LUMOS_RT(cudaMemcpy2DArrayToArray_ptds_v7000, kMemcpy),
    LUMOS_RT(cudaMemset_v3020, kMemset),
    LUMOS_RT(cudaMemset_ptds_v7000, kMemset),
    LUMOS_RT(cudaMemset2D_v3020, kMemset),
    LUMOS_RT(cudaMemset2D_ptds_v7000, kMemset),
    LUMOS_RT(cudaMemset3D_v3020, kMemset),
    LUMOS_RT(cudaMemset3D_ptds_v7000, kMemset),
    // Runtime: async copies and sets.
    LUMOS_RT(cudaMemcpyAsync_v3020, kMemcpyAsync),
    LUMOS_RT(cudaMemcpyAsync_ptsz_v7000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpy2DAsync_v3020, kMemcpyAsync),
    LUMOS_RT(cudaMemcpy2DAsync_ptsz_v7000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpy3DAsync_v3020, kMemcpyAsync),
    LUMOS_RT(cudaMemcpy3DAsync_ptsz_v7000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpyPeerAsync_v4000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpy3DPeerAsync_v4000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpyToSymbolAsync_v3020, kMemcpyAsync),
    LUMOS_RT(cudaMemcpyToSymbolAsync_ptsz_v7000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpyFromSymbolAsync_v3020, kMemcpyAsync),
    LUMOS_RT(cudaMemcpyFromSymbolAsync_ptsz_v7000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpy3DPeerAsync_ptsz_v7000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpyToArrayAsync_v3020, kMemcpyAsync),
    LUMOS_RT(cudaMemcpyToArrayAsync_ptsz_v7000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpy2DToArrayAsync_v3020, kMemcpyAsync),
    LUMOS_RT(cudaMemcpy2DToArrayAsync_ptsz_v7000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpyFromArrayAsync_v3020, kMemcpyAsync),
    LUMOS_RT(cudaMemcpyFromArrayAsync_ptsz_v7000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpy2DFromArrayAsync_v3020, kMemcpyAsync),
    LUMOS_RT(cudaMemcpy2DFromArrayAsync_ptsz_v7000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpyBatchAsync_v13000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpyBatchAsync_ptsz_v13000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpy3DBatchAsync_v13000, kMemcpyAsync),
    LUMOS_RT(cudaMemcpy3DBatchAsync_ptsz_v13000, kMemcpyAsync),
    LUMOS_RT(cudaMemsetAsync_v3020, kMemsetAsync),
    LUMOS_RT(cudaMemsetAsync_ptsz_v7000, kMemsetAsync),
    LUMOS_RT(cudaMemset2DAsync_v3020, kMemsetAsync),
    LUMOS_RT(cudaMemset2DAsync_ptsz_v7000, kMemsetAsync),
    LUMOS_RT(cudaMemset3DAsync_v3020, kMemsetAsync),
    LUMOS_RT(cudaMemset3DAsync_ptsz_v7000, kMemsetAsync),
    // Runtime: stream work that is not a kernel (a host function runs in stream order), and
    // frees: cudaFree and cudaFreeHost wait for the device, cudaFreeAsync is stream-ordered.
    LUMOS_RT(cudaLaunchHostFunc_v10000, kOther),
    LUMOS_RT(cudaLaunchHostFunc_ptsz_v10000, kOther),
    LUMOS_RT(cudaFree_v3020, kFree),
    LUMOS_RT(cudaFreeHost_v3020, kFree),
    LUMOS_RT(cudaFreeAsync_v11020, kFree),
    LUMOS_RT(cudaFreeAsync_ptsz_v11020, kFree),
    // Driver: kernel launches.
    LUMOS_DRV(cuLaunchKernel, kLaunchKernel),
    LUMOS_DRV(cuLaunchKernel_ptsz, kLaunchKernel),
    LUMOS_DRV(cuLaunchKernelEx, kLaunchKernel),
    LUMOS_DRV(cuLaunchKernelEx_ptsz, kLaunchKernel),
    LUMOS_DRV(cuLaunchCooperativeKernel, kLaunchKernel),
    LUMOS_DRV(cuLaunchCooperativeKernel_ptsz, kLaunchKernel),
    LUMOS_DRV(cuLaunchCooperativeKernelMultiDevice, kLaunchKernel),
    LUMOS_DRV(cuLaunch, kLaunchKernel),
    LUMOS_DRV(cuLaunchGrid, kLaunchKernel),
    LUMOS_DRV(cuLaunchGridAsync, kLaunchKernel),
    LUMOS_DRV(cuGraphLaunch, kLaunchGraph),
    LUMOS_DRV(cuGraphLaunch_ptsz, kLaunchGraph),
    // Driver: events, waits, syncs.
    LUMOS_DRV(cuEventRecord, kEventRecord),
    LUMOS_DRV(cuEventRecord_ptsz, kEventRecord),
    LUMOS_DRV(cuEventRecordWithFlags, kEventRecord),
    LUMOS_DRV(cuEventRecordWithFlags_ptsz, kEventRecord),
    LUMOS_DRV(cuStreamWaitEvent, kStreamWaitEvent),
    LUMOS_DRV(cuStreamWaitEvent_ptsz, kStreamWaitEvent),
    LUMOS_DRV(cuStreamSynchronize, kStreamSynchronize),
    LUMOS_DRV(cuStreamSynchronize_ptsz, kStreamSynchronize),
    LUMOS_DRV(cuEventSynchronize, kEventSynchronize),
    LUMOS_DRV0(cuCtxSynchronize, kDeviceSynchronize),
    LUMOS_DRV(cuCtxSynchronize_v2, kDeviceSynchronize),
    // Driver: blocking copies and sets.
    LUMOS_DRV(cuMemcpy, kMemcpy),
    LUMOS_DRV(cuMemcpy_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpyHtoD_v2, kMemcpy),
    LUMOS_DRV(cuMemcpyHtoD_v2_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpyDtoH_v2, kMemcpy),
    LUMOS_DRV(cuMemcpyDtoH_v2_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpyDtoD_v2, kMemcpy),
    LUMOS_DRV(cuMemcpyDtoD_v2_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpyPeer, kMemcpy),
    LUMOS_DRV(cuMemcpyPeer_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpy2D_v2, kMemcpy),
    LUMOS_DRV(cuMemcpy2D_v2_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpy3D_v2, kMemcpy),
    LUMOS_DRV(cuMemcpy3D_v2_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpy3DPeer, kMemcpy),
    LUMOS_DRV(cuMemcpy3DPeer_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpy2DUnaligned_v2, kMemcpy),
    LUMOS_DRV(cuMemcpy2DUnaligned_v2_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpyHtoA_v2, kMemcpy),
    LUMOS_DRV(cuMemcpyHtoA_v2_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpyAtoH_v2, kMemcpy),
    LUMOS_DRV(cuMemcpyAtoH_v2_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpyDtoA_v2, kMemcpy),
    LUMOS_DRV(cuMemcpyDtoA_v2_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpyAtoD_v2, kMemcpy),
    LUMOS_DRV(cuMemcpyAtoD_v2_ptds, kMemcpy),
    LUMOS_DRV(cuMemcpyAtoA_v2, kMemcpy),
    LUMOS_DRV(cuMemcpyAtoA_v2_ptds, kMemcpy),
    LUMOS_DRV(cuMemsetD8_v2, kMemset),
    LUMOS_DRV(cuMemsetD8_v2_ptds, kMemset),
    LUMOS_DRV(cuMemsetD16_v2, kMemset),
    LUMOS_DRV(cuMemsetD16_v2_ptds, kMemset),
    LUMOS_DRV(cuMemsetD32_v2, kMemset),
    LUMOS_DRV(cuMemsetD32_v2_ptds, kMemset),
    LUMOS_DRV(cuMemsetD2D8_v2, kMemset),
    LUMOS_DRV(cuMemsetD2D8_v2_ptds, kMemset),
    LUMOS_DRV(cuMemsetD2D16_v2, kMemset),
    LUMOS_DRV(cuMemsetD2D16_v2_ptds, kMemset),
    LUMOS_DRV(cuMemsetD2D32_v2, kMemset),
    LUMOS_DRV(cuMemsetD2D32_v2_ptds, kMemset),
    // Driver: async copies and sets.
    LUMOS_DRV(cuMemcpyAsync, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyAsync_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyHtoDAsync_v2, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyHtoDAsync_v2_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyDtoHAsync_v2, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyDtoHAsync_v2_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyDtoDAsync_v2, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyDtoDAsync_v2_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyPeerAsync, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyPeerAsync_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpy2DAsync_v2, kMemcpyAsync),
    LUMOS_DRV(cuMemcpy2DAsync_v2_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpy3DAsync_v2, kMemcpyAsync),
    LUMOS_DRV(cuMemcpy3DAsync_v2_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpy3DPeerAsync, kMemcpyAsync),
    LUMOS_DRV(cuMemcpy3DPeerAsync_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyHtoAAsync_v2, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyHtoAAsync_v2_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyAtoHAsync_v2, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyAtoHAsync_v2_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyBatchAsync, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyBatchAsync_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpy3DBatchAsync, kMemcpyAsync),
    LUMOS_DRV(cuMemcpy3DBatchAsync_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyBatchAsync_v2, kMemcpyAsync),
    LUMOS_DRV(cuMemcpyBatchAsync_v2_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemcpy3DBatchAsync_v2, kMemcpyAsync),
    LUMOS_DRV(cuMemcpy3DBatchAsync_v2_ptsz, kMemcpyAsync),
    LUMOS_DRV(cuMemsetD8Async, kMemsetAsync),
    LUMOS_DRV(cuMemsetD8Async_ptsz, kMemsetAsync),
    LUMOS_DRV(cuMemsetD16Async, kMemsetAsync),
    LUMOS_DRV(cuMemsetD16Async_ptsz, kMemsetAsync),
    LUMOS_DRV(cuMemsetD32Async, kMemsetAsync),
    LUMOS_DRV(cuMemsetD32Async_ptsz, kMemsetAsync),
    LUMOS_DRV(cuMemsetD2D8Async, kMemsetAsync),
    LUMOS_DRV(cuMemsetD2D8Async_ptsz, kMemsetAsync),
    LUMOS_DRV(cuMemsetD2D16Async, kMemsetAsync),
    LUMOS_DRV(cuMemsetD2D16Async_ptsz, kMemsetAsync),
    LUMOS_DRV(cuMemsetD2D32Async, kMemsetAsync),
    LUMOS_DRV(cuMemsetD2D32Async_ptsz, kMemsetAsync),
    // Driver: stream work that is not a kernel (host functions, waits on a memory value, a
    // context waiting for an event), and frees as in the runtime.
    LUMOS_DRV(cuLaunchHostFunc, kOther),
    LUMOS_DRV(cuLaunchHostFunc_ptsz, kOther),
    LUMOS_DRV(cuStreamWaitValue32_v2, kOther),
    LUMOS_DRV(cuStreamWaitValue32_v2_ptsz, kOther),
    LUMOS_DRV(cuStreamWaitValue64_v2, kOther),
    LUMOS_DRV(cuStreamWaitValue64_v2_ptsz, kOther),
    LUMOS_DRV(cuStreamWaitValue32, kOther),
    LUMOS_DRV(cuStreamWaitValue32_ptsz, kOther),
    LUMOS_DRV(cuStreamWaitValue64, kOther),
    LUMOS_DRV(cuStreamWaitValue64_ptsz, kOther),
    LUMOS_DRV(cuCtxWaitEvent, kOther),
    LUMOS_DRV(cuGreenCtxWaitEvent, kOther),
    LUMOS_DRV(cuMemFree_v2, kFree),
    LUMOS_DRV(cuMemFreeHost, kFree),
    LUMOS_DRV(cuMemFreeAsync, kFree),
    LUMOS_DRV(cuMemFreeAsync_ptsz, kFree),
};
// clang-format on
#undef LUMOS_RT
#undef LUMOS_RT0
#undef LUMOS_RT_WITH
#undef LUMOS_DRV
#undef LUMOS_DRV0

// "cudaLaunchKernel_ptsz_v7000" -> "cudaLaunchKernel_ptsz" (runtime cbid names carry the API
// version; driver names such as cuMemcpyHtoD_v2 are the real symbol names and stay).
std::string ApiName(const ApiSpec& spec) {
  std::string name = spec.name;
  if (spec.domain != CUPTI_CB_DOMAIN_RUNTIME_API) return name;
  const size_t cut = name.rfind("_v");
  if (cut != std::string::npos && cut + 2 < name.size() &&
      name.find_first_not_of("0123456789", cut + 2) == std::string::npos) {
    name.resize(cut);
  }
  return name;
}

}  // namespace

std::span<const ApiSpec> TracedApis() { return kTracedApis; }

void CallbackTable::Build(StringTable& strings) {
  runtime_.assign(CUPTI_RUNTIME_TRACE_CBID_SIZE, Entry{});
  driver_.assign(CUPTI_DRIVER_TRACE_CBID_SIZE, Entry{});
  for (const ApiSpec& spec : kTracedApis) {
    std::vector<Entry>& entries = spec.domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime_ : driver_;
    if (spec.cbid >= entries.size()) continue;
    entries[spec.cbid] = Entry{&spec, strings.Intern(ApiName(spec))};
  }
}

namespace {

// The correlation id of the traced runtime call this thread is inside (0: none). Set at the
// call's ENTER, cleared at its EXIT; an EXIT missed while collection was turned off leaves a stale
// id that the thread's next traced runtime call replaces. initial-exec: no __tls_get_addr.
thread_local uint64_t t_open_runtime_call __attribute__((tls_model("initial-exec"))) = 0;

// A kernel launch's ENTER, for KernelBoundaries (out of line: only while it wants launches).
__attribute__((noinline)) void NoteKernelLaunch(const CallbackContext& context,
                                                CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                                const void* callback_data) {
  const auto* data = static_cast<const CUpti_CallbackData*>(callback_data);
  if (data == nullptr || data->callbackSite != CUPTI_API_ENTER || data->functionParams == nullptr) {
    return;
  }
  const CallbackTable::Entry* entry = context.table->Find(domain, cbid);
  if (entry == nullptr || entry->spec->kind != schema::ApiKind::kLaunchKernel ||
      entry->spec->launched_function == nullptr) {
    return;
  }
  const uint64_t function = entry->spec->launched_function(data->functionParams);
  if (function != 0) context.kernel_boundaries->OnLaunch(function, MonotonicNowNs());
}

}  // namespace

void CUPTIAPI HandleApiCallback(void* user_data, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* callback_data) noexcept {
  const auto* context = static_cast<const CallbackContext*>(user_data);
  if (context == nullptr) return;
  // One record per call: a driver call the runtime makes inside a traced runtime call on this
  // thread (cudaLaunchKernel's cuLaunchKernel, same correlation id) is not recorded, nor fed to
  // the launch period below; the runtime call's record stands for both. Driver calls the program
  // makes itself are. Before the gate, so the open call is tracked while recording is paused.
  if (const auto* call = static_cast<const CUpti_CallbackData*>(callback_data); call != nullptr) {
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
      if (call->callbackSite == CUPTI_API_ENTER) {
        t_open_runtime_call = call->correlationId;
      } else if (t_open_runtime_call == call->correlationId) {
        t_open_runtime_call = 0;
      }
    } else if (t_open_runtime_call != 0) {
      return;
    }
  }
  // Windowed modes, armed without an iteration marker: launches feed the kernel stream's
  // period (before the gate: the window has not started yet). One relaxed load otherwise.
  if (context->kernel_boundaries != nullptr && context->kernel_boundaries->wanted()) {
    NoteKernelLaunch(*context, domain, cbid, callback_data);
  }
  // The entry check (STYLE.md 5.2): one relaxed load; see EnabledFlag for why relaxed is safe.
  if (!context->enabled->enabled()) return;
  const auto* data = static_cast<const CUpti_CallbackData*>(callback_data);
  if (data == nullptr) return;
  if (data->callbackSite == CUPTI_API_ENTER) {
    // CUPTI passes the same slot to this call's EXIT callback.
    if (data->correlationData != nullptr) {
      *data->correlationData = static_cast<uint64_t>(MonotonicNowNs());
    }
    return;
  }
  const CallbackTable::Entry* entry = context->table->Find(domain, cbid);
  if (entry == nullptr) return;
  const int64_t end_ns = MonotonicNowNs();
  int64_t start_ns =
      data->correlationData != nullptr ? static_cast<int64_t>(*data->correlationData) : end_ns;
  if (start_ns <= 0 || start_ns > end_ns) start_ns = end_ns;  // ENTER ran while we were off.

  ThreadRing* ring = context->rings->CurrentThreadRing();
  Record record{};
  record.kind = RecordKind::kApiCall;
  record.thread_id = ring->thread_id();
  record.start_ns = start_ns;
  record.end_ns = end_ns;
  ApiCallPayload& payload = record.payload.api_call;
  payload.correlation_id = data->correlationId;
  payload.name_id = entry->name_id;
  payload.cbid = static_cast<uint16_t>(cbid);
  payload.api_kind = static_cast<uint8_t>(entry->spec->kind);
  payload.domain =
      static_cast<uint8_t>(domain == CUPTI_CB_DOMAIN_RUNTIME_API ? schema::ApiDomain::kRuntime
                                                                 : schema::ApiDomain::kDriver);
  // cudaError_t and CUresult are both int-sized enums.
  if (data->functionReturnValue != nullptr) {
    payload.return_code = *static_cast<const int32_t*>(data->functionReturnValue);
  }
  if (data->functionParams != nullptr && entry->spec->fill_handles != nullptr) {
    entry->spec->fill_handles(data->functionParams, &payload);
  }
  ring->Push(record);
}

}  // namespace lumos::agent::cupti
