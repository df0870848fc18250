// What the process's driver, runtime and NCCL say of its GPUs (agent/cupti/cuda_devices.h), with
// fake functions: a driver not initialised yet names no device but its version; two GPUs are
// named with every field; NCCL's version codes as text. On this machine (no driver) nothing is
// loaded and the probe says so without a crash.
#include "agent/cupti/cuda_devices.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

namespace lumos::agent::cupti {
namespace {

bool g_initialised = false;

CUresult DriverVersion(int* v) {
  *v = 13010;
  return CUDA_SUCCESS;
}
CUresult Count(int* n) {
  if (!g_initialised) return CUDA_ERROR_NOT_INITIALIZED;
  *n = 2;
  return CUDA_SUCCESS;
}
CUresult Get(CUdevice* d, int ordinal) {
  *d = 100 + ordinal;
  return CUDA_SUCCESS;
}
CUresult Name(char* name, int length, CUdevice d) {
  std::snprintf(name, static_cast<size_t>(length), "%s",
                d == 100 ? "NVIDIA H200" : "NVIDIA H100 80GB HBM3");
  return CUDA_SUCCESS;
}
CUresult Uuid(CUuuid* uuid, CUdevice) {
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(0xa0 + i);
  return CUDA_SUCCESS;
}
CUresult Memory(size_t* bytes, CUdevice d) {
  *bytes = d == 100 ? 150'754'820'096 : 85'520'809'984;
  return CUDA_SUCCESS;
}
CUresult Attribute(int* value, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = 132;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = 9;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;  // Unknown to this driver: 0 in the trace.
  }
}
CUresult Bus(char* bus, int length, CUdevice d) {
  std::snprintf(bus, static_cast<size_t>(length), "00000000:%02x:00.0", d - 100 + 0x18);
  return CUDA_SUCCESS;
}
int Nccl(int* v) {
  *v = 22809;
  return 0;
}

CudaFunctions Fakes() {
  CudaFunctions f;
  f.driver_get_version = &DriverVersion;
  f.device_get_count = &Count;
  f.device_get = &Get;
  f.device_get_name = &Name;
  f.device_get_uuid = &Uuid;
  f.device_total_mem = &Memory;
  f.device_get_attribute = &Attribute;
  f.device_get_pci_bus_id = &Bus;
  f.nccl_get_version = &Nccl;
  return f;
}

TEST(CudaDevicesTest, BeforeTheDriverIsInitialisedOnlyVersions) {
  g_initialised = false;
  ProcessDevices out;
  EXPECT_FALSE(ProbeCudaDevices(Fakes(), &out));
  EXPECT_TRUE(out.devices.empty());
  EXPECT_EQ(out.cuda_driver_version, 13010u);
  EXPECT_EQ(out.cuda_runtime_version, 0u);  // No runtime loaded.
  EXPECT_EQ(out.nccl_version, "2.28.9");
}

TEST(CudaDevicesTest, EveryDeviceWithItsFields) {
  g_initialised = true;
  ProcessDevices out;
  ASSERT_TRUE(ProbeCudaDevices(Fakes(), &out));
  ASSERT_EQ(out.devices.size(), 2u);
  const schema::DeviceInfo& d = out.devices[0];
  EXPECT_EQ(d.device_id, 0u);
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.uuid, "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
  EXPECT_EQ(d.memory_bytes, 150'754'820'096u);
  EXPECT_EQ(d.pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(d.sm_count, 132u);
  EXPECT_EQ(d.compute_major, 9u);
  EXPECT_EQ(d.sm_clock_khz, 0u);
  EXPECT_EQ(out.devices[1].device_id, 1u);
  EXPECT_EQ(out.devices[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(out.devices[1].pci_bus_id, "00000000:19:00.0");
}

TEST(CudaDevicesTest, NcclVersionCodes) {
  EXPECT_EQ(NcclVersionText(22809), "2.28.9");
  EXPECT_EQ(NcclVersionText(21903), "2.19.3");
  EXPECT_EQ(NcclVersionText(2804), "2.8.4");  // Before 2.9: major*1000 + minor*100 + patch.
  EXPECT_EQ(NcclVersionText(0), "");
}

TEST(CudaDevicesTest, NothingLoadedHereNothingNamed) {
  const CudaFunctions loaded = LoadedCudaFunctions();
  EXPECT_EQ(loaded.device_get_count, nullptr);  // No libcuda on this machine.
  ProcessDevices out;
  EXPECT_FALSE(ProbeProcessDevices(&out));
  EXPECT_TRUE(out.devices.empty());
}

}  // namespace
}  // namespace lumos::agent::cupti
