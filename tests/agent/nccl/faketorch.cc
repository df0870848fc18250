// libfaketorch.so: a library that NEEDs libnccl.so.2 (here the fake), the shape of PyTorch's
// libtorch_cuda.so. Loaded with dlopen(RTLD_LOCAL) (case C) or Python ctypes (case F''), its
// libnccl sits in a local group where RTLD_NEXT cannot see it.
#include <cstdio>

#include "tests/agent/nccl/nccl_sequence.h"

extern "C" __attribute__((visibility("default"))) int faketorch_run(int rank) {
  const lumos::testing::NcclApi api = lumos::testing::LinkedNcclApi();
  const int failed = lumos::testing::RunNcclSequence(api, rank);
  std::printf("faketorch rank %d: %s\n", rank, failed == 0 ? "done" : "failed");
  std::fflush(stdout);
  return failed;
}
