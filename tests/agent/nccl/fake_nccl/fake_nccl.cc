// A test double for libnccl.so.2 (SONAME libnccl.so.2), for what cannot run here: real NCCL
// needs a GPU to create a communicator. Like the real library it exports pncclX with weak ncclX
// aliases, so the agent's LD_PRELOAD wrappers interpose the same way.
//   Communicators are fake but consistent: ncclCommInitRank(comm, nranks, id, rank) gives a comm
//   whose hash is derived from the unique id bytes (so every "rank" process agrees), rank,
//   nranks and device (FAKE_NCCL_DEVICE_BASE + rank, default 0); ncclCommSplit groups by color
//   (ranks with the same color, ordered by key, assuming the caller's parent has every rank
//   doing the same); collectives do no work and return ncclSuccess.
//   It is also a fake NCCL *core* for the profiler plugin: at the first communicator init it
//   reads NCCL_PROFILER_PLUGIN, dlopens it RTLD_NOW|RTLD_LOCAL and takes ncclProfiler_v5 (or
//   ncclProfiler_v4 when FAKE_NCCL_PROFILER_VERSION=4), then drives it like NCCL 2.28 does:
//   init per communicator, and per operation GroupApi -> CollApi/P2pApi -> Coll/P2p (stopped
//   once "enqueued") -> one KernelCh per channel with fake GPU globaltimer values
//   (CLOCK_REALTIME based: channel c starts at t0 + 100 c and runs 5000 ns), finalize at destroy.
//   An ungrouped call runs its Coll inside the API event; a grouped one (ncclGroupStart/End)
//   after it, at ncclGroupEnd — the two orders real NCCL produces. A communicator created
//   inside a group gets its plugin init at ncclGroupEnd, on a thread of its own.
//   As NCCL 2.28 does, a collective on a one-rank communicator (ncclLaunchOneRank) or with
//   count 0 gets its API event but no Coll event.
// FAKE_NCCL_FAIL_ALLREDUCE=1 makes ncclAllReduce return ncclInternalError.
// FAKE_NCCL_MISSING_KERNELCH=1: each Coll/P2p announces one channel more than it reports
//   KernelCh events for (as NCCL 2.28 p2p can: NVIDIA/nccl issue #2056).
// Also ncclCommInitRankScalable (hash from all unique ids), ncclCommShrink (the parent's ranks
// minus the excluded ones), ncclCommFinalize and ncclCommRevoke (no-ops on a live comm).
#include <dlfcn.h>
#include <nccl.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/nccl/nccl_profiler_abi.h"

namespace {

namespace abi = lumos::agent::nccl_abi;

constexpr uint8_t kCollChannels = 2;
constexpr uint8_t kP2pChannels = 1;
constexpr uint64_t kKernelNs = 5000;
constexpr uint64_t kChannelStaggerNs = 100;

struct Plugin {
  bool loaded = false;
  abi::ProfilerV5* v5 = nullptr;
  abi::ProfilerV4* v4 = nullptr;
};

Plugin& LoadPlugin() {
  static Plugin plugin;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* path = getenv("NCCL_PROFILER_PLUGIN");
    if (path == nullptr || path[0] == '\0') return;
    void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return;
    const char* version = getenv("FAKE_NCCL_PROFILER_VERSION");
    if (version == nullptr || strcmp(version, "4") != 0) {
      plugin.v5 = static_cast<abi::ProfilerV5*>(dlsym(library, "ncclProfiler_v5"));
    }
    if (plugin.v5 == nullptr) {
      plugin.v4 = static_cast<abi::ProfilerV4*>(dlsym(library, "ncclProfiler_v4"));
    }
    plugin.loaded = plugin.v5 != nullptr || plugin.v4 != nullptr;
  });
  return plugin;
}

uint64_t GlobalTimerNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

const char* TypeName(ncclDataType_t type) {
  static const char* const kNames[] = {"ncclInt8",     "ncclUint8",      "ncclInt32",
                                       "ncclUint32",   "ncclInt64",      "ncclUint64",
                                       "ncclFloat16",  "ncclFloat32",    "ncclFloat64",
                                       "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
  return type >= 0 && type < ncclNumTypes ? kNames[type] : "ncclUnknown";
}

// A queued operation (between its API event and its launch).
struct Task {
  bool p2p = false;
  const char* func = "";
  size_t count = 0;
  ncclDataType_t type = ncclInt8;
  int root = 0;
  int peer = -1;
  void* api_handle = nullptr;
};

}  // namespace

struct ncclComm {
  uint64_t hash = 0;
  int rank = 0;
  int nranks = 1;
  int device = 0;
  void* profiler_context = nullptr;
  uint64_t seq[16] = {};
  int splits = 0;
};

namespace {

// As in NCCL (ncclProfilerEventMask): one activation mask for all communicators, which every
// plugin init writes.
int g_activation_mask = 0;

thread_local int t_group_depth = 0;
thread_local void* t_group_api = nullptr;
thread_local std::vector<std::pair<ncclComm*, Task>> t_tasks;

uint64_t HashBytes(const void* data, size_t size, uint64_t seed) {
  // Not the agent's hash on purpose: tests check that the agent adopts the plugin's id.
  uint64_t hash = seed;
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 0x9e3779b97f4a7c15ull + 7;
  return hash;
}

void InitProfiler(ncclComm* comm, const char* name) {
  Plugin& plugin = LoadPlugin();
  if (!plugin.loaded) return;
  if (plugin.v5 != nullptr) {
    plugin.v5->init(&comm->profiler_context, comm->hash, &g_activation_mask, name, 1, comm->nranks,
                    comm->rank, nullptr);
  } else {
    plugin.v4->init(&comm->profiler_context, &g_activation_mask, name, comm->hash, 1, comm->nranks,
                    comm->rank, nullptr);
  }
}

bool Wants(ncclComm* comm, uint64_t bit) {
  // Events of a communicator without a plugin context start with a null context, as in NCCL.
  (void)comm;
  return LoadPlugin().loaded && (static_cast<uint64_t>(g_activation_mask) & bit) != 0;
}

void* StartV5(ncclComm* comm, abi::EventDescrV5* descr) {
  void* handle = nullptr;
  descr->rank = comm->rank;
  LoadPlugin().v5->start_event(comm->profiler_context, &handle, descr);
  return handle;
}

void Stop(void* handle) {
  if (handle == nullptr) return;
  Plugin& plugin = LoadPlugin();
  if (plugin.v5 != nullptr) {
    plugin.v5->stop_event(handle);
  } else {
    plugin.v4->stop_event(handle);
  }
}

// NCCL's seq number: per communicator and function.
uint64_t NextSeq(ncclComm* comm, const char* func) {
  return comm->seq[HashBytes(func, strlen(func), 0) % 16]++;
}

// Launch: Coll/P2p (stopped when enqueued), then the kernel channels.
void Launch(ncclComm* comm, const Task& task) {
  Plugin& plugin = LoadPlugin();
  const uint64_t op_bit = task.p2p ? abi::kProfileP2p : abi::kProfileColl;
  if (!Wants(comm, op_bit)) return;
  // NCCL runs these without a task: no Coll event (and no kernel channels).
  if (!task.p2p && (comm->nranks == 1 || task.count == 0)) return;
  void* op = nullptr;
  const uint8_t channels = task.p2p ? kP2pChannels : kCollChannels;
  const char* missing = getenv("FAKE_NCCL_MISSING_KERNELCH");
  const uint8_t announced = channels + (missing != nullptr && strcmp(missing, "1") == 0 ? 1 : 0);
  if (plugin.v5 != nullptr) {
    abi::EventDescrV5 descr{};
    descr.type = op_bit;
    descr.parent = task.api_handle;
    if (task.p2p) {
      descr.p2p = {task.func, nullptr, TypeName(task.type), task.count, task.peer,
                   announced, nullptr};
    } else {
      descr.coll = {NextSeq(comm, task.func), task.func, nullptr, nullptr, task.count, task.root,
                    TypeName(task.type),      announced, 8,       "Ring",  "Simple",   nullptr};
    }
    op = StartV5(comm, &descr);
  } else {
    abi::EventDescrV4 descr{};
    descr.type = static_cast<uint8_t>(op_bit);
    descr.rank = comm->rank;
    if (task.p2p) {
      descr.p2p = {task.func, nullptr, TypeName(task.type), task.count, task.peer, announced};
    } else {
      descr.coll = {NextSeq(comm, task.func), task.func, nullptr, nullptr, task.count, task.root,
                    TypeName(task.type),      announced, 8,       "Tree",  "LL128"};
    }
    plugin.v4->start_event(comm->profiler_context, &op, &descr);
  }
  Stop(op);  // Enqueued: NCCL's stop does not mean done.
  if (op == nullptr || !Wants(comm, abi::kProfileKernelCh)) return;
  const uint64_t t0 = GlobalTimerNs();
  for (uint8_t channel = 0; channel < channels; ++channel) {
    void* kernel = nullptr;
    const uint64_t start = t0 + kChannelStaggerNs * channel;
    abi::EventStateArgs args{};
    args.kernel_ch.timer = start + kKernelNs;
    if (plugin.v5 != nullptr) {
      abi::EventDescrV5 descr{};
      descr.type = abi::kProfileKernelCh;
      descr.parent = op;
      descr.kernel_ch = {channel, start};
      kernel = StartV5(comm, &descr);
      if (kernel != nullptr) plugin.v5->record_event_state(kernel, abi::kStateKernelChStop, &args);
    } else {
      abi::EventDescrV4 descr{};
      descr.type = static_cast<uint8_t>(abi::kProfileKernelCh);
      descr.parent = op;
      descr.kernel_ch = {channel, start};
      plugin.v4->start_event(comm->profiler_context, &kernel, &descr);
      if (kernel != nullptr) plugin.v4->record_event_state(kernel, abi::kStateKernelChStop, &args);
    }
    Stop(kernel);
  }
}

void GroupApiStart(ncclComm* comm) {
  if (t_group_api != nullptr || !Wants(comm, abi::kProfileGroupApi) || LoadPlugin().v5 == nullptr) {
    return;
  }
  abi::EventDescrV5 descr{};
  descr.type = abi::kProfileGroupApi;
  descr.group_api = {0, t_group_depth};
  t_group_api = StartV5(comm, &descr);
}

// Communicators created inside ncclGroupStart/End: NCCL initializes them at ncclGroupEnd, in
// jobs on threads of their own, so the plugin's init runs there.
thread_local std::vector<std::pair<ncclComm*, std::string>> t_group_inits;

void FlushGroup() {
  for (auto& [comm, name] : t_group_inits) {
    std::thread job([&] { InitProfiler(comm, name.c_str()); });
    job.join();
  }
  t_group_inits.clear();
  for (auto& [comm, task] : t_tasks) Launch(comm, task);
  t_tasks.clear();
  Stop(t_group_api);
  t_group_api = nullptr;
}

// One collective or p2p call: API event, then (ungrouped) launch inside it.
ncclResult_t Enqueue(ncclComm* comm, Task task, void* stream) {
  if (comm == nullptr) return ncclInvalidArgument;
  GroupApiStart(comm);
  const uint64_t api_bit = task.p2p ? abi::kProfileP2pApi : abi::kProfileCollApi;
  if (Wants(comm, api_bit) && LoadPlugin().v5 != nullptr) {
    abi::EventDescrV5 descr{};
    descr.type = api_bit;
    descr.parent = t_group_api;
    if (task.p2p) {
      descr.p2p_api = {task.func, task.count, TypeName(task.type), stream, false};
    } else {
      descr.coll_api = {task.func, task.count, TypeName(task.type), task.root, stream, false};
    }
    task.api_handle = StartV5(comm, &descr);
  }
  if (t_group_depth > 0) {
    Stop(task.api_handle);  // Grouped: launched at ncclGroupEnd, after the API event.
    t_tasks.emplace_back(comm, task);
    return ncclSuccess;
  }
  Launch(comm, task);
  Stop(task.api_handle);
  Stop(t_group_api);
  t_group_api = nullptr;
  return ncclSuccess;
}

ncclComm* NewComm(uint64_t hash, int nranks, int rank, const char* name) {
  auto* comm = new ncclComm;
  comm->hash = hash;
  comm->nranks = nranks;
  comm->rank = rank;
  const char* base = getenv("FAKE_NCCL_DEVICE_BASE");
  comm->device = (base != nullptr ? atoi(base) : 0) + rank;
  if (t_group_depth > 0) {
    t_group_inits.emplace_back(comm, name);
  } else {
    InitProfiler(comm, name);
  }
  return comm;
}

const char* ConfigName(const ncclConfig_t* config) {
  return config != nullptr && config->commName != nullptr ? config->commName : "";
}

}  // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))
// The weak public alias of pnccl<name>, as in the real libnccl.
#define FAKE_ALIAS(name) \
  FAKE_EXPORT __attribute__((weak, alias("pnccl" #name))) decltype(pnccl##name) nccl##name;

FAKE_EXPORT ncclResult_t pncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}
FAKE_ALIAS(GetVersion)

FAKE_EXPORT ncclResult_t pncclGetUniqueId(ncclUniqueId* id) {
  if (id == nullptr) return ncclInvalidArgument;
  memset(id->internal, 0, sizeof(id->internal));
  snprintf(id->internal, sizeof(id->internal), "fake-nccl-%ld", static_cast<long>(time(nullptr)));
  return ncclSuccess;
}
FAKE_ALIAS(GetUniqueId)

FAKE_EXPORT ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id,
                                                 int rank, ncclConfig_t* config) {
  if (comm == nullptr || nranks <= 0 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  *comm = NewComm(HashBytes(id.internal, sizeof(id.internal), 1), nranks, rank, ConfigName(config));
  return ncclSuccess;
}
FAKE_ALIAS(CommInitRankConfig)

FAKE_EXPORT ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id,
                                           int rank) {
  return pncclCommInitRankConfig(comm, nranks, id, rank, nullptr);
}
FAKE_ALIAS(CommInitRank)

FAKE_EXPORT ncclResult_t pncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (comms == nullptr || ndev <= 0) return ncclInvalidArgument;
  const uint64_t hash = HashBytes(&comms, sizeof(comms), 2);
  for (int i = 0; i < ndev; ++i) {
    comms[i] = NewComm(hash, ndev, i, "");
    if (devlist != nullptr) comms[i]->device = devlist[i];
  }
  return ncclSuccess;
}
FAKE_ALIAS(CommInitAll)

FAKE_EXPORT ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                        ncclConfig_t* config) {
  if (comm == nullptr || newcomm == nullptr) return ncclInvalidArgument;
  const int split = comm->splits++;
  if (color == NCCL_SPLIT_NOCOLOR) {
    *newcomm = nullptr;
    return ncclSuccess;
  }
  // Every rank does the same split: the members of a color are the ranks r with r % ncolors...
  // The fake assumes colors 0..k-1 assigned as rank % k with k = FAKE_NCCL_SPLIT_COLORS (2).
  const char* colors_text = getenv("FAKE_NCCL_SPLIT_COLORS");
  const int colors = colors_text != nullptr && atoi(colors_text) > 0 ? atoi(colors_text) : 2;
  int members = 0;
  for (int r = 0; r < comm->nranks; ++r) members += (r % colors == color) ? 1 : 0;
  const uint64_t parts[3] = {comm->hash, static_cast<uint64_t>(color),
                             static_cast<uint64_t>(split)};
  (void)key;
  *newcomm = NewComm(HashBytes(parts, sizeof(parts), 3), members > 0 ? members : 1,
                     comm->rank / colors, ConfigName(config));
  (*newcomm)->device = comm->device;
  return ncclSuccess;
}
FAKE_ALIAS(CommSplit)

FAKE_EXPORT ncclResult_t pncclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank, int nId,
                                                   ncclUniqueId* ids, ncclConfig_t* config) {
  if (comm == nullptr || nranks <= 0 || rank < 0 || rank >= nranks || nId <= 0 || ids == nullptr) {
    return ncclInvalidArgument;
  }
  *comm = NewComm(HashBytes(ids, sizeof(ncclUniqueId) * static_cast<size_t>(nId), 4), nranks, rank,
                  ConfigName(config));
  return ncclSuccess;
}
FAKE_ALIAS(CommInitRankScalable)

FAKE_EXPORT ncclResult_t pncclCommShrink(ncclComm_t comm, int* exclude, int exclude_count,
                                         ncclComm_t* newcomm, ncclConfig_t* config, int) {
  if (comm == nullptr || newcomm == nullptr || exclude_count < 0) return ncclInvalidArgument;
  const int shrink = comm->splits++;
  int below = 0;
  for (int i = 0; i < exclude_count; ++i) {
    if (exclude[i] == comm->rank) return ncclInvalidArgument;  // An excluded rank does not call.
    below += exclude[i] < comm->rank ? 1 : 0;
  }
  uint64_t excluded = 0;
  for (int i = 0; i < exclude_count; ++i) excluded += HashBytes(&exclude[i], sizeof(int), 5);
  const uint64_t parts[3] = {comm->hash, excluded, static_cast<uint64_t>(shrink)};
  *newcomm = NewComm(HashBytes(parts, sizeof(parts), 6), comm->nranks - exclude_count,
                     comm->rank - below, ConfigName(config));
  (*newcomm)->device = comm->device;
  return ncclSuccess;
}
FAKE_ALIAS(CommShrink)

FAKE_EXPORT ncclResult_t pncclCommFinalize(ncclComm_t comm) {
  return comm != nullptr ? ncclSuccess : ncclInvalidArgument;
}
FAKE_ALIAS(CommFinalize)

FAKE_EXPORT ncclResult_t pncclCommRevoke(ncclComm_t comm, int flags) {
  return comm != nullptr && flags == NCCL_REVOKE_DEFAULT ? ncclSuccess : ncclInvalidArgument;
}
FAKE_ALIAS(CommRevoke)

FAKE_EXPORT ncclResult_t pncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclInvalidArgument;
  Plugin& plugin = LoadPlugin();
  if (plugin.loaded && comm->profiler_context != nullptr) {
    if (plugin.v5 != nullptr) {
      plugin.v5->finalize(comm->profiler_context);
    } else {
      plugin.v4->finalize(comm->profiler_context);
    }
  }
  delete comm;
  return ncclSuccess;
}
FAKE_ALIAS(CommDestroy)

FAKE_EXPORT ncclResult_t pncclCommAbort(ncclComm_t comm) { return pncclCommDestroy(comm); }
FAKE_ALIAS(CommAbort)

FAKE_EXPORT ncclResult_t pncclCommCount(const ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) return ncclInvalidArgument;
  *count = comm->nranks;
  return ncclSuccess;
}
FAKE_ALIAS(CommCount)

FAKE_EXPORT ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (comm == nullptr || device == nullptr) return ncclInvalidArgument;
  *device = comm->device;
  return ncclSuccess;
}
FAKE_ALIAS(CommCuDevice)

FAKE_EXPORT ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}
FAKE_ALIAS(CommUserRank)

FAKE_EXPORT ncclResult_t pncclAllReduce(const void*, void*, size_t count, ncclDataType_t type,
                                        ncclRedOp_t, ncclComm_t comm, cudaStream_t stream) {
  const char* fail = getenv("FAKE_NCCL_FAIL_ALLREDUCE");
  if (fail != nullptr && strcmp(fail, "1") == 0) return ncclInternalError;
  return Enqueue(comm, {.func = "AllReduce", .count = count, .type = type}, stream);
}
FAKE_ALIAS(AllReduce)

FAKE_EXPORT ncclResult_t pncclReduce(const void*, void*, size_t count, ncclDataType_t type,
                                     ncclRedOp_t, int root, ncclComm_t comm, cudaStream_t stream) {
  return Enqueue(comm, {.func = "Reduce", .count = count, .type = type, .root = root}, stream);
}
FAKE_ALIAS(Reduce)

FAKE_EXPORT ncclResult_t pncclBroadcast(const void*, void*, size_t count, ncclDataType_t type,
                                        int root, ncclComm_t comm, cudaStream_t stream) {
  return Enqueue(comm, {.func = "Broadcast", .count = count, .type = type, .root = root}, stream);
}
FAKE_ALIAS(Broadcast)

FAKE_EXPORT ncclResult_t pncclBcast(void*, size_t count, ncclDataType_t type, int root,
                                    ncclComm_t comm, cudaStream_t stream) {
  return Enqueue(comm, {.func = "Broadcast", .count = count, .type = type, .root = root}, stream);
}
FAKE_ALIAS(Bcast)

FAKE_EXPORT ncclResult_t pncclReduceScatter(const void*, void*, size_t count, ncclDataType_t type,
                                            ncclRedOp_t, ncclComm_t comm, cudaStream_t stream) {
  return Enqueue(comm, {.func = "ReduceScatter", .count = count, .type = type}, stream);
}
FAKE_ALIAS(ReduceScatter)

FAKE_EXPORT ncclResult_t pncclAllGather(const void*, void*, size_t count, ncclDataType_t type,
                                        ncclComm_t comm, cudaStream_t stream) {
  return Enqueue(comm, {.func = "AllGather", .count = count, .type = type}, stream);
}
FAKE_ALIAS(AllGather)

FAKE_EXPORT ncclResult_t pncclAlltoAll(const void*, void*, size_t count, ncclDataType_t type,
                                       ncclComm_t comm, cudaStream_t stream) {
  return Enqueue(comm, {.func = "AlltoAll", .count = count, .type = type}, stream);
}
FAKE_ALIAS(AlltoAll)

FAKE_EXPORT ncclResult_t pncclGather(const void*, void*, size_t count, ncclDataType_t type,
                                     int root, ncclComm_t comm, cudaStream_t stream) {
  return Enqueue(comm, {.func = "Gather", .count = count, .type = type, .root = root}, stream);
}
FAKE_ALIAS(Gather)

FAKE_EXPORT ncclResult_t pncclScatter(const void*, void*, size_t count, ncclDataType_t type,
                                      int root, ncclComm_t comm, cudaStream_t stream) {
  return Enqueue(comm, {.func = "Scatter", .count = count, .type = type, .root = root}, stream);
}
FAKE_ALIAS(Scatter)

FAKE_EXPORT ncclResult_t pncclSend(const void*, size_t count, ncclDataType_t type, int peer,
                                   ncclComm_t comm, cudaStream_t stream) {
  return Enqueue(comm, {.p2p = true, .func = "Send", .count = count, .type = type, .peer = peer},
                 stream);
}
FAKE_ALIAS(Send)

FAKE_EXPORT ncclResult_t pncclRecv(void*, size_t count, ncclDataType_t type, int peer,
                                   ncclComm_t comm, cudaStream_t stream) {
  return Enqueue(comm, {.p2p = true, .func = "Recv", .count = count, .type = type, .peer = peer},
                 stream);
}
FAKE_ALIAS(Recv)

FAKE_EXPORT ncclResult_t pncclGroupStart() {
  ++t_group_depth;
  return ncclSuccess;
}
FAKE_ALIAS(GroupStart)

FAKE_EXPORT ncclResult_t pncclGroupEnd() {
  if (t_group_depth <= 0) return ncclInvalidUsage;
  if (--t_group_depth == 0) FlushGroup();
  return ncclSuccess;
}
FAKE_ALIAS(GroupEnd)
