// The process's GPUs and library versions; see cuda_devices.h.
#include "agent/cupti/cuda_devices.h"

#include <dlfcn.h>

#include <cstdio>
#include <string>

namespace lumos::agent::cupti {
namespace {

// `name` from the global scope, else from `library` if the process has loaded it.
template <typename F>
void Find(const char* library, const char* name, F* out) {
  void* symbol = dlsym(RTLD_DEFAULT, name);
  if (symbol == nullptr) {
    if (void* handle = dlopen(library, RTLD_NOLOAD | RTLD_LAZY | RTLD_LOCAL)) {
      symbol = dlsym(handle, name);
      dlclose(handle);  // Drops the reference NOLOAD took; the library stays loaded.
    }
  }
  *out = reinterpret_cast<F>(symbol);
}

std::string UuidText(const CUuuid& uuid) {
  // As nvidia-smi writes it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof(hex), "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    text += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

uint32_t Attribute(const CudaFunctions& f, CUdevice_attribute attribute, CUdevice device) {
  int value = 0;
  if (f.device_get_attribute == nullptr ||
      f.device_get_attribute(&value, attribute, device) != CUDA_SUCCESS || value < 0) {
    return 0;
  }
  return static_cast<uint32_t>(value);
}

}  // namespace

CudaFunctions LoadedCudaFunctions() {
  CudaFunctions f;
  constexpr const char* kDriver = "libcuda.so.1";
  Find(kDriver, "cuDriverGetVersion", &f.driver_get_version);
  Find(kDriver, "cuDeviceGetCount", &f.device_get_count);
  Find(kDriver, "cuDeviceGet", &f.device_get);
  Find(kDriver, "cuDeviceGetName", &f.device_get_name);
  Find(kDriver, "cuDeviceGetUuid_v2", &f.device_get_uuid);
  Find(kDriver, "cuDeviceTotalMem_v2", &f.device_total_mem);
  Find(kDriver, "cuDeviceGetAttribute", &f.device_get_attribute);
  Find(kDriver, "cuDeviceGetPCIBusId", &f.device_get_pci_bus_id);
  Find("libcudart.so.13", "cudaRuntimeGetVersion", &f.runtime_get_version);
  Find("libnccl.so.2", "ncclGetVersion", &f.nccl_get_version);
  return f;
}

std::string NcclVersionText(int code) {
  if (code <= 0) return "";
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
  const int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

bool ProbeCudaDevices(const CudaFunctions& f, ProcessDevices* out) {
  int version = 0;
  if (f.driver_get_version != nullptr && f.driver_get_version(&version) == CUDA_SUCCESS) {
    out->cuda_driver_version = static_cast<uint32_t>(version);
  }
  version = 0;
  if (f.runtime_get_version != nullptr && f.runtime_get_version(&version) == 0) {
    out->cuda_runtime_version = static_cast<uint32_t>(version);
  }
  version = 0;
  if (f.nccl_get_version != nullptr && f.nccl_get_version(&version) == 0) {
    out->nccl_version = NcclVersionText(version);
  }
  int count = 0;
  if (f.device_get_count == nullptr || f.device_get == nullptr ||
      f.device_get_count(&count) != CUDA_SUCCESS || count < 0) {
    return false;  // No driver, or not initialised yet.
  }
  out->devices.clear();
  for (int ordinal = 0; ordinal < count && ordinal < 64; ++ordinal) {
    CUdevice device = 0;
    if (f.device_get(&device, ordinal) != CUDA_SUCCESS) continue;
    schema::DeviceInfo d;
    d.device_id = static_cast<uint32_t>(ordinal);
    char text[256] = {};
    if (f.device_get_name != nullptr &&
        f.device_get_name(text, sizeof(text) - 1, device) == CUDA_SUCCESS) {
      d.name = text;
    }
    CUuuid uuid{};
    if (f.device_get_uuid != nullptr && f.device_get_uuid(&uuid, device) == CUDA_SUCCESS) {
      d.uuid = UuidText(uuid);
    }
    size_t bytes = 0;
    if (f.device_total_mem != nullptr && f.device_total_mem(&bytes, device) == CUDA_SUCCESS) {
      d.memory_bytes = bytes;
    }
    char bus[64] = {};
    if (f.device_get_pci_bus_id != nullptr &&
        f.device_get_pci_bus_id(bus, sizeof(bus) - 1, device) == CUDA_SUCCESS) {
      d.pci_bus_id = bus;
    }
    d.sm_count = Attribute(f, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
    d.sm_clock_khz = Attribute(f, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device);
    d.memory_clock_khz = Attribute(f, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, device);
    d.memory_bus_width_bits = Attribute(f, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, device);
    d.compute_major = Attribute(f, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    d.compute_minor = Attribute(f, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    out->devices.push_back(std::move(d));
  }
  return true;
}

bool ProbeProcessDevices(ProcessDevices* out) noexcept {
  try {
    return ProbeCudaDevices(LoadedCudaFunctions(), out);
  } catch (...) {
    return false;
  }
}

}  // namespace lumos::agent::cupti
