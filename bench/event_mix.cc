#include "bench/event_mix.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <numeric>
#include <string>
#include <unordered_set>

#include "bench/kernel_names.h"

namespace lumos::bench {
namespace {

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

// xoshiro256** seeded by splitmix64, plus Box-Muller: the same numbers on every platform
// (std:: distributions are implementation-defined).
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& s : s_) {
      seed += 0x9E3779B97F4A7C15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      s = z ^ (z >> 31);
    }
  }
  uint64_t Next() {
    uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)
  size_t Below(size_t n) { return static_cast<size_t>(Uniform() * static_cast<double>(n)); }
  bool Chance(double p) { return Uniform() < p; }
  double Normal() {
    double u1 = std::max(Uniform(), 1e-300);
    double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // Log-normal with the given median and shape sigma.
  double LogNormal(double median, double sigma) { return median * std::exp(sigma * Normal()); }
  // Log-uniform in [lo, hi].
  double LogUniform(double lo, double hi) { return lo * std::exp(Uniform() * std::log(hi / lo)); }
  template <typename T, size_t N>
  T Pick(const T (&choices)[N]) {
    return choices[Below(N)];
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

int64_t Ns(double value) { return static_cast<int64_t>(std::llround(value)); }

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

Slot MixBuilder::MakeSlot(KernelClass cls, int role) {
  const std::vector<uint32_t>& names = by_class_[static_cast<size_t>(cls)];
  Slot s;
  s.name = names[rng_.Below(names.size())];
  s.role = role;
  uint32_t x1[] = {1024, 2048, 4096, 8192, 16384, 65535};
  uint32_t threads1[] = {128, 256, 512};
  switch (cls) {
    case KernelClass::kGemm: {
      bool sm90 = names_[s.name].name.rfind("void cutlass", 0) != 0;
      uint32_t gx[] = {8, 16, 24, 32, 48};
      uint32_t gy[] = {4, 8, 16, 32};
      s.grid = rng_.Chance(0.4) ? Dim3{132, 1, 1} : Dim3{rng_.Pick(gx), rng_.Pick(gy), 1};
      s.block = Dim3{sm90 ? 384u : 128u, 1, 1};
      s.registers = 168;
      uint32_t smem[] = {197632, 232448, 99328};
      s.dynamic_smem = rng_.Pick(smem);
      if (sm90) {
        s.cluster = Dim3{rng_.Chance(0.5) ? 2u : 1u, 1, 1};
        s.launch_type = schema::LaunchType::kCluster;
      }
      s.median_ns = rng_.LogUniform(40'000, 2'000'000);
      s.sigma = 0.05;
      break;
    }
    case KernelClass::kAttentionForward:
    case KernelClass::kAttentionBackward:
      s.grid = Dim3{32, 32, 2};
      s.block = Dim3{cls == KernelClass::kAttentionForward ? 128u : 256u, 1, 1};
      s.registers = 255;
      s.dynamic_smem = cls == KernelClass::kAttentionForward ? 98304 : 147456;
      s.median_ns = cls == KernelClass::kAttentionForward ? rng_.LogUniform(300'000, 900'000)
                                                          : rng_.LogUniform(150'000, 2'000'000);
      s.sigma = 0.05;
      break;
    case KernelClass::kReduction:
      s.grid = rng_.Chance(0.5) ? Dim3{264, 1, 1} : Dim3{1, 1024, 1};
      s.block = rng_.Chance(0.5) ? Dim3{32, 16, 1} : Dim3{512, 1, 1};
      s.registers = 40;
      s.dynamic_smem = 16;
      s.median_ns = rng_.LogUniform(5'000, 120'000);
      s.sigma = 0.15;
      break;
    case KernelClass::kNorm:
    case KernelClass::kSoftmaxLoss:
      s.grid = Dim3{8192, 1, 1};
      s.block = rng_.Chance(0.5) ? Dim3{256, 1, 1} : Dim3{32, 4, 1};
      s.registers = rng_.Chance(0.5) ? 32 : 64;
      s.dynamic_smem = rng_.Chance(0.5) ? 0 : 4096;
      s.median_ns = rng_.LogUniform(15'000, 400'000);
      s.sigma = 0.1;
      break;
    case KernelClass::kOptimizer:
      s.grid = Dim3{320, 1, 1};
      s.block = Dim3{512, 1, 1};
      s.registers = rng_.Chance(0.5) ? 48 : 80;
      s.static_smem = 2048;
      s.median_ns = rng_.LogUniform(30'000, 400'000);
      s.sigma = 0.1;
      break;
    case KernelClass::kNccl:
      s.grid = Dim3{32, 1, 1};
      s.block = Dim3{640, 1, 1};
      s.registers = 96;
      s.static_smem = 8;
      s.dynamic_smem = 0;
      s.median_ns = rng_.LogUniform(300'000, 2'000'000);
      s.sigma = 0.3;  // Waiting for peers.
      break;
    case KernelClass::kElementwise:
    case KernelClass::kTriton:
    case KernelClass::kMisc: {
      s.grid = Dim3{rng_.Pick(x1), 1, 1};
      s.block = Dim3{rng_.Pick(threads1), 1, 1};
      uint32_t regs[] = {16, 20, 24, 32, 40};
      s.registers = rng_.Pick(regs);
      s.median_ns = rng_.LogUniform(2'000, 80'000);
      s.sigma = 0.12;
      break;
    }
  }
  return s;
}

void MixBuilder::BuildPrograms() {
  using K = KernelClass;
  // Embedding lookup and input preparation.
  for (K k : {K::kMisc, K::kElementwise, K::kMisc, K::kElementwise, K::kTriton, K::kElementwise}) {
    pre_.push_back(MakeSlot(k));
  }
  // A decoder layer forward: norm, QKV GEMM, rotary, attention, out-proj, residual add |
  // norm, gate/up GEMM, SiLU*mul, down GEMM, residual add; plus a few fused/extra ops.
  for (K k : {K::kNorm, K::kGemm, K::kMisc, K::kAttentionForward, K::kGemm, K::kElementwise,
              K::kTriton, K::kElementwise, K::kNorm, K::kGemm, K::kElementwise, K::kElementwise,
              K::kTriton, K::kGemm, K::kElementwise, K::kElementwise}) {
    layer_fwd_.push_back(MakeSlot(k));
  }
  for (K k : {K::kGemm, K::kSoftmaxLoss, K::kSoftmaxLoss, K::kReduction, K::kElementwise,
              K::kSoftmaxLoss, K::kSoftmaxLoss, K::kElementwise, K::kGemm, K::kGemm}) {
    loss_.push_back(MakeSlot(k));
  }
  // A layer backward: two GEMMs (dgrad, wgrad) per forward GEMM, attention backward, norm
  // backward, elementwise backward ops and gradient accumulation.
  for (K k : {K::kElementwise,
              K::kGemm,
              K::kGemm,
              K::kElementwise,
              K::kElementwise,
              K::kTriton,
              K::kGemm,
              K::kGemm,
              K::kElementwise,
              K::kNorm,
              K::kNorm,
              K::kReduction,
              K::kElementwise,
              K::kElementwise,
              K::kGemm,
              K::kGemm,
              K::kAttentionBackward,
              K::kAttentionBackward,
              K::kAttentionBackward,
              K::kMisc,
              K::kElementwise,
              K::kGemm,
              K::kGemm,
              K::kElementwise,
              K::kNorm,
              K::kNorm,
              K::kReduction,
              K::kElementwise,
              K::kTriton,
              K::kElementwise,
              K::kElementwise,
              K::kElementwise}) {
    layer_bwd_.push_back(MakeSlot(k));
  }
  for (K k : {K::kOptimizer, K::kOptimizer, K::kOptimizer, K::kReduction, K::kElementwise,
              K::kOptimizer}) {
    grad_norm_.push_back(MakeSlot(k));
  }
  Slot adam = MakeSlot(K::kOptimizer);
  Slot scale = MakeSlot(K::kOptimizer);
  for (int i = 0; i < 24; ++i) adam_.push_back(i % 6 == 5 ? scale : adam);

  auto nccl = [&](std::string_view prefix) {
    Slot s = MakeSlot(K::kNccl);
    for (uint32_t i : by_class_[static_cast<size_t>(K::kNccl)]) {
      if (names_[i].name.find(prefix) != std::string::npos) {
        s.name = i;
        break;
      }
    }
    return s;
  };
  all_gather_ = nccl("AllGather_RING_SIMPLE");
  reduce_scatter_ = nccl("ReduceScatter_Sum_bf16_RING_SIMPLE");
  all_reduce_ = nccl("AllReduce_Sum_f32_TREE_LL");
}

ApiCallEvent& MixBuilder::Api(Thread& th, ApiKind kind, std::string_view name, uint32_t cbid,
                              uint64_t stream, double median_ns, ApiDomain domain) {
  HostGap(th);
  ApiCallEvent e;
  e.start_ns = th.t;
  e.duration_ns =
      static_cast<uint64_t>(std::max<int64_t>(600, Ns(rng_.LogNormal(median_ns, 0.35))));
  e.thread_id = th.tid;
  e.correlation_id = next_correlation_id_++;
  e.kind = kind;
  e.cbid = cbid;
  e.name = name;
  e.stream_id = stream;
  e.domain = domain;
  th.t += static_cast<int64_t>(e.duration_ns);
  Emit(th.source, th.t, e);
  return std::get<ApiCallEvent>(pending_.back().event);
}

void MixBuilder::Launch(Thread& th, const Slot& slot) {
  KernelClass cls = names_[slot.name].cls;
  std::string_view api = "cudaLaunchKernel";
  uint32_t cbid = kCbidLaunchKernel;
  ApiDomain domain = ApiDomain::kRuntime;
  if (cls == KernelClass::kTriton) {
    api = "cuLaunchKernel";
    cbid = kCbidCuLaunchKernel;
    domain = ApiDomain::kDriver;
  } else if (cls == KernelClass::kNccl) {
    api = "cuLaunchKernelEx";
    cbid = kCbidCuLaunchKernelEx;
    domain = ApiDomain::kDriver;
  } else if (slot.launch_type == schema::LaunchType::kCluster) {
    api = "cudaLaunchKernelExC";
    cbid = kCbidLaunchKernelExC;
  }
  ApiCallEvent launch = Api(th, ApiKind::kLaunchKernel, api, cbid, Stream(slot.role), 3200, domain);
  // The GPU sees the launch a little after the call submitted it, and runs it once the
  // stream is free.
  int64_t& free_ns = StreamFree(slot.role);
  int64_t submitted = launch.start_ns + Ns(0.6 * static_cast<double>(launch.duration_ns)) +
                      Ns(rng_.LogNormal(2500, 0.4));
  KernelEvent k;
  k.start_ns = std::max(submitted, free_ns + Ns(rng_.LogNormal(1100, 0.5)));
  k.duration_ns = static_cast<uint64_t>(
      std::clamp<int64_t>(Ns(rng_.LogNormal(slot.median_ns, slot.sigma)), 1500, 5'000'000));
  k.correlation_id = launch.correlation_id;
  k.stream_id = Stream(slot.role);
  k.name = names_[slot.name].name;
  k.device_id = kDeviceId;
  k.grid = slot.grid;
  k.block = slot.block;
  k.cluster = slot.cluster;
  k.registers_per_thread = slot.registers;
  k.static_shared_memory_bytes = slot.static_smem;
  k.dynamic_shared_memory_bytes = slot.dynamic_smem;
  k.context_id = kContextId;
  k.launch_type = slot.launch_type;
  free_ns = k.start_ns + static_cast<int64_t>(k.duration_ns);
  Emit(kCuptiActivity, free_ns, k);
}

void MixBuilder::RunProgram(Thread& th, const std::vector<Slot>& program, size_t begin,
                            size_t end) {
  for (size_t i = begin; i < end; ++i) {
    Launch(th, program[i]);
    // Irregular extra ops (copies, fills, casts, ...): any kernel of the pool.
    if (rng_.Chance(0.06)) {
      Slot extra = MakeSlot(names_[rng_.Below(names_.size())].cls);
      extra.name = static_cast<uint32_t>(rng_.Below(names_.size()));
      if (names_[extra.name].cls == KernelClass::kNccl) continue;
      if (extra.median_ns > 200'000) extra.median_ns /= 10;
      Launch(th, extra);
    }
  }
}

void MixBuilder::RecordWait(Thread& th, int from_role, int to_role) {
  uint64_t event_id = 1 + next_event_++ % 40;  // PyTorch reuses cached CUDA events.
  ApiCallEvent& recorded =
      Api(th, ApiKind::kEventRecord, "cudaEventRecord", kCbidEventRecord, Stream(from_role), 1800);
  recorded.event_id = event_id;
  const ApiCallEvent record = recorded;  // Copy: the next Emit() may move it.
  CudaEventRecordEvent r;
  int64_t& from_free = StreamFree(from_role);
  r.start_ns = std::max(from_free, static_cast<int64_t>(record.start_ns + record.duration_ns) +
                                       Ns(rng_.LogNormal(2000, 0.4)));
  from_free = r.start_ns;
  r.correlation_id = record.correlation_id;
  r.event_id = event_id;
  r.stream_id = Stream(from_role);
  r.cuda_event_sync_id = next_event_sync_id_++;
  r.device_id = kDeviceId;
  r.context_id = kContextId;
  r.has_device_timestamp = true;
  Emit(kCuptiActivity, r.start_ns, r);

  ApiCallEvent& wait = Api(th, ApiKind::kStreamWaitEvent, "cudaStreamWaitEvent",
                           kCbidStreamWaitEvent, Stream(to_role), 1500);
  wait.event_id = event_id;
  SyncEvent s;
  s.start_ns = wait.start_ns;
  s.duration_ns = wait.duration_ns;
  s.sync_type = schema::SyncType::kStreamWaitEvent;
  s.correlation_id = wait.correlation_id;
  s.stream_id = Stream(to_role);
  s.event_id = event_id;
  s.cuda_event_sync_id = r.cuda_event_sync_id;
  s.context_id = kContextId;
  Emit(kCuptiActivity, s.start_ns + static_cast<int64_t>(s.duration_ns), s);
  int64_t& to_free = StreamFree(to_role);
  to_free = std::max(to_free, r.start_ns);
}

void MixBuilder::Collective(Thread& th, schema::CollectiveOp op, int role, uint64_t count,
                            schema::DataType type, double median_ns) {
  const Slot& kernel = op == schema::CollectiveOp::kAllGather       ? all_gather_
                       : op == schema::CollectiveOp::kReduceScatter ? reduce_scatter_
                                                                    : all_reduce_;
  HostGap(th);
  int64_t host_start = th.t;
  th.t += Ns(rng_.LogNormal(4000, 0.3));  // NCCL enqueue work before the launch.
  Slot slot = kernel;
  slot.role = role;
  slot.median_ns = median_ns;
  Launch(th, slot);
  const KernelEvent k = std::get<KernelEvent>(pending_.back().event);
  th.t += Ns(rng_.LogNormal(2500, 0.3));
  CollectiveEvent c;
  c.start_ns = host_start;
  c.duration_ns = static_cast<uint64_t>(th.t - host_start);
  c.comm_id = comm_id_;
  c.seq_number = seq_++;
  c.op = op;
  c.count = count;
  c.data_type = type;
  c.bytes = count * (type == schema::DataType::kFloat32 ? 4 : 2);
  if (op == schema::CollectiveOp::kAllReduce || op == schema::CollectiveOp::kReduceScatter) {
    c.reduce_op = schema::ReduceOp::kSum;
  }
  c.stream_id = k.stream_id;
  c.gpu_start_offset_ns = k.start_ns - host_start;
  c.gpu_duration_ns = k.duration_ns;
  c.algorithm = op == schema::CollectiveOp::kAllReduce ? schema::NcclAlgorithm::kTree
                                                       : schema::NcclAlgorithm::kRing;
  c.protocol = op == schema::CollectiveOp::kAllReduce ? schema::NcclProtocol::kLl
                                                      : schema::NcclProtocol::kSimple;
  c.channels = op == schema::CollectiveOp::kAllReduce ? 2 : 32;
  c.device_id = kDeviceId;
  c.correlation_id = k.correlation_id;
  c.thread_id = th.tid;
  c.comm_size = 8;
  c.has_host_time = true;
  Emit(kNcclPlugin, k.start_ns + static_cast<int64_t>(k.duration_ns), c);
}

// A blocking sync call lasts until `done` (when the GPU reaches the point) if that is later
// than its own duration; returns the matching SyncEvent for the caller to complete.
SyncEvent MixBuilder::BlockUntil(Thread& th, ApiCallEvent& call, int64_t done,
                                 schema::SyncType type) {
  if (done > call.start_ns + static_cast<int64_t>(call.duration_ns)) {
    call.duration_ns = static_cast<uint64_t>(done - call.start_ns);
    th.t = done;
    pending_.back().ready_ns = done;
  }
  SyncEvent s;
  s.start_ns = call.start_ns;
  s.duration_ns = call.duration_ns;
  s.sync_type = type;
  s.correlation_id = call.correlation_id;
  s.context_id = kContextId;
  return s;
}

void MixBuilder::StreamSync(Thread& th, int role) {
  ApiCallEvent& call = Api(th, ApiKind::kStreamSynchronize, "cudaStreamSynchronize",
                           kCbidStreamSynchronize, Stream(role), 1500);
  // The host blocks until the stream drains.
  SyncEvent s = BlockUntil(th, call, StreamFree(role) + Ns(rng_.LogNormal(3000, 0.4)),
                           schema::SyncType::kStreamSynchronize);
  s.stream_id = Stream(role);
  Emit(kCuptiActivity, th.t, s);
}

void MixBuilder::EventSync(Thread& th, int role) {
  uint64_t event_id = 1 + next_event_++ % 40;
  ApiCallEvent& recorded =
      Api(th, ApiKind::kEventRecord, "cudaEventRecord", kCbidEventRecord, Stream(role), 1800);
  recorded.event_id = event_id;
  const ApiCallEvent record = recorded;  // Copy: the next Emit() may move it.
  CudaEventRecordEvent r;
  r.start_ns =
      std::max(StreamFree(role), static_cast<int64_t>(record.start_ns + record.duration_ns) +
                                     Ns(rng_.LogNormal(2000, 0.4)));
  r.correlation_id = record.correlation_id;
  r.event_id = event_id;
  r.stream_id = Stream(role);
  r.cuda_event_sync_id = next_event_sync_id_++;
  r.device_id = kDeviceId;
  r.context_id = kContextId;
  r.has_device_timestamp = true;
  Emit(kCuptiActivity, r.start_ns, r);

  ApiCallEvent& call =
      Api(th, ApiKind::kEventSynchronize, "cudaEventSynchronize", kCbidEventSynchronize, 0, 1500);
  call.event_id = event_id;
  SyncEvent s = BlockUntil(th, call, r.start_ns + Ns(rng_.LogNormal(3000, 0.4)),
                           schema::SyncType::kEventSynchronize);
  s.event_id = event_id;
  s.cuda_event_sync_id = r.cuda_event_sync_id;
  Emit(kCuptiActivity, th.t, s);
}

void MixBuilder::Memcpy(Thread& th, int role, schema::CopyKind kind, uint64_t bytes) {
  ApiCallEvent call =
      Api(th, ApiKind::kMemcpyAsync, "cudaMemcpyAsync", kCbidMemcpyAsync, Stream(role), 2500);
  MemcpyEvent m;
  int64_t& free_ns = StreamFree(role);
  m.start_ns = std::max(call.start_ns + Ns(rng_.LogNormal(2500, 0.4)),
                        free_ns + Ns(rng_.LogNormal(1100, 0.5)));
  // ~22 GB/s over PCIe for pinned host memory, plus a fixed cost.
  m.duration_ns =
      static_cast<uint64_t>(Ns(rng_.LogNormal(1500 + static_cast<double>(bytes) / 22.0, 0.1)));
  m.correlation_id = call.correlation_id;
  m.stream_id = Stream(role);
  m.bytes = bytes;
  m.copy_kind = kind;
  m.device_id = kDeviceId;
  bool to_device = kind == schema::CopyKind::kHtod;
  m.src_kind = to_device ? schema::MemoryKind::kPinned : schema::MemoryKind::kDevice;
  m.dst_kind = to_device ? schema::MemoryKind::kDevice : schema::MemoryKind::kPageable;
  m.context_id = kContextId;
  free_ns = m.start_ns + static_cast<int64_t>(m.duration_ns);
  Emit(kCuptiActivity, free_ns, m);
}

void MixBuilder::Step() {
  using schema::CollectiveOp;
  using schema::DataType;
  Thread& a = threads_[0];
  Thread& b = threads_[options_.host_threads > 1 ? 1 : 0];
  // Per-rank shard of one layer's BF16 parameters (hidden 4096, FFN 14336: ~243M params).
  constexpr uint64_t kShardElements = 30'408'704;
  const int layers = options_.layers;

  Push(a, "train_step");
  Memcpy(a, kCopy, schema::CopyKind::kHtod, uint64_t{8} * 4096 * 8);  // A batch of token ids.
  RecordWait(a, kCopy, kCompute);
  Push(a, "forward");
  RunProgram(a, pre_, 0, pre_.size());
  size_t half = layer_fwd_.size() / 2;
  for (int i = 0; i < layers; ++i) {
    Push(a, *layer_names_[static_cast<size_t>(i)]);
    RecordWait(a, kCompute, kAllGather);
    Collective(a, CollectiveOp::kAllGather, kAllGather, kShardElements, DataType::kBfloat16,
               1'200'000);
    RecordWait(a, kAllGather, kCompute);
    Push(a, "self_attention");
    RunProgram(a, layer_fwd_, 0, half);
    Pop(a);
    Push(a, "mlp");
    RunProgram(a, layer_fwd_, half, layer_fwd_.size());
    Pop(a);
    Pop(a);
  }
  RunProgram(a, loss_, 0, loss_.size());
  Pop(a);

  // loss.backward(): the autograd thread runs while the main thread blocks.
  b.t = std::max(b.t, a.t) + Ns(rng_.LogNormal(20'000, 0.3));
  Push(b, "backward");
  for (int i = layers - 1; i >= 0; --i) {
    Push(b, *layer_names_[static_cast<size_t>(i)]);
    RecordWait(b, kCompute, kAllGather);
    Collective(b, CollectiveOp::kAllGather, kAllGather, kShardElements, DataType::kBfloat16,
               1'200'000);
    RecordWait(b, kAllGather, kCompute);
    RunProgram(b, layer_bwd_, 0, layer_bwd_.size());
    RecordWait(b, kCompute, kReduceScatter);
    Collective(b, CollectiveOp::kReduceScatter, kReduceScatter, kShardElements, DataType::kBfloat16,
               1'300'000);
    Pop(b);
  }
  RecordWait(b, kReduceScatter, kCompute);
  Pop(b);
  a.t = std::max(a.t, b.t) + Ns(rng_.LogNormal(15'000, 0.3));

  Push(a, "optimizer");
  RunProgram(a, grad_norm_, 0, grad_norm_.size());
  RecordWait(a, kCompute, kAllGather);
  Collective(a, CollectiveOp::kAllReduce, kAllGather, 1, DataType::kFloat32, 25'000);
  RecordWait(a, kAllGather, kCompute);
  Memcpy(a, kCompute, schema::CopyKind::kDtoh, 4);  // grad_norm.item()
  StreamSync(a, kCompute);
  RunProgram(a, adam_, 0, adam_.size());
  Pop(a);
  EventSync(a, kCompute);                           // Step timer.
  Memcpy(a, kCompute, schema::CopyKind::kDtoh, 4);  // loss.item()
  StreamSync(a, kCompute);
  Pop(a);
  if (&b != &a) b.t = std::max(b.t, a.t);
}

}  // namespace

std::string_view MixKindName(size_t kind) {
  static constexpr std::string_view kNames[kMixKinds] = {
      "kernel", "api_call", "memcpy", "sync", "cuda_event", "collective", "nvtx"};
  return kind < kMixKinds ? kNames[kind] : "?";
}

int64_t StartNs(const MixEvent& event) {
  return std::visit([](const auto& e) { return e.start_ns; }, event);
}

EventMix GenerateEventMix(const MixOptions& options, size_t min_events) {
  EventMix mix;
  MixBuilder builder(options);
  while (builder.pending().size() < min_events) {
    builder.Step();
    ++mix.steps;
  }
  std::vector<Pending>& pending = builder.pending();
  std::vector<uint32_t> order(pending.size());
  std::iota(order.begin(), order.end(), 0u);
  if (options.order == MixOrder::kTimeSorted) {
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      return StartNs(pending[x].event) < StartNs(pending[y].event);
    });
  } else {
    const int64_t interval = static_cast<int64_t>(std::max<uint64_t>(options.drain_interval_ns, 1));
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      const Pending& p = pending[x];
      const Pending& q = pending[y];
      int64_t bp = p.ready_ns / interval, bq = q.ready_ns / interval;
      if (bp != bq) return bp < bq;
      if (p.source != q.source) return p.source < q.source;
      return p.ready_ns < q.ready_ns;
    });
  }
  mix.events.reserve(pending.size());
  std::unordered_set<const char*> names;
  for (uint32_t i : order) {
    const MixEvent& e = pending[i].event;
    ++mix.count_per_kind[e.index()];
    if (const auto* k = std::get_if<KernelEvent>(&e)) names.insert(k->name.data());
    mix.events.push_back(e);
  }
  mix.distinct_kernel_names = names.size();
  mix.owned_strings = builder.TakeStrings();

  schema::HeaderInfo& h = mix.header;
  h.agent_version = "0.1.0";
  h.producer = schema::Producer::kSynthetic;
  h.host_name = "bench-node-17";
  h.pid = 48213;
  h.job_id = "lumos-bench";
  h.has_rank = h.has_local_rank = h.has_world_size = true;
  h.rank = 3;
  h.local_rank = 3;
  h.world_size = 8;
  schema::DeviceInfo d;
  d.device_id = kDeviceId;
  d.name = "NVIDIA H200";
  d.sm_count = 132;
  d.sm_clock_khz = 1980000;
  d.memory_clock_khz = 3201000;
  d.memory_bytes = 150'754'820'096;
  d.pci_bus_id = "0000:5D:00.0";
  d.compute_major = 9;
  d.uuid = "GPU-5a8f1c2e-7d3b-4e9a-b1f0-2c6d8e4a9b71";
  d.memory_bus_width_bits = 6144;
  h.devices.push_back(d);
  h.cuda_runtime_version = 13000;
  h.cuda_driver_version = 13000;
  h.cupti_version = 26;
  h.nccl_version = "2.28.3";
  h.clock_domains.push_back({schema::ClockId::kCupti, "cupti", 1});
  h.default_clock_id = schema::ClockId::kCupti;
  h.start_time_ns = static_cast<uint64_t>(kStartOfTimeNs);
  h.command_line = "python pretrain.py --layers 24 --fsdp";
  return mix;
}

}  // namespace lumos::bench
