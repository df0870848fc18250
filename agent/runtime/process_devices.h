// Design: the GPUs and library versions of the process, as its own CUDA driver, runtime and NCCL
// name them (agent/cupti/cuda_devices.h asks them, on the writer thread, once the driver is
// initialised). The header cannot hold them in continuous mode (it is written at start-up,
// before the job's first context); the trailer (schema 2.4) and every capture window's header
// do. No CUDA headers here. Threading: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schema/writer/trace_events.h"

namespace lumos::agent {

struct ProcessDevices {
  std::vector<schema::DeviceInfo> devices;  // Every device the process can see, by ordinal.
  uint32_t cuda_runtime_version = 0;        // cudaRuntimeGetVersion (13000); 0: not loaded.
  uint32_t cuda_driver_version = 0;         // cuDriverGetVersion.
  std::string nccl_version;                 // ncclGetVersion as "2.28.9"; "": not loaded.
};

}  // namespace lumos::agent
