// Case A: a program linked to libnccl.so.2 (the fake) calling NCCL through its PLT, with NVTX
// ranges around the steps. Usage: nccl_linked_workload [RANK]
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>

#include "tests/agent/nccl/nccl_sequence.h"

int main(int argc, char** argv) {
  const int rank = argc > 1 ? std::atoi(argv[1]) : 0;
  const lumos::testing::NcclApi api = {&ncclCommInitRankConfig,
                                       &ncclAllReduce,
                                       &ncclBroadcast,
                                       &ncclBcast,
                                       &ncclReduce,
                                       &ncclAllGather,
                                       &ncclReduceScatter,
                                       &ncclAlltoAll,
                                       &ncclGather,
                                       &ncclScatter,
                                       &ncclSend,
                                       &ncclRecv,
                                       &ncclGroupStart,
                                       &ncclGroupEnd,
                                       &ncclCommSplit,
                                       &ncclCommDestroy};
  nvtxRangePushA("train_step");
  nvtxMarkA("before-nccl");
  const int failed = lumos::testing::RunNcclSequence(api, rank);
  nvtxRangePop();
  std::printf("linked workload rank %d: %s\n", rank, failed == 0 ? "done" : "failed");
  return failed;
}
