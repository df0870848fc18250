/* A stand-in for the CUDA driver, runtime and NCCL of a GPU machine, preloaded into the CUPTI
 * injection host (cupti_injection_test.cc): the few functions agent/cupti/cuda_devices.h asks,
 * answering for one H200 as the real ones did on the machine of 2026-12-04. Nothing else of
 * CUDA is here: CUPTI itself still finds no driver. */
#include <stdio.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct {
  char bytes[16];
} CUuuid;

CUresult cuDriverGetVersion(int* version) {
  *version = 13000;
  return 0;
}
CUresult cuDeviceGetCount(int* count) {
  *count = 1;
  return 0;
}
CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal != 0) return 101; /* CUDA_ERROR_INVALID_DEVICE */
  *device = 0;
  return 0;
}
CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  snprintf(name, (size_t)length, "%s", "NVIDIA H200");
  return 0;
}
CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device) {
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = (char)(0x10 + i);
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  *bytes = 150754820096ull;
  return 0;
}
CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice device) {
  switch (attribute) {
    case 16: *value = 132; return 0;     /* MULTIPROCESSOR_COUNT */
    case 13: *value = 1980000; return 0; /* CLOCK_RATE (kHz) */
    case 36: *value = 3201000; return 0; /* MEMORY_CLOCK_RATE (kHz) */
    case 37: *value = 6144; return 0;    /* GLOBAL_MEMORY_BUS_WIDTH */
    case 75: *value = 9; return 0;       /* COMPUTE_CAPABILITY_MAJOR */
    case 76: *value = 0; return 0;       /* COMPUTE_CAPABILITY_MINOR */
    default: return 1;                   /* CUDA_ERROR_INVALID_VALUE */
  }
}
CUresult cuDeviceGetPCIBusId(char* bus, int length, CUdevice device) {
  snprintf(bus, (size_t)length, "%s", "00000000:18:00.0");
  return 0;
}
int cudaRuntimeGetVersion(int* version) {
  *version = 13000;
  return 0;
}
int ncclGetVersion(int* version) {
  *version = 22809;
  return 0;
}
