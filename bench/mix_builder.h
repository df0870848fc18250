// Design: how the event mix (event_mix.h) is made, one training step at a time: MixBuilder runs
// the step's programs (kernels per phase, the same every step, as in real training) on 1-2 host
// threads and 3-4 streams through a small timing model (log-normal durations and gaps at ns
// resolution, host API calls, launches that wait for their stream, event record/wait pairs
// around the collectives, host syncs, memcpys, NVTX ranges), and emits each event with the
// source whose ring or buffer it reaches and when (Pending); GenerateEventMix orders them.
// mix_builder.cc: the programs (MakeSlot, BuildPrograms) and the step. Internal to event_mix.cc;
// single-threaded.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/event_mix.h"
#include "bench/kernel_names.h"
#include "bench/mix_rng.h"
#include "schema/writer/trace_events.h"

namespace lumos::bench::internal {

using schema::ApiCallEvent;
using schema::ApiDomain;
using schema::ApiKind;
using schema::CollectiveEvent;
using schema::CudaEventRecordEvent;
using schema::Dim3;
using schema::KernelEvent;
using schema::MemcpyEvent;
using schema::NvtxEvent;
using schema::SyncEvent;

constexpr uint32_t kDeviceId = 3;  // Local rank 3 of 8 on one H200 node.
constexpr uint32_t kContextId = 1;
constexpr int64_t kStartOfTimeNs = 1'760'000'000'123'456'789;  // CUPTI clock ~ realtime.

// Plausible CUPTI callback ids of the calls the mix makes. Only their size and repetition
// matter for the benchmarks.
constexpr uint32_t kCbidLaunchKernel = 211;
constexpr uint32_t kCbidLaunchKernelExC = 430;
constexpr uint32_t kCbidCuLaunchKernel = 307;
constexpr uint32_t kCbidCuLaunchKernelEx = 652;
constexpr uint32_t kCbidEventRecord = 135;
constexpr uint32_t kCbidStreamWaitEvent = 147;
constexpr uint32_t kCbidStreamSynchronize = 131;
constexpr uint32_t kCbidEventSynchronize = 137;
constexpr uint32_t kCbidMemcpyAsync = 41;

// Sources of records as the agent's writer thread drains them.
enum Source : int { kThreadRing0 = 0, kThreadRing1 = 1, kCuptiActivity = 2, kNcclPlugin = 3 };

// Stream roles; with 3 streams the reduce-scatter stream is the all-gather one.
enum Role : int { kCompute = 0, kAllGather = 1, kCopy = 2, kReduceScatter = 3 };
constexpr uint64_t kStreamIds[] = {7, 13, 17, 21};

inline int64_t Ns(double value) { return static_cast<int64_t>(std::llround(value)); }

// One kernel of a step program: what is launched, how, and its typical duration.
struct Slot {
  uint32_t name = 0;  // Index into KernelNameTable().
  Dim3 grid, block, cluster;
  uint32_t registers = 0, static_smem = 0, dynamic_smem = 0;
  schema::LaunchType launch_type = schema::LaunchType::kRegular;
  double median_ns = 0;
  double sigma = 0;
  int role = kCompute;
};

struct Pending {
  int source;
  int64_t ready_ns;  // When the record reaches its ring/buffer (its end).
  MixEvent event;
};

class MixBuilder {
 public:
  explicit MixBuilder(const MixOptions& options)
      : options_(options), rng_(options.seed), names_(KernelNameTable()) {
    for (uint32_t i = 0; i < names_.size(); ++i) {
      by_class_[static_cast<size_t>(names_[i].cls)].push_back(i);
    }
    threads_[0] = Thread{48213, kStartOfTimeNs, kThreadRing0, {}};
    threads_[1] = Thread{48257, kStartOfTimeNs, kThreadRing1, {}};
    for (int64_t& t : stream_free_ns_) t = kStartOfTimeNs;
    comm_id_ = rng_.Next();
    BuildPrograms();
    for (int i = 0; i < options_.layers; ++i) {
      layer_names_.push_back(&Own("decoder.layers." + std::to_string(i)));
    }
  }

  void Step();
  std::vector<Pending>& pending() { return pending_; }
  std::shared_ptr<const std::deque<std::string>> TakeStrings() { return std::move(strings_); }

 private:
  struct Thread {
    uint32_t tid;
    int64_t t;  // Host time: the thread is busy until here.
    int source;
    std::vector<std::pair<std::string_view, int64_t>> nvtx_stack;
  };

  const std::string& Own(std::string s) {
    strings_->push_back(std::move(s));
    return strings_->back();
  }
  uint64_t Stream(int role) const {
    if (role == kReduceScatter && options_.streams < 4) role = kAllGather;
    return kStreamIds[role];
  }
  int64_t& StreamFree(int role) {
    if (role == kReduceScatter && options_.streams < 4) role = kAllGather;
    return stream_free_ns_[role];
  }
  void Emit(int source, int64_t ready_ns, const MixEvent& event) {
    pending_.push_back(Pending{source, ready_ns, event});
  }

  Slot MakeSlot(KernelClass cls, int role = kCompute);
  void BuildPrograms();
  void RunProgram(Thread& th, const std::vector<Slot>& program, size_t begin, size_t end);

  // Host work between two calls: framework/Python overhead, now and then a long stall.
  void HostGap(Thread& th) {
    double gap = rng_.LogNormal(5500, 0.7);
    if (rng_.Chance(0.015)) gap += rng_.LogUniform(30'000, 600'000);
    th.t += std::max<int64_t>(250, Ns(gap));
  }
  ApiCallEvent& Api(Thread& th, ApiKind kind, std::string_view name, uint32_t cbid, uint64_t stream,
                    double median_ns, ApiDomain domain = ApiDomain::kRuntime);
  void Launch(Thread& th, const Slot& slot);
  void RecordWait(Thread& th, int from_role, int to_role);
  void Collective(Thread& th, schema::CollectiveOp op, int role, uint64_t count,
                  schema::DataType type, double median_ns);
  SyncEvent BlockUntil(Thread& th, ApiCallEvent& call, int64_t done, schema::SyncType type);
  void StreamSync(Thread& th, int role);
  void EventSync(Thread& th, int role);
  void Memcpy(Thread& th, int role, schema::CopyKind kind, uint64_t bytes);
  void Push(Thread& th, std::string_view name) {
    th.t += Ns(rng_.LogNormal(350, 0.3));
    th.nvtx_stack.emplace_back(name, th.t);
  }
  void Pop(Thread& th) {
    th.t += Ns(rng_.LogNormal(300, 0.3));
    auto [name, start] = th.nvtx_stack.back();
    th.nvtx_stack.pop_back();
    NvtxEvent e;
    e.start_ns = start;
    e.duration_ns = static_cast<uint64_t>(th.t - start);
    e.thread_id = th.tid;
    e.name = name;
    e.kind = schema::NvtxKind::kPushPop;
    e.depth = static_cast<uint32_t>(th.nvtx_stack.size());
    Emit(th.source, th.t, e);
  }

  const MixOptions& options_;
  Rng rng_;
  const std::vector<KernelName>& names_;
  std::vector<uint32_t> by_class_[static_cast<size_t>(KernelClass::kMisc) + 1];
  std::unique_ptr<std::deque<std::string>> strings_ = std::make_unique<std::deque<std::string>>();
  std::vector<const std::string*> layer_names_;
  std::vector<Pending> pending_;
  Thread threads_[2];
  int64_t stream_free_ns_[4];
  uint64_t next_correlation_id_ = 1;
  uint64_t next_event_ = 0;
  uint64_t next_event_sync_id_ = 1;
  uint64_t comm_id_ = 0;
  uint64_t seq_ = 0;
  // Step programs: kernels per phase, the same every step (as in real training).
  std::vector<Slot> pre_, layer_fwd_, loss_, layer_bwd_, grad_norm_, adam_;
  Slot all_gather_, reduce_scatter_, all_reduce_;
};

}  // namespace lumos::bench::internal
