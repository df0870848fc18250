// Design: LD_PRELOAD wrappers of the public NCCL API (docs/capture-notes.md §7). The agent never
// NEEDs libnccl: each wrapper finds the real function lazily, once, in this order:
//   1. dlsym(RTLD_NEXT, "ncclX")          libnccl in the global scope (linked program);
//   2. dlsym(RTLD_DEFAULT, "pncclX")      every public ncclX is a weak alias of pncclX;
//   3. dlopen("libnccl.so.2", RTLD_NOLOAD) + dlsym("pncclX")   libnccl in a local dlopen group
//      (PyTorch loading libtorch_cuda RTLD_LOCAL, ctypes), where RTLD_NEXT finds nothing.
// Racing first calls resolve the same pointer; the cache is one atomic per function. A function
// that cannot be found returns ncclSystemError, with one warning per process.
//
// Each wrapper calls the real function and, when the nccl_wrappers channel is on, records:
//   communicator creation (InitRank, InitRankConfig, InitRankScalable, InitAll, Split, Shrink):
//     a Communicator record and an entry in the CommTable (comm id, rank, size, device from
//     ncclCommCuDevice, seq counters, how the plugin's init went), and its rank and size to
//     Agent::NoteCommunicator (the largest communicator names the trace's rank); Destroy/Abort
//     remove it (Finalize and Revoke change nothing the agent keeps: not wrapped);
//   collectives and send/recv: one Collective record, host start/end (CLOCK_MONOTONIC) of the
//     call, op, count, datatype, bytes, reduce op, root/peer, comm id, stream, per-communicator
//     and per-op seq number. Calls that return an error are counted, not recorded (the record
//     has no result field).
// Comm ids, equal on all ranks: the plugin's (NCCL's commHash) when the plugin's init ran inside
// our call (nccl_channel.h); else FNV-1a of the ncclUniqueId bytes (InitRank*; all nId ids for
// InitRankScalable), of the parent's id, color and split ordinal (Split), of the parent's id,
// the excluded ranks (any order) and the same ordinal (Shrink), or of pid and first handle
// (InitAll: one process). When the plugin's init did not run inside our call (grouped or
// non-blocking init) and the plugin channel is on, the record waits for the lazy link at the
// communicator's first call (nccl_channel.h) and then carries NCCL's id; a communicator that
// makes no call gets its record at destroy or at the close.
// One record per operation, per call: the wrapper publishes the call (t_nccl_call) around the
// real function; when the plugin saw it (its API event started inside the call) the plugin
// writes the record, else the wrapper does (nccl_channel.h). Both count seq numbers per
// communicator and NCCL function from 0 (the wrapper counts every successful call, also those
// the plugin records), so a record is identified by (comm_id, op, seq_number).
// Calls inside a group (ncclGroupStart/End) are timed as enqueue calls; NCCL launches them at
// ncclGroupEnd, which is passed through untimed.
// Hot path (STYLE.md 5): one relaxed load of the channel word, a thread-local reentrancy guard
// and call context, two vDSO clock reads, a lock-free table lookup and one ring push. Agent
// start-up happens at the first call; an exception there or while recording a communicator
// never reaches the caller (one warning; the channel goes off, or that record is skipped).
#include <dlfcn.h>
#include <nccl.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <string_view>

#include "agent/core/counted_loss.h"
#include "agent/core/no_destructor.h"
#include "agent/core/record.h"
#include "agent/nccl/comm_table.h"
#include "agent/nccl/nccl_channel.h"
#include "agent/runtime/agent_runtime.h"
#include "agent/runtime/record_source.h"
#include "base/logging.h"
#include "schema/nccl_names.h"

namespace lumos::agent {
namespace {

// clang-format reflows X-macro lists differently on every pass (as in schema/enums.h).
// clang-format off
#define LUMOS_NCCL_REAL_FUNCTIONS(X)                                                        \
  X(CommInitRank) X(CommInitRankConfig) X(CommInitRankScalable) X(CommInitAll) X(CommSplit)  \
  X(CommShrink) X(CommDestroy) X(CommAbort) X(AllReduce) X(Reduce) X(Broadcast) X(Bcast)    \
  X(ReduceScatter) X(AllGather) X(AlltoAll) X(Gather) X(Scatter) X(Send) X(Recv)             \
  X(GroupStart) X(GroupEnd) X(CommCuDevice) X(CommUserRank) X(CommCount)
// clang-format on

enum class RealFn : int {
#define LUMOS_NCCL_ENUM(name) k##name,
  LUMOS_NCCL_REAL_FUNCTIONS(LUMOS_NCCL_ENUM)
#undef LUMOS_NCCL_ENUM
      kCount
};

struct FnNames {
  const char* public_name;  // "ncclAllReduce"
  const char* alias_name;   // "pncclAllReduce"
};
constexpr FnNames kFnNames[] = {
#define LUMOS_NCCL_NAMES(name) {"nccl" #name, "pnccl" #name},
    LUMOS_NCCL_REAL_FUNCTIONS(LUMOS_NCCL_NAMES)
#undef LUMOS_NCCL_NAMES
};
static_assert(std::size(kFnNames) == static_cast<size_t>(RealFn::kCount));

std::atomic<void*> g_real[static_cast<int>(RealFn::kCount)];
std::atomic<bool> g_warned_unresolved{false};

void* ResolveSlow(RealFn fn) {
  const FnNames& names = kFnNames[static_cast<int>(fn)];
  void* real = dlsym(RTLD_NEXT, names.public_name);
  if (real == nullptr) real = dlsym(RTLD_DEFAULT, names.alias_name);
  if (real == nullptr) {
    if (void* library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD)) {
      real = dlsym(library, names.alias_name);
      dlclose(library);  // Drops only the reference NOLOAD took; the library stays loaded.
    }
  }
  if (real == nullptr) {
    if (!g_warned_unresolved.exchange(true)) {
      LUMOS_LOG(Warn,
                "nccl wrappers: %s not found in any loaded libnccl (RTLD_NEXT, %s, "
                "libnccl.so.2); NCCL calls return ncclSystemError",
                names.public_name, names.alias_name);
    }
    return nullptr;
  }
  // Relaxed: the pointer is the whole message (code, not data, lives behind it).
  g_real[static_cast<int>(fn)].store(real, std::memory_order_relaxed);
  return real;
}

template <typename Fn>
inline __attribute__((always_inline)) Fn Real(RealFn which) {
  void* real = g_real[static_cast<int>(which)].load(std::memory_order_relaxed);
  if (real == nullptr) real = ResolveSlow(which);
  return reinterpret_cast<Fn>(real);
}

// Reentrancy guard (STYLE.md 5.8): NCCL calling its own public API from inside a wrapped call
// is passed straight through.
thread_local int t_wrapper_depth = 0;
struct Reentry {
  Reentry() { ++t_wrapper_depth; }
  ~Reentry() { --t_wrapper_depth; }
  Reentry(const Reentry&) = delete;
  Reentry& operator=(const Reentry&) = delete;
};

CommTable& Comms() {
  static NoDestructor<CommTable> table;
  return *table;
}

// The channel's gate first: between capture windows a call costs that load, not the TLS read.
bool Recording() { return NcclChannelOn(schema::Channel::kNcclWrappers) && t_wrapper_depth == 0; }
// The capture window being recorded (0 in continuous mode), for seq numbers (comm_table.h).
uint64_t WindowStarts() {
  const control::WindowController* windows = Agent::Get().windows();
  return windows != nullptr ? windows->starts() : 0;
}
// Communicator creation and destruction: tracked between capture windows too.
bool Tracking() {
  return t_wrapper_depth == 0 && NcclChannelRunning(schema::Channel::kNcclWrappers);
}
bool Succeeded(ncclResult_t result) { return result == ncclSuccess || result == ncclInProgress; }

// ---- communicators ----

// Marks this thread as inside a communicator's real init, so the plugin hands us its comm id.
class CommInitScope {
 public:
  CommInitScope() : saved_(t_comm_init_capture) { t_comm_init_capture = {.active = true}; }
  ~CommInitScope() { t_comm_init_capture = saved_; }
  CommInitScope(const CommInitScope&) = delete;
  CommInitScope& operator=(const CommInitScope&) = delete;
  // The plugin's id when it saw this init, else `derived`.
  uint64_t CommId(uint64_t derived) const {
    return t_comm_init_capture.plugin_saw_init ? t_comm_init_capture.plugin_comm_id : derived;
  }
  PluginRoute Route() const { return t_comm_init_capture.route; }

 private:
  CommInitCapture saved_;
};

// A communicator name from a config, validated (a config from an older NCCL may be shorter).
std::string_view ConfigName(const ncclConfig_t* config) {
  if (config == nullptr || config->magic != 0xcafebeef ||
      config->size < offsetof(ncclConfig_t, commName) + sizeof(config->commName) ||
      config->commName == nullptr) {
    return {};
  }
  return std::string_view(config->commName, strnlen(config->commName, 256));
}

// Writes a communicator's pending record (lazy link): with the plugin's comm id when the plugin
// saw the call that links them, and none when the plugin wrote its own record. Unlinked while
// a v4 plugin covers the communicator: none either, the plugin writes its own (with NCCL's id)
// at finalize or the close.
void ResolvePendingRecord(CommEntry* entry, bool plugin_saw, uint64_t plugin_comm_id,
                          bool plugin_wrote_record) {
  // acq_rel: the entry's fields were written before the release store of the flag.
  if (!entry->record_pending.exchange(false, std::memory_order_acq_rel)) return;
  g_wrapper_records_pending.fetch_sub(1, std::memory_order_relaxed);
  if (plugin_saw) {
    entry->comm_id.store(plugin_comm_id, std::memory_order_relaxed);
    if (plugin_wrote_record) return;  // One record per communicator.
  } else if (PluginV4Covers(entry->plugin_route, entry->comm_size)) {
    return;
  }
  PushCommunicatorRecordNamed(entry->comm_id.load(std::memory_order_relaxed), entry->parent_comm_id,
                              entry->rank, entry->comm_size, entry->device_id, entry->name_id);
}

// At the close: the pending records of communicators that made no call and were not destroyed.
class PendingRecordSource : public RecordSource {
 public:
  void Drain(RecordSink& /*sink*/) override {}
  void FlushBeforeFinalDrain() override {
    Comms().ForEach([](CommEntry& entry) { ResolvePendingRecord(&entry, false, 0, false); });
  }
};

void RegisterPendingRecordSource() {
  static NoDestructor<PendingRecordSource> source;
  static std::once_flag once;
  std::call_once(once, [] {
    if (!Agent::Get().AddRecordSource(&source.get())) {
      LUMOS_LOG(Warn,
                "nccl wrappers: no record source left; a communicator that makes no call "
                "and is not destroyed may have no record");
    }
  });
}

void RegisterCommOrThrow(ncclComm_t comm, uint64_t comm_id, uint64_t parent_comm_id, int rank,
                         int nranks, int fallback_device, std::string_view name,
                         PluginRoute route) {
  int device = fallback_device;
  if (auto cu_device = Real<decltype(&pncclCommCuDevice)>(RealFn::kCommCuDevice)) {
    int value = -1;
    if (cu_device(comm, &value) == ncclSuccess && value >= 0) device = value;
  }
  if (rank < 0) {
    if (auto user_rank = Real<decltype(&pncclCommUserRank)>(RealFn::kCommUserRank)) {
      if (user_rank(comm, &rank) != ncclSuccess) rank = -1;
    }
  }
  if (nranks <= 0) {
    if (auto count = Real<decltype(&pncclCommCount)>(RealFn::kCommCount)) {
      if (count(comm, &nranks) != ncclSuccess) nranks = 0;
    }
  }
  const uint32_t size = nranks > 0 ? static_cast<uint32_t>(nranks) : 0;
  const uint32_t device_id = device >= 0 ? static_cast<uint32_t>(device) : 0;
  // The largest communicator gives the trace its rank (agent_runtime.h).
  Agent& agent = Agent::Get();
  agent.NoteCommunicator(rank, nranks);
  CommEntry* entry = Comms().Insert(comm, comm_id, rank, size, device_id, route);
  if (entry == nullptr) {
    CountLoss(CountedLoss::kNcclCommTable);
  } else if (route == PluginRoute::kUnknown &&
             agent.config().channels.Has(schema::Channel::kNcclPlugin)) {
    // The plugin's init did not run inside this call (grouped or non-blocking init): the
    // record waits for the lazy link at the first call (nccl_channel.h).
    entry->parent_comm_id = parent_comm_id;
    entry->name_id = InternCommName(name);
    RegisterPendingRecordSource();
    g_wrapper_records_pending.fetch_add(1, std::memory_order_relaxed);
    entry->record_pending.store(true, std::memory_order_release);
    return;
  }
  PushCommunicatorRecord(comm_id, parent_comm_id, rank, size, device_id, name);
}

// Called from extern "C" entry points: no exception may reach NCCL's caller.
void RegisterComm(ncclComm_t comm, uint64_t comm_id, uint64_t parent_comm_id, int rank, int nranks,
                  int fallback_device, std::string_view name, PluginRoute route) noexcept {
  try {
    RegisterCommOrThrow(comm, comm_id, parent_comm_id, rank, nranks, fallback_device, name, route);
  } catch (...) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      LUMOS_LOG(Warn, "nccl wrappers: recording a communicator failed with an exception");
    }
  }
}

// A communicator derived from `comm` (split, shrink): the parent's id and this derivation's
// ordinal, which agrees across ranks because every rank that stays derives in the same order.
struct Derivation {
  uint64_t parent_id = 0;
  uint32_t ordinal = 0;
};
Derivation NextDerivation(ncclComm_t comm) {
  CommEntry* parent = Comms().Find(comm);
  if (parent == nullptr) return {};
  // Relaxed: a counter; only its values matter.
  return {parent->comm_id.load(std::memory_order_relaxed),
          parent->splits.fetch_add(1, std::memory_order_relaxed)};
}

// Destroy/Abort: a record still pending is written (with the id it has), then the entry goes.
void ForgetComm(ncclComm_t comm) {
  if (CommEntry* entry = Comms().Find(comm)) ResolvePendingRecord(entry, false, 0, false);
  Comms().Remove(comm);
}

// ---- collectives ----

struct OpCall {
  schema::CollectiveOp op = schema::CollectiveOp::kUnspecified;
  size_t count = 0;
  ncclDataType_t data_type = ncclInt8;
  int red_op = -1;  // -1: not a reduction.
  int root = -1;
  int peer = -1;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

void RecordOp(const OpCall& call, int64_t start_ns, int64_t end_ns, ncclResult_t result) {
  CommEntry* entry = Comms().Find(call.comm);
  // A v4 plugin (no API events) records this communicator's operations itself (counted, as
  // in CallAndRecord).
  if (PluginV4Covers(entry != nullptr ? entry->plugin_route : PluginRoute::kUnknown,
                     entry != nullptr ? entry->comm_size : 0)) {
    if (entry != nullptr && Succeeded(result)) entry->NextSeq(call.op, WindowStarts());
    return;
  }
  if (!Succeeded(result)) {
    CountLoss(CountedLoss::kNcclFailedCalls);
    return;
  }
  const schema::DataType data_type = schema::DataTypeFromNccl(call.data_type);
  Record head{};
  head.kind = RecordKind::kCollective;
  head.flags = kRecordFlagHasHostTime;
  head.start_ns = start_ns;
  head.end_ns = end_ns;
  head.device_id = entry != nullptr ? static_cast<uint16_t>(entry->device_id) : 0;
  head.payload.collective = {
      .comm_id = entry != nullptr ? entry->comm_id.load(std::memory_order_relaxed) : 0,
      .seq_number = entry != nullptr ? entry->NextSeq(call.op, WindowStarts()) : 0,
      .count = call.count,
      .stream_id = reinterpret_cast<uint64_t>(call.stream),
      .op = static_cast<uint8_t>(call.op),
      .data_type = static_cast<uint8_t>(data_type),
      .reduce_op = static_cast<uint8_t>(schema::ReduceOpFromNccl(call.red_op)),
  };
  Record extension{};
  extension.kind = RecordKind::kExtension;
  extension.payload.collective_ext = {
      .bytes = call.count * schema::DataTypeBytes(data_type),
      .root_rank = call.root,
      .peer_rank = call.peer,
      .comm_size = entry != nullptr ? entry->comm_size : 0,
  };
  PushCollectiveRecord(&head, extension);
}

// Publishes the call to the plugin (t_nccl_call) while the real function runs.
class NcclCallScope {
 public:
  NcclCallScope(const OpCall& call, int64_t start_ns, bool record_pending) : saved_(t_nccl_call) {
    t_nccl_call = {.active = true,
                   .plugin_saw = false,
                   .reduce_op = static_cast<uint8_t>(schema::ReduceOpFromNccl(call.red_op)),
                   .stream = reinterpret_cast<uint64_t>(call.stream),
                   .start_ns = start_ns,
                   .wrapper_record_pending = record_pending};
  }
  ~NcclCallScope() { t_nccl_call = saved_; }
  NcclCallScope(const NcclCallScope&) = delete;
  NcclCallScope& operator=(const NcclCallScope&) = delete;
  bool PluginSaw() const { return t_nccl_call.plugin_saw; }
  const NcclCallContext& context() const { return t_nccl_call; }

 private:
  NcclCallContext saved_;
};

// The recording half of CallAndRecord, out of line: the pass-through half (the agent off, or
// dormant between capture windows) then needs no stack frame of its own.
template <typename Fn, typename... Args>
__attribute__((noinline)) ncclResult_t RecordedCall(Fn real, const OpCall& call, Args... args) {
  Reentry guard;
  const int64_t start_ns = MonotonicNowNs();
  // Relaxed: a hint; the entry's own flag decides (acquire).
  CommEntry* pending = nullptr;
  if (g_wrapper_records_pending.load(std::memory_order_relaxed) > 0) {
    CommEntry* entry = Comms().Find(call.comm);
    if (entry != nullptr && entry->record_pending.load(std::memory_order_acquire)) pending = entry;
  }
  NcclCallScope scope(call, start_ns, pending != nullptr);
  const ncclResult_t result = real(args...);
  const int64_t end_ns = MonotonicNowNs();
  // A v4 plugin sees only ungrouped calls (their Coll starts inside the call): after a grouped
  // one, the record keeps waiting for the next.
  const NcclCallContext& context = scope.context();
  if (pending != nullptr &&
      (context.plugin_saw || !PluginV4Covers(pending->plugin_route, pending->comm_size))) {
    ResolvePendingRecord(pending, context.plugin_saw, context.plugin_comm_id,
                         context.plugin_wrote_record);
  }
  if (!scope.PluginSaw()) {
    RecordOp(call, start_ns, end_ns, result);
  } else if (Succeeded(result)) {
    // The plugin records it with NCCL's seq number; ours still counts it, so a later call that
    // only the wrapper records (a plugin event lost) gets NCCL's number, not an earlier one's.
    if (CommEntry* entry = Comms().Find(call.comm)) entry->NextSeq(call.op, WindowStarts());
  }
  return result;
}

// Calls the real function `which` and records `call` unless the plugin saw it (one record per
// operation, decided per call: nccl_channel.h).
template <typename Fn, typename... Args>
inline ncclResult_t CallAndRecord(RealFn which, const OpCall& call, Args... args) {
  Fn real = Real<Fn>(which);
  if (real == nullptr) return ncclSystemError;
  if (!Recording()) return real(args...);
  return RecordedCall<Fn>(real, call, args...);
}

}  // namespace
}  // namespace lumos::agent

// ---- the exported wrappers (lumos_agent.map lists them) ----

namespace la = lumos::agent;
using la::RealFn;
using lumos::schema::CollectiveOp;

#define LUMOS_NCCL_EXPORT extern "C" __attribute__((visibility("default")))

LUMOS_NCCL_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id,
                                                int rank) {
  auto real = la::Real<decltype(&pncclCommInitRank)>(RealFn::kCommInitRank);
  if (real == nullptr) return ncclSystemError;
  if (!la::Tracking()) return real(comm, nranks, id, rank);
  la::Reentry guard;
  la::CommInitScope scope;
  const ncclResult_t result = real(comm, nranks, id, rank);
  if (la::Succeeded(result) && comm != nullptr && *comm != nullptr) {
    la::RegisterComm(*comm, scope.CommId(la::Fnv1a64(id.internal, sizeof(id.internal))), 0, rank,
                     nranks, -1, {}, scope.Route());
  }
  return result;
}

LUMOS_NCCL_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id,
                                                      int rank, ncclConfig_t* config) {
  auto real = la::Real<decltype(&pncclCommInitRankConfig)>(RealFn::kCommInitRankConfig);
  if (real == nullptr) return ncclSystemError;
  if (!la::Tracking()) return real(comm, nranks, id, rank, config);
  la::Reentry guard;
  la::CommInitScope scope;
  const ncclResult_t result = real(comm, nranks, id, rank, config);
  if (la::Succeeded(result) && comm != nullptr && *comm != nullptr) {
    la::RegisterComm(*comm, scope.CommId(la::Fnv1a64(id.internal, sizeof(id.internal))), 0, rank,
                     nranks, -1, la::ConfigName(config), scope.Route());
  }
  return result;
}

LUMOS_NCCL_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  auto real = la::Real<decltype(&pncclCommInitAll)>(RealFn::kCommInitAll);
  if (real == nullptr) return ncclSystemError;
  if (!la::Tracking()) return real(comms, ndev, devlist);
  la::Reentry guard;
  la::CommInitScope scope;
  const ncclResult_t result = real(comms, ndev, devlist);
  if (la::Succeeded(result) && comms != nullptr && ndev > 0) {
    // One process holds every rank: pid and the first handle name the communicator.
    const uint64_t key[2] = {static_cast<uint64_t>(getpid()), reinterpret_cast<uint64_t>(comms[0])};
    const uint64_t comm_id = scope.CommId(la::Fnv1a64(key, sizeof(key)));
    for (int i = 0; i < ndev; ++i) {
      if (comms[i] == nullptr) continue;
      la::RegisterComm(comms[i], comm_id, 0, i, ndev, devlist != nullptr ? devlist[i] : i, {},
                       scope.Route());
    }
  }
  return result;
}

LUMOS_NCCL_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                                             ncclComm_t* newcomm, ncclConfig_t* config) {
  auto real = la::Real<decltype(&pncclCommSplit)>(RealFn::kCommSplit);
  if (real == nullptr) return ncclSystemError;
  if (!la::Tracking()) return real(comm, color, key, newcomm, config);
  la::Reentry guard;
  const auto [parent_id, ordinal] = la::NextDerivation(comm);
  la::CommInitScope scope;
  const ncclResult_t result = real(comm, color, key, newcomm, config);
  if (la::Succeeded(result) && newcomm != nullptr && *newcomm != nullptr) {
    const uint64_t derivation[3] = {parent_id, static_cast<uint64_t>(static_cast<int64_t>(color)),
                                    ordinal};
    la::RegisterComm(*newcomm, scope.CommId(la::Fnv1a64(derivation, sizeof(derivation))), parent_id,
                     -1, 0, -1, la::ConfigName(config), scope.Route());
  }
  return result;
}

LUMOS_NCCL_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank,
                                                        int nId, ncclUniqueId* commIds,
                                                        ncclConfig_t* config) {
  auto real = la::Real<decltype(&pncclCommInitRankScalable)>(RealFn::kCommInitRankScalable);
  if (real == nullptr) return ncclSystemError;
  if (!la::Tracking()) return real(newcomm, nranks, myrank, nId, commIds, config);
  la::Reentry guard;
  la::CommInitScope scope;
  const ncclResult_t result = real(newcomm, nranks, myrank, nId, commIds, config);
  if (la::Succeeded(result) && newcomm != nullptr && *newcomm != nullptr) {
    // Every rank passes the same nId unique ids (PyTorch: one per TORCH_NCCL_RANKS_PER_ROOT
    // ranks): all of them name the communicator.
    uint64_t derived = la::Fnv1a64(&nId, sizeof(nId));
    if (commIds != nullptr && nId > 0) {
      derived = la::Fnv1a64(commIds, sizeof(ncclUniqueId) * static_cast<size_t>(nId), derived);
    }
    la::RegisterComm(*newcomm, scope.CommId(derived), 0, myrank, nranks, -1, la::ConfigName(config),
                     scope.Route());
  }
  return result;
}

LUMOS_NCCL_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList,
                                              int excludeRanksCount, ncclComm_t* newcomm,
                                              ncclConfig_t* config, int shrinkFlags) {
  auto real = la::Real<decltype(&pncclCommShrink)>(RealFn::kCommShrink);
  if (real == nullptr) return ncclSystemError;
  if (!la::Tracking()) {
    return real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  }
  la::Reentry guard;
  const auto [parent_id, ordinal] = la::NextDerivation(comm);
  la::CommInitScope scope;
  const ncclResult_t result =
      real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  if (la::Succeeded(result) && newcomm != nullptr && *newcomm != nullptr) {
    // The excluded ranks in any order (ranks may list them differently): a sum of their hashes.
    uint64_t excluded = 0;
    for (int i = 0; excludeRanksList != nullptr && i < excludeRanksCount; ++i) {
      excluded += la::Fnv1a64(&excludeRanksList[i], sizeof(int));
    }
    const uint64_t derivation[4] = {parent_id, excluded, static_cast<uint64_t>(excludeRanksCount),
                                    ordinal};
    la::RegisterComm(*newcomm, scope.CommId(la::Fnv1a64(derivation, sizeof(derivation))), parent_id,
                     -1, 0, -1, la::ConfigName(config), scope.Route());
  }
  return result;
}

LUMOS_NCCL_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  auto real = la::Real<decltype(&pncclCommDestroy)>(RealFn::kCommDestroy);
  if (real == nullptr) return ncclSystemError;
  // Removed first: once freed, NCCL may hand the same address to a new communicator.
  if (la::Tracking()) la::ForgetComm(comm);
  return real(comm);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  auto real = la::Real<decltype(&pncclCommAbort)>(RealFn::kCommAbort);
  if (real == nullptr) return ncclSystemError;
  if (la::Tracking()) la::ForgetComm(comm);
  return real(comm);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                             ncclDataType_t datatype, ncclRedOp_t op,
                                             ncclComm_t comm, cudaStream_t stream) {
  return la::CallAndRecord<decltype(&pncclAllReduce)>(RealFn::kAllReduce,
                                                      {.op = CollectiveOp::kAllReduce,
                                                       .count = count,
                                                       .data_type = datatype,
                                                       .red_op = op,
                                                       .comm = comm,
                                                       .stream = stream},
                                                      sendbuff, recvbuff, count, datatype, op, comm,
                                                      stream);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                          ncclDataType_t datatype, ncclRedOp_t op, int root,
                                          ncclComm_t comm, cudaStream_t stream) {
  return la::CallAndRecord<decltype(&pncclReduce)>(RealFn::kReduce,
                                                   {.op = CollectiveOp::kReduce,
                                                    .count = count,
                                                    .data_type = datatype,
                                                    .red_op = op,
                                                    .root = root,
                                                    .comm = comm,
                                                    .stream = stream},
                                                   sendbuff, recvbuff, count, datatype, op, root,
                                                   comm, stream);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                             ncclDataType_t datatype, int root, ncclComm_t comm,
                                             cudaStream_t stream) {
  return la::CallAndRecord<decltype(&pncclBroadcast)>(RealFn::kBroadcast,
                                                      {.op = CollectiveOp::kBroadcast,
                                                       .count = count,
                                                       .data_type = datatype,
                                                       .root = root,
                                                       .comm = comm,
                                                       .stream = stream},
                                                      sendbuff, recvbuff, count, datatype, root,
                                                      comm, stream);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype,
                                         int root, ncclComm_t comm, cudaStream_t stream) {
  return la::CallAndRecord<decltype(&pncclBcast)>(RealFn::kBcast,
                                                  {.op = CollectiveOp::kBroadcast,
                                                   .count = count,
                                                   .data_type = datatype,
                                                   .root = root,
                                                   .comm = comm,
                                                   .stream = stream},
                                                  buff, count, datatype, root, comm, stream);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff,
                                                 size_t recvcount, ncclDataType_t datatype,
                                                 ncclRedOp_t op, ncclComm_t comm,
                                                 cudaStream_t stream) {
  return la::CallAndRecord<decltype(&pncclReduceScatter)>(RealFn::kReduceScatter,
                                                          {.op = CollectiveOp::kReduceScatter,
                                                           .count = recvcount,
                                                           .data_type = datatype,
                                                           .red_op = op,
                                                           .comm = comm,
                                                           .stream = stream},
                                                          sendbuff, recvbuff, recvcount, datatype,
                                                          op, comm, stream);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                             ncclDataType_t datatype, ncclComm_t comm,
                                             cudaStream_t stream) {
  return la::CallAndRecord<decltype(&pncclAllGather)>(RealFn::kAllGather,
                                                      {.op = CollectiveOp::kAllGather,
                                                       .count = sendcount,
                                                       .data_type = datatype,
                                                       .comm = comm,
                                                       .stream = stream},
                                                      sendbuff, recvbuff, sendcount, datatype, comm,
                                                      stream);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                            ncclDataType_t datatype, ncclComm_t comm,
                                            cudaStream_t stream) {
  return la::CallAndRecord<decltype(&pncclAlltoAll)>(RealFn::kAlltoAll,
                                                     {.op = CollectiveOp::kAllToAll,
                                                      .count = count,
                                                      .data_type = datatype,
                                                      .comm = comm,
                                                      .stream = stream},
                                                     sendbuff, recvbuff, count, datatype, comm,
                                                     stream);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                          ncclDataType_t datatype, int root, ncclComm_t comm,
                                          cudaStream_t stream) {
  return la::CallAndRecord<decltype(&pncclGather)>(RealFn::kGather,
                                                   {.op = CollectiveOp::kGather,
                                                    .count = count,
                                                    .data_type = datatype,
                                                    .root = root,
                                                    .comm = comm,
                                                    .stream = stream},
                                                   sendbuff, recvbuff, count, datatype, root, comm,
                                                   stream);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                           ncclDataType_t datatype, int root, ncclComm_t comm,
                                           cudaStream_t stream) {
  return la::CallAndRecord<decltype(&pncclScatter)>(RealFn::kScatter,
                                                    {.op = CollectiveOp::kScatter,
                                                     .count = count,
                                                     .data_type = datatype,
                                                     .root = root,
                                                     .comm = comm,
                                                     .stream = stream},
                                                    sendbuff, recvbuff, count, datatype, root, comm,
                                                    stream);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                        int peer, ncclComm_t comm, cudaStream_t stream) {
  return la::CallAndRecord<decltype(&pncclSend)>(RealFn::kSend,
                                                 {.op = CollectiveOp::kSend,
                                                  .count = count,
                                                  .data_type = datatype,
                                                  .peer = peer,
                                                  .comm = comm,
                                                  .stream = stream},
                                                 sendbuff, count, datatype, peer, comm, stream);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype,
                                        int peer, ncclComm_t comm, cudaStream_t stream) {
  return la::CallAndRecord<decltype(&pncclRecv)>(RealFn::kRecv,
                                                 {.op = CollectiveOp::kRecv,
                                                  .count = count,
                                                  .data_type = datatype,
                                                  .peer = peer,
                                                  .comm = comm,
                                                  .stream = stream},
                                                 recvbuff, count, datatype, peer, comm, stream);
}

LUMOS_NCCL_EXPORT ncclResult_t ncclGroupStart() {
  auto real = la::Real<decltype(&pncclGroupStart)>(RealFn::kGroupStart);
  return real != nullptr ? real() : ncclSystemError;
}

LUMOS_NCCL_EXPORT ncclResult_t ncclGroupEnd() {
  auto real = la::Real<decltype(&pncclGroupEnd)>(RealFn::kGroupEnd);
  return real != nullptr ? real() : ncclSystemError;
}
