#include "bench/mix_builder.h"

#include <algorithm>
#include <cmath>

namespace lumos::bench::internal {

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

}  // namespace lumos::bench::internal
