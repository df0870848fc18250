// Design: the CUPTI runtime/driver API callbacks (channel cupti_callback). One ApiCall record per
// traced call, pushed at API exit into the calling thread's ring: thread, host start/end
// (CLOCK_MONOTONIC), correlation id (joins the GPU activity it caused), cbid, domain, ApiKind,
// the interned name, the stream / event / graph-exec handle from the call's params struct and
// the return code.
//
// Traced: every kernel launch path (cudaLaunchKernel, cudaLaunchKernelExC, cooperative launches,
// cuLaunchKernel(Ex), cuLaunch*, incl. _ptsz variants), graph launches, event record (incl.
// WithFlags), stream wait, stream/event/device/context synchronize, blocking and async
// memcpy/memset (1D/2D/3D, peer, symbol, batch). kTracedApis lists them; the channel enables
// exactly these cbids, so CUPTI never calls us for anything else.
//
// Hot path (STYLE.md 5): the handler does one relaxed load of the enabled flag, then at ENTER
// stores the monotonic time in CUPTI's per-call correlationData slot (no TLS, no table), and at
// EXIT looks its cbid up in a flat array (CallbackTable, built at start; names interned there),
// reads the handles through a per-API function (a struct read), and pushes one 64-byte Record.
// No allocation, lock, syscall (clock_gettime is vDSO) or log; no call back into CUPTI.
// Handles are the application's opaque values (cudaStream_t, cudaEvent_t, cudaGraphExec_t), not
// CUPTI's stream/event ids: the GPU records join an ApiCall by correlation id.
// A call whose ENTER ran while the agent was off has no start time: start = end.
// Windowed modes, a window armed in a job without NVTX iteration markers: at ENTER of a kernel
// launch, before the gate, the launched function goes to control::KernelBoundaries while it
// wants launches (one relaxed load; the rest out of line), which finds the kernel stream's
// period. Needs a GPU to run for real; the tests drive it with fabricated callbacks.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <span>
#include <vector>

#include "agent/control/kernel_boundaries.h"
#include "agent/core/record.h"
#include "agent/core/thread_rings.h"
#include "schema/enums.h"

namespace lumos::agent {
class StringTable;
}

namespace lumos::agent::cupti {

struct ApiSpec {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  const char* name;  // CUPTI's cbid name; runtime names lose their "_vNNNN" suffix when interned.
  schema::ApiKind kind;
  void (*fill_handles)(const void* params, ApiCallPayload* out);  // Null: no handle to read.
  // Kernel launches: the launched function (func, f, kernel), for KernelBoundaries; else null.
  uint64_t (*launched_function)(const void* params) = nullptr;
};

// Every API the callback channel traces.
std::span<const ApiSpec> TracedApis();

// cbid -> (spec, interned name), per domain; built once at start, read-only afterwards.
class CallbackTable {
 public:
  struct Entry {
    const ApiSpec* spec = nullptr;
    uint32_t name_id = 0;
  };
  // Interns every traced API's name (locks; off the hot path).
  void Build(StringTable& strings);
  const Entry* Find(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const {
    const std::vector<Entry>& entries = domain == CUPTI_CB_DOMAIN_RUNTIME_API  ? runtime_
                                        : domain == CUPTI_CB_DOMAIN_DRIVER_API ? driver_
                                                                               : empty_;
    if (cbid >= entries.size() || entries[cbid].spec == nullptr) return nullptr;
    return &entries[cbid];
  }

 private:
  std::vector<Entry> runtime_, driver_, empty_;
};

// What the handler needs, passed to cuptiSubscribe as user data. Set up before subscribing and
// never changed or destroyed while subscribed.
struct CallbackContext {
  const EnabledFlag* enabled = nullptr;
  ThreadRings* rings = nullptr;
  const CallbackTable* table = nullptr;
  // Windowed modes: kernel launches go to it (ENTER, gate open or not) while it wants them.
  control::KernelBoundaries* kernel_boundaries = nullptr;
};

// The CUpti_CallbackFunc. noexcept: nothing may escape into CUDA.
void CUPTIAPI HandleApiCallback(void* user_data, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* callback_data) noexcept;

}  // namespace lumos::agent::cupti
