// Programs that reach NCCL without linking it (the agent's other interposition cases):
//   default LIB RANK   dlopen(LIB, RTLD_LOCAL), then the API via dlsym(RTLD_DEFAULT) (case
//                      B'; what it finds is the preloaded agent's wrappers), falling back to
//                      dlsym(handle) (case B, not interposable) when there is no global symbol;
//   torch LIB RANK     dlopen(LIB = libfaketorch.so, RTLD_LOCAL) and run its sequence (case C);
//   unresolved         no libnccl at all: call whatever ncclAllReduce RTLD_DEFAULT finds.
#include <dlfcn.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/agent/nccl/nccl_sequence.h"

namespace {

void* Find(void* library, const char* name) {
  void* global = dlsym(RTLD_DEFAULT, name);
  return global != nullptr ? global : dlsym(library, name);
}

template <typename Fn>
void Load(void* library, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(Find(library, name));
}

int RunDefault(const char* path, int rank) {
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::printf("cannot load %s\n", path);
    return 3;
  }
  lumos::testing::NcclApi api{};
  Load(library, "ncclCommInitRankConfig", &api.init_rank_config);
  Load(library, "ncclAllReduce", &api.all_reduce);
  Load(library, "ncclBroadcast", &api.broadcast);
  Load(library, "ncclBcast", &api.bcast);
  Load(library, "ncclReduce", &api.reduce);
  Load(library, "ncclAllGather", &api.all_gather);
  Load(library, "ncclReduceScatter", &api.reduce_scatter);
  Load(library, "ncclAlltoAll", &api.all_to_all);
  Load(library, "ncclGather", &api.gather);
  Load(library, "ncclScatter", &api.scatter);
  Load(library, "ncclSend", &api.send);
  Load(library, "ncclRecv", &api.recv);
  Load(library, "ncclGroupStart", &api.group_start);
  Load(library, "ncclGroupEnd", &api.group_end);
  Load(library, "ncclCommSplit", &api.split);
  Load(library, "ncclCommDestroy", &api.destroy);
  const int failed = lumos::testing::RunNcclSequence(api, rank);
  std::printf("default workload rank %d: %s\n", rank, failed == 0 ? "done" : "failed");
  return failed;
}

int RunTorch(const char* path, int rank) {
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  auto run = library != nullptr ? reinterpret_cast<int (*)(int)>(dlsym(library, "faketorch_run"))
                                : nullptr;
  if (run == nullptr) {
    std::printf("cannot load %s\n", path);
    return 3;
  }
  return run(rank);
}

int RunUnresolved() {
  auto all_reduce =
      reinterpret_cast<decltype(&ncclAllReduce)>(dlsym(RTLD_DEFAULT, "ncclAllReduce"));
  if (all_reduce == nullptr) {
    std::printf("no ncclAllReduce\n");
    return 0;
  }
  char buffer[16];
  for (int i = 0; i < 3; ++i) {
    const ncclResult_t result =
        all_reduce(buffer, buffer, 4, ncclFloat32, ncclSum, nullptr, nullptr);
    std::printf("ncclAllReduce returned %d\n", static_cast<int>(result));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::strcmp(argv[1], "default") == 0)
    return RunDefault(argv[2], std::atoi(argv[3]));
  if (argc >= 4 && std::strcmp(argv[1], "torch") == 0) return RunTorch(argv[2], std::atoi(argv[3]));
  if (argc >= 2 && std::strcmp(argv[1], "unresolved") == 0) return RunUnresolved();
  std::fprintf(stderr, "usage: nccl_loader_workload default|torch LIB RANK | unresolved\n");
  return 2;
}
