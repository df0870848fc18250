#include "modeler/synth/gpt_timeline.h"

#include <algorithm>
#include <cmath>

#include "modeler/trace/gemm_orientation.h"

namespace lumos::modeler {
namespace {

using schema::ApiKind;

// CUPTI's stream ids of the three streams, and the cudaStream_t handles the API calls carry.
constexpr uint64_t kStreamIds[kGptStreams] = {7, 13, 14};
constexpr uint64_t kStreamHandles[kGptStreams] = {0x55d0c3a41e90, 0x55d0c3b52f10, 0x55d0c3c63f90};
// CUPTI runtime / driver callback ids (CUDA 12/13).
constexpr uint32_t kCbidLaunchKernel = 211;
constexpr uint32_t kCbidMemsetAsync = 51;
constexpr uint32_t kCbidEventRecord = 135;
constexpr uint32_t kCbidStreamWaitEvent = 147;
constexpr uint32_t kCbidStreamSynchronize = 131;
constexpr uint32_t kCbidLaunchKernelEx = 652;

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double UnitOf(uint64_t bits) {
  return static_cast<double>(bits >> 11) / static_cast<double>(uint64_t{1} << 53);
}

// exp(sigma z), z standard normal (Box-Muller) from two uniforms, clamped to 4 sigma.
double Lognormal(double u1, double u2, double sigma) {
  const double z = std::sqrt(-2.0 * std::log(std::max(u1, 1e-300))) * std::cos(2 * M_PI * u2);
  return std::exp(sigma * std::clamp(z, -4.0, 4.0));
}

constexpr double kSigma = 0.03;

const char* AlgorithmWord(schema::NcclAlgorithm a) {
  switch (a) {
    case schema::NcclAlgorithm::kTree:
      return "TREE";
    case schema::NcclAlgorithm::kNvls:
      return "NVLS";
    case schema::NcclAlgorithm::kNvlsTree:
      return "NVLSTREE";
    case schema::NcclAlgorithm::kCollnetDirect:
      return "COLLNET_DIRECT";
    case schema::NcclAlgorithm::kCollnetChain:
      return "COLLNET_CHAIN";
    case schema::NcclAlgorithm::kPat:
      return "PAT";
    default:
      return "RING";
  }
}

const char* ProtocolWord(schema::NcclProtocol p) {
  switch (p) {
    case schema::NcclProtocol::kLl:
      return "LL";
    case schema::NcclProtocol::kLl128:
      return "LL128";
    default:
      return "SIMPLE";
  }
}

}  // namespace

GptTimeline::GptTimeline(const GptConfig& config)
    : config_(config),
      ranks_(static_cast<size_t>(config.world())),
      events_(static_cast<size_t>(config.world())) {}

uint32_t GptTimeline::thread_id(int32_t rank, bool backward) const {
  const uint32_t pid = 4200 + static_cast<uint32_t>(rank);
  return backward ? pid + 37 : pid;
}

uint64_t GptTimeline::CommId(GptGroup group, int32_t rank) const {
  const uint64_t index = group == GptGroup::kTensorParallel
                             ? static_cast<uint64_t>(rank / config_.tp)
                             : static_cast<uint64_t>(rank % config_.tp);
  return Mix((group == GptGroup::kTensorParallel ? 0x7470000000ull : 0x6470000000ull) ^ index) | 1;
}

std::string_view GptTimeline::Intern(std::string text) {
  return *names_.insert(std::move(text)).first;
}

double GptTimeline::Uniform(int32_t r) {
  Rank& rank = ranks_[static_cast<size_t>(r)];
  return UnitOf(Mix(config_.seed ^ Mix((static_cast<uint64_t>(r) << 40) ^ rank.draws++)));
}

double GptTimeline::Jitter(int32_t r) { return Lognormal(Uniform(r), Uniform(r), kSigma); }

double GptTimeline::Slowdown(int32_t r, std::string_view name) {
  auto [it, added] = kernel_factor_.try_emplace(name.data(), 1.0);
  if (added) {
    for (const GptConfig::KernelScale& scale : config_.kernel_scales) {
      if (scale.regex.Search(name)) it->second *= scale.factor;
    }
  }
  return it->second * (r == config_.slow_rank ? config_.slow_rank_factor : 1.0);
}

// A host time in [min_ns, max_ns].
int64_t GptTimeline::HostCall(int32_t r, int64_t min_ns, int64_t max_ns) {
  return min_ns + static_cast<int64_t>(Uniform(r) * static_cast<double>(max_ns - min_ns));
}

void GptTimeline::UseBackwardThread(bool backward) {
  for (int32_t r = 0; r < config_.world(); ++r) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    if (rank.backward == backward) continue;
    // The autograd engine's thread wakes up for loss.backward(); the main thread resumes after.
    rank.host_ns += backward ? HostCall(r, 8'000, 15'000) : HostCall(r, 5'000, 10'000);
    rank.backward = backward;
  }
}

void GptTimeline::HostGap(int64_t min_ns, int64_t max_ns) {
  for (int32_t r = 0; r < config_.world(); ++r) {
    ranks_[static_cast<size_t>(r)].host_ns += HostCall(r, min_ns, max_ns);
  }
}

schema::ApiCallEvent GptTimeline::Launch(int32_t r, std::string_view name, ApiKind kind,
                                         GptStream stream, int64_t duration_ns) {
  Rank& rank = ranks_[static_cast<size_t>(r)];
  schema::ApiCallEvent call;
  call.start_ns = rank.host_ns;
  call.duration_ns = static_cast<uint64_t>(duration_ns);
  call.thread_id = thread_id(r, rank.backward);
  call.correlation_id = rank.next_correlation++;
  call.kind = kind;
  call.name = name;
  call.stream_id = kStreamHandles[static_cast<int>(stream)];
  call.domain = schema::ApiDomain::kRuntime;
  switch (kind) {
    case ApiKind::kLaunchKernel:
      call.cbid = name == "cuLaunchKernelEx" ? kCbidLaunchKernelEx : kCbidLaunchKernel;
      if (name == "cuLaunchKernelEx") call.domain = schema::ApiDomain::kDriver;
      break;
    case ApiKind::kMemsetAsync:
      call.cbid = kCbidMemsetAsync;
      break;
    case ApiKind::kEventRecord:
      call.cbid = kCbidEventRecord;
      break;
    case ApiKind::kStreamWaitEvent:
      call.cbid = kCbidStreamWaitEvent;
      break;
    case ApiKind::kStreamSynchronize:
      call.cbid = kCbidStreamSynchronize;
      break;
    default:
      break;
  }
  rank.host_ns += duration_ns;
  events_[static_cast<size_t>(r)].api_calls.push_back(call);
  return call;
}

int64_t GptTimeline::GpuStart(int32_t r, const schema::ApiCallEvent& launch, GptStream stream) {
  const Rank& rank = ranks_[static_cast<size_t>(r)];
  const int s = static_cast<int>(stream);
  const int64_t ready = launch.start_ns + HostCall(r, 1'000, 2'500);
  return std::max({ready, rank.stream_end_ns[s], rank.stream_wait_ns[s]});
}

void GptTimeline::AddKernel(int32_t r, const schema::ApiCallEvent& launch, GptStream stream,
                            std::string_view name, int64_t start_ns, int64_t duration_ns) {
  schema::KernelEvent k;
  k.start_ns = start_ns;
  k.duration_ns = static_cast<uint64_t>(std::max<int64_t>(duration_ns, 1));
  k.correlation_id = launch.correlation_id;
  k.stream_id = kStreamIds[static_cast<int>(stream)];
  k.name = name;
  k.grid = {132, 1, 1};
  k.block = {256, 1, 1};
  k.registers_per_thread = 128;
  k.context_id = 1;
  k.launch_type = schema::LaunchType::kRegular;
  ranks_[static_cast<size_t>(r)].stream_end_ns[static_cast<int>(stream)] =
      start_ns + static_cast<int64_t>(k.duration_ns);
  events_[static_cast<size_t>(r)].kernels.push_back(k);
}

void GptTimeline::Kernel(std::string_view name, int64_t duration_ns) {
  const std::string_view kept = Intern(std::string(name));
  for (int32_t r = 0; r < config_.world(); ++r) {
    ranks_[static_cast<size_t>(r)].host_ns += HostCall(r, 1'000, 3'000);
    const schema::ApiCallEvent launch = Launch(r, "cudaLaunchKernel", ApiKind::kLaunchKernel,
                                               GptStream::kCompute, HostCall(r, 4'000, 6'000));
    const int64_t start = GpuStart(r, launch, GptStream::kCompute);
    const auto duration =
        static_cast<int64_t>(static_cast<double>(duration_ns) * Jitter(r) * Slowdown(r, kept));
    AddKernel(r, launch, GptStream::kCompute, kept, start, duration);
  }
}

void GptTimeline::Gemm(std::string_view name, const GptGemm& gemm, int64_t duration_ns) {
  const std::string_view kept = Intern(std::string(name));
  for (int32_t r = 0; r < config_.world(); ++r) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    rank.host_ns += HostCall(r, 1'000, 3'000);
    schema::GemmCallEvent call;
    call.start_ns = rank.host_ns;
    rank.host_ns += HostCall(r, 600, 1'000);  // cuBLASLt picks its algorithm.
    const schema::ApiCallEvent launch = Launch(r, "cudaLaunchKernel", ApiKind::kLaunchKernel,
                                               GptStream::kCompute, HostCall(r, 4'000, 6'000));
    rank.host_ns += HostCall(r, 300, 600);
    call.duration_ns = static_cast<uint64_t>(rank.host_ns - call.start_ns);
    call.thread_id = launch.thread_id;
    call.api = schema::GemmApi::kCublasltMatmul;
    call.m = static_cast<uint64_t>(gemm.m);
    call.n = static_cast<uint64_t>(gemm.n);
    call.k = static_cast<uint64_t>(gemm.k);
    call.batch_count = 1;
    call.transa = gemm.transa;
    call.transb = gemm.transb;
    // Recorded as the agent records cuBLASLt, column-major (loading turns it back).
    ToColumnMajor(&call);
    call.a_type = call.b_type = call.c_type = call.d_type = schema::DataType::kBfloat16;
    call.compute_type = schema::GemmComputeType::kFloat32;
    call.stream_id = launch.stream_id;
    call.correlation_id = launch.correlation_id;
    events_[static_cast<size_t>(r)].gemms.push_back(call);
    const int64_t start = GpuStart(r, launch, GptStream::kCompute);
    const auto duration =
        static_cast<int64_t>(static_cast<double>(duration_ns) * Jitter(r) * Slowdown(r, kept));
    AddKernel(r, launch, GptStream::kCompute, kept, start, duration);
    // One CTA per 128 x 128 output tile, 384 threads (a warp-specialised Hopper kernel).
    schema::KernelEvent& k = events_[static_cast<size_t>(r)].kernels.back();
    k.grid = {static_cast<uint32_t>((gemm.n + 127) / 128),
              static_cast<uint32_t>((gemm.m + 127) / 128), 1};
    k.block = {384, 1, 1};
    k.dynamic_shared_memory_bytes = 213'000;
  }
}

void GptTimeline::Attention(std::string_view name, const models::AttentionShape& shape,
                            int64_t duration_ns) {
  const std::string_view kept = Intern(std::string(name));
  for (int32_t r = 0; r < config_.world(); ++r) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    rank.host_ns += HostCall(r, 1'000, 3'000);
    schema::GemmCallEvent call;
    call.start_ns = rank.host_ns;
    rank.host_ns += HostCall(r, 3'000, 6'000);  // The flash-attn op's Python and checks.
    const schema::ApiCallEvent launch = Launch(r, "cudaLaunchKernel", ApiKind::kLaunchKernel,
                                               GptStream::kCompute, HostCall(r, 4'000, 6'000));
    rank.host_ns += HostCall(r, 500, 1'000);
    call.duration_ns = static_cast<uint64_t>(rank.host_ns - call.start_ns);
    call.thread_id = launch.thread_id;
    call.api = shape.backward ? schema::GemmApi::kFrameworkAttentionBackward
                              : schema::GemmApi::kFrameworkAttention;
    call.m = static_cast<uint64_t>(shape.seq_q);
    call.n = static_cast<uint64_t>(shape.seq_kv > 0 ? shape.seq_kv : shape.seq_q);
    call.k = static_cast<uint64_t>(shape.head_dim);
    call.batch_count = static_cast<uint64_t>(shape.batch * shape.heads);
    call.heads = static_cast<uint32_t>(shape.heads);
    call.kv_heads = static_cast<uint32_t>(shape.kv_heads > 0 ? shape.kv_heads : shape.heads);
    call.head_dim_v = static_cast<uint64_t>(shape.head_dim);
    call.mask = shape.causal ? schema::AttentionMask::kCausal : schema::AttentionMask::kNone;
    call.a_type = call.b_type = call.c_type = call.d_type = schema::DataType::kBfloat16;
    call.stream_id = launch.stream_id;
    call.correlation_id = launch.correlation_id;
    events_[static_cast<size_t>(r)].gemms.push_back(call);
    const int64_t start = GpuStart(r, launch, GptStream::kCompute);
    const auto duration =
        static_cast<int64_t>(static_cast<double>(duration_ns) * Jitter(r) * Slowdown(r, kept));
    AddKernel(r, launch, GptStream::kCompute, kept, start, duration);
  }
}

void GptTimeline::Memset(uint64_t bytes, int64_t duration_ns) {
  for (int32_t r = 0; r < config_.world(); ++r) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    rank.host_ns += HostCall(r, 1'000, 3'000);
    const schema::ApiCallEvent launch = Launch(r, "cudaMemsetAsync", ApiKind::kMemsetAsync,
                                               GptStream::kCompute, HostCall(r, 3'000, 5'000));
    schema::MemsetEvent m;
    m.start_ns = GpuStart(r, launch, GptStream::kCompute);
    m.duration_ns = static_cast<uint64_t>(std::max<int64_t>(
        1, static_cast<int64_t>(static_cast<double>(duration_ns) * Jitter(r) *
                                (r == config_.slow_rank ? config_.slow_rank_factor : 1.0))));
    m.correlation_id = launch.correlation_id;
    m.stream_id = kStreamIds[static_cast<int>(GptStream::kCompute)];
    m.bytes = bytes;
    m.memory_kind = schema::MemoryKind::kDevice;
    m.context_id = 1;
    rank.stream_end_ns[static_cast<int>(GptStream::kCompute)] =
        m.start_ns + static_cast<int64_t>(m.duration_ns);
    events_[static_cast<size_t>(r)].memsets.push_back(m);
  }
}

void GptTimeline::EventWait(GptStream recorder, GptStream waiter) {
  for (int32_t r = 0; r < config_.world(); ++r) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    GptRankEvents& out = events_[static_cast<size_t>(r)];
    const uint64_t event_handle = 0x7f1e4c000000ull + 0x40 * rank.next_event;
    const uint64_t sync_id = rank.next_event++;
    rank.host_ns += HostCall(r, 300, 1'000);
    const schema::ApiCallEvent record =
        Launch(r, "cudaEventRecord", ApiKind::kEventRecord, recorder, HostCall(r, 1'500, 2'500));
    out.api_calls.back().event_id = event_handle;
    schema::CudaEventRecordEvent recorded;
    recorded.start_ns = record.start_ns;
    recorded.correlation_id = record.correlation_id;
    recorded.event_id = event_handle;
    recorded.stream_id = kStreamIds[static_cast<int>(recorder)];
    recorded.cuda_event_sync_id = sync_id;
    recorded.context_id = 1;
    out.cuda_events.push_back(recorded);
    const int64_t ready = rank.stream_end_ns[static_cast<int>(recorder)];
    rank.host_ns += HostCall(r, 300, 1'000);
    const schema::ApiCallEvent wait = Launch(r, "cudaStreamWaitEvent", ApiKind::kStreamWaitEvent,
                                             waiter, HostCall(r, 1'500, 2'500));
    out.api_calls.back().event_id = event_handle;
    schema::SyncEvent sync;
    sync.start_ns = wait.start_ns;
    sync.duration_ns = wait.duration_ns;
    sync.sync_type = schema::SyncType::kStreamWaitEvent;
    sync.correlation_id = wait.correlation_id;
    sync.stream_id = kStreamIds[static_cast<int>(waiter)];
    sync.event_id = event_handle;
    sync.cuda_event_sync_id = sync_id;
    sync.context_id = 1;
    sync.thread_id = wait.thread_id;
    out.syncs.push_back(sync);
    int64_t& wait_ns = rank.stream_wait_ns[static_cast<int>(waiter)];
    wait_ns = std::max(wait_ns, ready);
  }
}

void GptTimeline::AllReduce(GptGroup group, GptStream stream, uint64_t bytes, schema::DataType type,
                            const GptCosts::Collective& cost) {
  const bool bf16 = type == schema::DataType::kBfloat16;
  const std::string_view name =
      Intern(std::string("ncclDevKernel_AllReduce_Sum_") + (bf16 ? "bf16_" : "f32_") +
             AlgorithmWord(cost.algorithm) + "_" + ProtocolWord(cost.protocol) +
             "(ncclDevKernelArgsStorage<4096ul>)");
  const int32_t world = static_cast<int32_t>(config_.world());
  const auto size =
      static_cast<uint32_t>(group == GptGroup::kTensorParallel ? config_.tp : config_.dp);
  struct Member {
    schema::ApiCallEvent launch;
    int64_t call_ns = 0;
    int64_t start_ns = 0;
  };
  std::vector<Member> members(static_cast<size_t>(world));
  for (int32_t r = 0; r < world; ++r) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    Member& m = members[static_cast<size_t>(r)];
    rank.host_ns += HostCall(r, 1'000, 3'000);
    m.call_ns = rank.host_ns;  // ncclAllReduce: enqueues, then launches.
    rank.host_ns += HostCall(r, 1'500, 3'000);
    m.launch =
        Launch(r, "cuLaunchKernelEx", ApiKind::kLaunchKernel, stream, HostCall(r, 4'000, 6'000));
    rank.host_ns += HostCall(r, 500, 1'000);
    m.start_ns = GpuStart(r, m.launch, stream);
  }
  // Per communicator: the members end together, the transfer after the last one's start.
  const uint64_t seq = seq_[static_cast<int>(group)]++;
  auto group_of = [&](int32_t r) {
    return group == GptGroup::kTensorParallel ? r / config_.tp : r % config_.tp;
  };
  std::vector<int64_t> last_starts(static_cast<size_t>(world), INT64_MIN);
  for (int32_t r = 0; r < world; ++r) {
    int64_t& last = last_starts[static_cast<size_t>(group_of(r))];
    last = std::max(last, members[static_cast<size_t>(r)].start_ns);
  }
  for (int32_t r = 0; r < world; ++r) {
    const int64_t last_start = last_starts[static_cast<size_t>(group_of(r))];
    const uint64_t draw = Mix(config_.seed ^ Mix(CommId(group, r) ^ (collectives_ << 20)));
    const double jitter = Lognormal(UnitOf(draw), UnitOf(Mix(draw)), kSigma);
    const int64_t end =
        last_start +
        std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(cost.transfer_ns) * jitter *
                                                  config_.comm_factor));
    const Member& m = members[static_cast<size_t>(r)];
    AddKernel(r, m.launch, stream, name, m.start_ns, end - m.start_ns);
    schema::CollectiveEvent c;
    c.start_ns = m.call_ns;
    c.duration_ns = static_cast<uint64_t>(end - m.call_ns);
    c.comm_id = CommId(group, r);
    c.seq_number = seq;
    c.op = schema::CollectiveOp::kAllReduce;
    c.count = bytes / (bf16 ? 2 : 4);
    c.data_type = type;
    c.bytes = bytes;
    c.stream_id = m.launch.stream_id;
    c.algorithm = cost.algorithm;
    c.protocol = cost.protocol;
    c.channels = cost.protocol == schema::NcclProtocol::kSimple ? 16 : 8;
    c.reduce_op = schema::ReduceOp::kSum;
    c.correlation_id = m.launch.correlation_id;
    c.thread_id = m.launch.thread_id;
    c.comm_size = size;
    c.has_host_time = true;
    events_[static_cast<size_t>(r)].collectives.push_back(c);
  }
  ++collectives_;
}

void GptTimeline::StreamSynchronize(GptStream stream) {
  for (int32_t r = 0; r < config_.world(); ++r) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    rank.host_ns += HostCall(r, 1'000, 3'000);
    const int64_t start = rank.host_ns;
    const int64_t end =
        std::max(start + HostCall(r, 1'500, 2'500),
                 rank.stream_end_ns[static_cast<int>(stream)] + HostCall(r, 2'000, 4'000));
    const schema::ApiCallEvent call =
        Launch(r, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, stream, end - start);
    schema::SyncEvent sync;
    sync.start_ns = call.start_ns;
    sync.duration_ns = call.duration_ns;
    sync.sync_type = schema::SyncType::kStreamSynchronize;
    sync.correlation_id = call.correlation_id;
    sync.stream_id = kStreamIds[static_cast<int>(stream)];
    sync.context_id = 1;
    sync.thread_id = call.thread_id;
    events_[static_cast<size_t>(r)].syncs.push_back(sync);
  }
}

void GptTimeline::Push(std::string_view name) {
  if (!config_.nvtx) return;
  const std::string_view kept = Intern(std::string(name));
  for (int32_t r = 0; r < config_.world(); ++r) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    rank.host_ns += HostCall(r, 200, 400);
    rank.nvtx.push_back({kept, rank.host_ns});
  }
}

void GptTimeline::Pop() {
  if (!config_.nvtx) return;
  for (int32_t r = 0; r < config_.world(); ++r) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    rank.host_ns += HostCall(r, 200, 400);
    const Open open = rank.nvtx.back();
    rank.nvtx.pop_back();
    schema::NvtxEvent e;
    e.start_ns = open.start_ns;
    e.duration_ns = static_cast<uint64_t>(rank.host_ns - open.start_ns);
    e.thread_id = e.end_thread_id = thread_id(r, rank.backward);
    e.name = open.name;
    e.kind = schema::NvtxKind::kPushPop;
    e.depth = static_cast<uint32_t>(rank.nvtx.size());
    events_[static_cast<size_t>(r)].nvtx.push_back(e);
  }
}

void GptTimeline::StepBegin(int64_t step) {
  const std::string_view name = Intern("ProfilerStep#" + std::to_string(step));
  for (int32_t r = 0; r < config_.world(); ++r) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    rank.host_ns += HostCall(r, 5'000, 10'000);
    rank.step = {name, rank.host_ns};
    rank.step_number = step;
  }
}

void GptTimeline::StepEnd() {
  for (int32_t r = 0; r < config_.world(); ++r) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    rank.host_ns += HostCall(r, 2'000, 4'000);
    schema::HostRangeEvent e;
    e.start_ns = rank.step.start_ns;
    e.duration_ns = static_cast<uint64_t>(rank.host_ns - rank.step.start_ns);
    e.thread_id = thread_id(r, false);
    e.name = rank.step.name;
    e.category = schema::HostRangeCategory::kStep;
    e.has_step_number = true;
    e.step_number = rank.step_number;
    events_[static_cast<size_t>(r)].host_ranges.push_back(e);
  }
}

std::vector<GptRankEvents>& GptTimeline::Finish() {
  const int32_t world = static_cast<int32_t>(config_.world());
  const std::string_view names[3] = {Intern("default_pg"), Intern("tensor_model_parallel"),
                                     Intern("data_parallel")};
  for (int32_t r = 0; r < world; ++r) {
    GptRankEvents& out = events_[static_cast<size_t>(r)];
    auto add = [&](uint64_t comm_id, int32_t rank, int64_t size, std::string_view name,
                   std::vector<int32_t> members) {
      schema::CommunicatorEvent c;
      c.start_ns = kStartNs - 50'000'000;  // At init, before the first iteration.
      c.comm_id = comm_id;
      c.rank = rank;
      c.comm_size = static_cast<uint32_t>(size);
      c.name = name;
      c.global_ranks = std::move(members);
      out.communicators.push_back(std::move(c));
    };
    std::vector<int32_t> all(static_cast<size_t>(world));
    for (int32_t q = 0; q < world; ++q) all[static_cast<size_t>(q)] = q;
    add(Mix(0x776f726c64ull) | 1, r, world, names[0], all);
    for (GptGroup g : {GptGroup::kTensorParallel, GptGroup::kDataParallel}) {
      const int64_t size = g == GptGroup::kTensorParallel ? config_.tp : config_.dp;
      if (size < 2) continue;
      std::vector<int32_t> members;
      int32_t position = 0;
      for (int32_t q = 0; q < world; ++q) {
        if (CommId(g, q) != CommId(g, r)) continue;
        if (q == r) position = static_cast<int32_t>(members.size());
        members.push_back(q);
      }
      add(CommId(g, r), position, size, names[g == GptGroup::kTensorParallel ? 1 : 2],
          std::move(members));
    }
    const Rank& rank = ranks_[static_cast<size_t>(r)];
    out.end_ns = rank.host_ns;
    for (int64_t end : rank.stream_end_ns) out.end_ns = std::max(out.end_ns, end);
  }
  return events_;
}

}  // namespace lumos::modeler
