// Case A: a program linked to libnccl.so.2 (the fake) calling NCCL through its PLT, with NVTX
// ranges around the steps. Usage:
//   nccl_linked_workload [RANK]            the sequence (nccl_sequence.h) as RANK
//   nccl_linked_workload initrank [squat] [chdir] R/N...
//                                          ncclCommInitRank(nranks=N, rank=R) for each pair, in
//                                          order, one all-reduce on each, then destroys them. With
//                                          `squat`, first puts a file where the agent would rename
//                                          its trace for the last pair's rank: the agent's
//                                          "*.norank.pb.zst" in LUMOS_OUTPUT_DIR, as "*.rank<R>".
//                                          With `chdir`, ends in "/" (the agent's rename at
//                                          exit must not depend on the current directory).
//                                          With `nodestroy`, exits without ncclCommDestroy;
//                                          with `grouped`, creates each inside
//                                          ncclGroupStart/End (as XLA does).
//   nccl_linked_workload scalable RANK     ncclCommInitRankScalable (4 ranks, 2 unique ids),
//                                          one all-reduce, ncclCommShrink excluding rank 3,
//                                          one all-reduce on it, ncclCommFinalize and Revoke
//                                          (not wrapped: they reach NCCL directly),
//                                          Destroy of both.
#include <dirent.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/agent/nccl/nccl_sequence.h"

namespace {

// Writes "squatter\n" at the name the agent's norank trace would get as rank `rank`.
bool Squat(int rank) {
  const char* dir = std::getenv("LUMOS_OUTPUT_DIR");
  DIR* listing = dir != nullptr ? opendir(dir) : nullptr;
  if (listing == nullptr) return false;
  const std::string suffix = ".norank.pb.zst";
  std::string target;
  while (dirent* entry = readdir(listing)) {
    const std::string name = entry->d_name;
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      target = std::string(dir) + "/" + name.substr(0, name.size() - suffix.size()) + ".rank" +
               std::to_string(rank) + ".pb.zst";
    }
  }
  closedir(listing);
  FILE* file = target.empty() ? nullptr : std::fopen(target.c_str(), "wx");
  if (file == nullptr) return false;
  std::fputs("squatter\n", file);
  return std::fclose(file) == 0;
}

int RunInitRank(int argc, char** argv) {
  bool squat = false, change_directory = false, destroy = true, grouped = false;
  std::vector<ncclComm_t> comms;
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  std::strcpy(id.internal, "lumos-fake-initrank");
  char buffer[64] = {};
  int last_rank = -1;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "squat") == 0) {
      squat = true;
      continue;
    }
    if (std::strcmp(argv[i], "chdir") == 0) {
      change_directory = true;
      continue;
    }
    if (std::strcmp(argv[i], "nodestroy") == 0) {
      destroy = false;
      continue;
    }
    if (std::strcmp(argv[i], "grouped") == 0) {
      grouped = true;
      continue;
    }
    int rank = -1, nranks = 0;
    if (std::sscanf(argv[i], "%d/%d", &rank, &nranks) != 2) return 20;
    id.internal[100] = static_cast<char>(i);  // A communicator of its own per pair.
    id.internal[101] = static_cast<char>(i >> 8);
    ncclComm_t comm = nullptr;
    if (grouped && ncclGroupStart() != ncclSuccess) return 26;
    if (ncclCommInitRank(&comm, nranks, id, rank) != ncclSuccess) return 21;
    if (grouped && ncclGroupEnd() != ncclSuccess) return 27;
    if (ncclAllReduce(buffer, buffer, 4, ncclFloat32, ncclSum, comm, nullptr) != ncclSuccess) {
      return 22;
    }
    comms.push_back(comm);
    last_rank = rank;
  }
  if (squat && !Squat(last_rank)) return 23;
  for (ncclComm_t comm : comms) {
    if (destroy && ncclCommDestroy(comm) != ncclSuccess) return 24;
  }
  std::printf("initrank workload: %zu communicators\n", comms.size());
  if (change_directory && chdir("/") != 0) return 25;
  return 0;
}

int RunScalable(int rank) {
  ncclUniqueId ids[2];
  std::memset(ids, 0, sizeof(ids));
  std::strcpy(ids[0].internal, "lumos-fake-scalable-0");
  std::strcpy(ids[1].internal, "lumos-fake-scalable-1");
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "scalable";
  ncclComm_t world = nullptr;
  if (ncclCommInitRankScalable(&world, 4, rank, 2, ids, &config) != ncclSuccess) return 30;
  char buffer[64] = {};
  if (ncclAllReduce(buffer, buffer, 4, ncclFloat32, ncclSum, world, nullptr) != ncclSuccess) {
    return 31;
  }
  int excluded[1] = {3};
  ncclComm_t shrunk = nullptr;
  if (ncclCommShrink(world, excluded, 1, &shrunk, nullptr, NCCL_SHRINK_DEFAULT) != ncclSuccess) {
    return 32;
  }
  if (ncclAllReduce(buffer, buffer, 2, ncclFloat32, ncclMax, shrunk, nullptr) != ncclSuccess) {
    return 33;
  }
  if (ncclCommFinalize(shrunk) != ncclSuccess) return 34;
  if (ncclCommRevoke(world, NCCL_REVOKE_DEFAULT) != ncclSuccess) return 35;
  if (ncclCommDestroy(shrunk) != ncclSuccess || ncclCommDestroy(world) != ncclSuccess) return 36;
  std::printf("scalable workload rank %d: done\n", rank);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "initrank") == 0) return RunInitRank(argc - 2, argv + 2);
  if (argc > 2 && std::strcmp(argv[1], "scalable") == 0) return RunScalable(std::atoi(argv[2]));
  const int rank = argc > 1 ? std::atoi(argv[1]) : 0;
  const lumos::testing::NcclApi api = lumos::testing::LinkedNcclApi();
  nvtxRangePushA("train_step");
  nvtxMarkA("before-nccl");
  const int failed = lumos::testing::RunNcclSequence(api, rank);
  nvtxRangePop();
  std::printf("linked workload rank %d: %s\n", rank, failed == 0 ? "done" : "failed");
  return failed;
}
