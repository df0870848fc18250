// Design: what the process's own CUDA driver says of its GPUs (name, UUID, SMs, clocks, memory,
// bus width, compute capability, PCI bus id), and the CUDA runtime, driver and NCCL versions,
// for the trace (process_devices.h). Only libraries the process has already loaded are asked
// (dlopen RTLD_NOLOAD: the agent never loads a library, creates or touches a context); the
// device calls need no context, only an initialised driver (before cuInit returns they answer
// CUDA_ERROR_NOT_INITIALIZED, and the writer asks again on its next pass). Runs on the writer
// thread, never a job thread. Threading: no shared state.
#pragma once

#include <cuda.h>

#include "agent/runtime/process_devices.h"

namespace lumos::agent::cupti {

// The functions asked, each null when its library is not loaded. A test hands in fakes.
struct CudaFunctions {
  CUresult (*driver_get_version)(int*) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_uuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*device_total_mem)(size_t*, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*device_get_pci_bus_id)(char*, int, CUdevice) = nullptr;
  int (*runtime_get_version)(int*) = nullptr;  // cudaError_t cudaRuntimeGetVersion(int*).
  int (*nccl_get_version)(int*) = nullptr;     // ncclResult_t ncclGetVersion(int*).
};

// The functions of the libraries already loaded in the process (libcuda.so.1, libcudart.so.13,
// libnccl.so.2, or the same symbols anywhere in its global scope).
CudaFunctions LoadedCudaFunctions();

// Fills `out` from `functions`; true once the driver named the devices (then nothing changes
// later: the writer stops asking). Versions are filled whatever the devices' answer.
bool ProbeCudaDevices(const CudaFunctions& functions, ProcessDevices* out);

// Agent::DeviceProbe: ProbeCudaDevices of LoadedCudaFunctions(). noexcept, logs nothing.
bool ProbeProcessDevices(ProcessDevices* out) noexcept;

// "2.28.9" from ncclGetVersion's code (major*10000 + minor*100 + patch since NCCL 2.9;
// major*1000 + minor*100 + patch before).
std::string NcclVersionText(int code);

}  // namespace lumos::agent::cupti
