#include "tests/agent/nccl/nccl_sequence.h"

#include <cstring>

namespace lumos::testing {

int RunNcclSequence(const NcclApi& api, int rank) {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  std::strcpy(id.internal, "lumos-fake-nccl-job");  // As if rank 0 had broadcast it.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "world";
  ncclComm_t world = nullptr;
  if (api.init_rank_config(&world, kSequenceWorldRanks, id, rank, &config) != ncclSuccess) return 1;
  char buffer[64] = {};
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(0x5000);
  const int next = (rank + 1) % kSequenceWorldRanks;
  const int previous = (rank + kSequenceWorldRanks - 1) % kSequenceWorldRanks;
  // 12 operations on "world".
  if (api.all_reduce(buffer, buffer, 1024, ncclFloat32, ncclSum, world, stream) != 0) return 2;
  if (api.all_reduce(buffer, buffer, 1024, ncclFloat32, ncclMax, world, stream) != 0) return 3;
  if (api.broadcast(buffer, buffer, 512, ncclBfloat16, 1, world, stream) != 0) return 4;
  if (api.bcast(buffer, 8, ncclInt64, 2, world, stream) != 0) return 5;
  if (api.reduce(buffer, buffer, 128, ncclFloat64, ncclSum, 0, world, stream) != 0) return 6;
  if (api.all_gather(buffer, buffer, 64, ncclFloat32, world, stream) != 0) return 7;
  if (api.reduce_scatter(buffer, buffer, 32, ncclFloat32, ncclSum, world, stream) != 0) return 8;
  if (api.all_to_all(buffer, buffer, 16, ncclInt32, world, stream) != 0) return 9;
  if (api.gather(buffer, buffer, 10, ncclFloat16, 0, world, stream) != 0) return 10;
  if (api.scatter(buffer, buffer, 10, ncclFloat16, 0, world, stream) != 0) return 11;
  if (api.group_start() != 0) return 12;
  if (api.send(buffer, 100, ncclUint8, next, world, stream) != 0) return 13;
  if (api.recv(buffer, 100, ncclUint8, previous, world, stream) != 0) return 14;
  if (api.group_end() != 0) return 15;
  // 1 operation on the half this rank lands in.
  ncclComm_t half = nullptr;
  if (api.split(world, rank % 2, rank, &half, nullptr) != ncclSuccess || half == nullptr) return 16;
  if (api.all_reduce(buffer, buffer, 4, ncclFloat32, ncclSum, half, stream) != 0) return 17;
  if (api.destroy(half) != ncclSuccess) return 18;
  if (api.destroy(world) != ncclSuccess) return 19;
  return 0;
}

}  // namespace lumos::testing
