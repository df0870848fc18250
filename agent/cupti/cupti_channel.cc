#include "agent/cupti/cupti_channel.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#include "agent/core/no_destructor.h"
#include "agent/cupti/cuda_devices.h"
#include "agent/runtime/agent_runtime.h"
#include "base/logging.h"

namespace lumos::agent::cupti {
namespace {

// The channel whose pool serves CUPTI's buffer callbacks (they take no user data). Release/
// acquire: a callback that sees the pointer sees the pool it points to.
std::atomic<CuptiChannel*> g_activity_channel{nullptr};
// cuptiGetTimestamp for the agent's clock snapshots (a plain function pointer there).
std::atomic<CUptiResult (*)(uint64_t*)> g_get_timestamp{nullptr};

int64_t ReadCuptiTimestamp() {
  uint64_t now = 0;
  CUptiResult (*get)(uint64_t*) = g_get_timestamp.load(std::memory_order_acquire);
  if (get == nullptr || get(&now) != CUPTI_SUCCESS) return 0;
  return static_cast<int64_t>(now);
}

struct ActivityKindName {
  CUpti_ActivityKind kind;
  const char* name;
};
constexpr ActivityKindName kActivityKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
    {CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA_EVENT"},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION"},
};

using Failures = std::vector<std::pair<schema::Channel, std::string>>;

// One warning line for everything that failed at start (channels that failed for the same
// reason, e.g. no libcupti, share it: "cupti_activity, cupti_callback: why"), then one
// LossRecord per channel.
void ReportFailures(ChannelHost* host, const Failures& failures) {
  if (failures.empty()) return;
  std::string line;
  for (size_t i = 0; i < failures.size(); ++i) {
    const std::string& why = failures[i].second;
    bool said = false;
    for (size_t j = 0; j < i; ++j) said = said || failures[j].second == why;
    if (said) continue;
    std::string channels;
    for (size_t j = i; j < failures.size(); ++j) {
      if (failures[j].second != why) continue;
      channels += (channels.empty() ? "" : ", ") + std::string(ChannelName(failures[j].first));
    }
    line.append(line.empty() ? "" : "; ").append(channels).append(": ").append(why);
  }
  LUMOS_LOG(Warn, "CUPTI channel off (the job and the other channels carry on): %s", line.c_str());
  for (const auto& [channel, why] : failures) host->ReportFailure(channel, why);
}

// The agent as the channel's host.
class AgentHost : public ChannelHost {
 public:
  const EnabledFlag& enabled() override { return Agent::Get().enabled(); }
  ThreadRings* rings() override { return Agent::Get().rings(); }
  StringTable& strings() override { return Agent::Get().strings(); }
  void ReportFailure(schema::Channel channel, std::string_view why) override {
    Agent::Get().ReportChannelFailure(channel, why, /*log_warning=*/false);
  }
  bool AddRecordSource(RecordSource* source) override {
    return Agent::Get().AddRecordSource(source);
  }
  void SetSnapshotClock(int64_t (*read_ns)()) override {
    Agent::Get().SetSnapshotClock(schema::ClockId::kCupti, read_ns);
  }
  void SetCaptureSwitch(CaptureSwitch* capture_switch) override {
    Agent::Get().SetCaptureSwitch(capture_switch);
  }
  control::KernelBoundaries* kernel_boundaries() override {
    return Agent::Get().EnableKernelBoundaries();
  }
};

}  // namespace

CuptiChannel::CuptiChannel(const CuptiApi& api, ChannelHost* host)
    : api_(api), host_(host), decoder_(&api_), clock_(api_.get_timestamp) {}

CuptiChannel::~CuptiChannel() {
  // Tests only (the process's channel is never destroyed): stop CUPTI reaching this object.
  CuptiChannel* self = this;
  g_activity_channel.compare_exchange_strong(self, nullptr);
}

bool CuptiChannel::Start(const AgentConfig& config) {
  Failures failures;
  const bool want_activity = config.channels.Has(schema::Channel::kCuptiActivity);
  const bool want_callbacks = config.channels.Has(schema::Channel::kCuptiCallback);
  if (want_activity) {
    uint32_t version = 0;
    const CUptiResult result = api_.get_version(&version);
    if (result != CUPTI_SUCCESS) {
      failures.emplace_back(schema::Channel::kCuptiActivity,
                            "cuptiGetVersion: " + CuptiResultName(api_, result));
    } else if (version != CUPTI_API_VERSION) {
      // Record layouts change between 13.x releases: never decode a layout we were not built for.
      failures.emplace_back(schema::Channel::kCuptiActivity,
                            "libcupti " + api_.library_path + " reports API version " +
                                std::to_string(version) + ", the agent was built for " +
                                std::to_string(CUPTI_API_VERSION) +
                                "; activity records are not decoded");
    } else if (std::string why = StartActivity(config); !why.empty()) {
      failures.emplace_back(schema::Channel::kCuptiActivity, why);
    }
  }
  if (want_callbacks) {
    if (std::string why = StartCallbacks(); !why.empty()) {
      failures.emplace_back(schema::Channel::kCuptiCallback, why);
    }
  }
  ReportFailures(host_, failures);
  const bool running = activity_running() || callbacks_running_;
  if (running) host_->SetCaptureSwitch(this);  // Windowed modes turn it off at once.
  return running;
}

void CuptiChannel::SetCapturing(bool armed) {
  int failed = 0;
  if (activity_running()) {
    for (const auto& kind : kActivityKinds) {
      const CUptiResult result =
          armed ? api_.activity_enable(kind.kind) : api_.activity_disable(kind.kind);
      failed += result == CUPTI_SUCCESS ? 0 : 1;
    }
  }
  if (callbacks_running_) {
    for (const ApiSpec& spec : TracedApis()) {
      failed +=
          api_.enable_callback(armed ? 1 : 0, subscriber_, spec.domain, spec.cbid) == CUPTI_SUCCESS
              ? 0
              : 1;
    }
  }
  if (failed > 0) {
    LUMOS_LOG(Debug, "CUPTI: %d calls failed turning collection %s", failed, armed ? "on" : "off");
  }
}

void CuptiChannel::FlushForWindow() {
  // FORCED: the window's last buffers, full or not (the writer thread; the job never waits).
  if (activity_running()) (void)api_.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

std::string CuptiChannel::StartActivity(const AgentConfig& config) {
  StatusOr<std::unique_ptr<ActivityBufferPool>> pool =
      ActivityBufferPool::Create(config.cupti_buffer_bytes, config.cupti_buffer_count);
  if (!pool.ok()) return pool.status().message();
  pool_ = std::move(pool).value();
  if (!clock_.Measure()) return "cuptiGetTimestamp failed: activity times cannot be converted";
  g_activity_channel.store(this, std::memory_order_release);
  CUptiResult result = api_.activity_register_callbacks(&BufferRequested, &BufferCompleted);
  if (result != CUPTI_SUCCESS) {
    return "cuptiActivityRegisterCallbacks: " + CuptiResultName(api_, result);
  }
  if (api_.activity_enable_cuda_event_device_timestamps != nullptr) {
    // Optional: without it CUDA_EVENT records carry no time (the record call's ApiCall has it).
    (void)api_.activity_enable_cuda_event_device_timestamps(1);
  }
  for (size_t i = 0; i < std::size(kActivityKinds); ++i) {
    result = api_.activity_enable(kActivityKinds[i].kind);
    if (result == CUPTI_SUCCESS) continue;
    for (size_t j = 0; j < i; ++j) (void)api_.activity_disable(kActivityKinds[j].kind);
    return std::string("cuptiActivityEnable(") + kActivityKinds[i].name +
           "): " + CuptiResultName(api_, result);
  }
  host_->AddRecordSource(this);
  g_get_timestamp.store(api_.get_timestamp, std::memory_order_release);
  host_->SetSnapshotClock(&ReadCuptiTimestamp);
  activity_running_.store(true, std::memory_order_release);
  // After CUPTI is set up, so this runs before CUPTI's own exit-time teardown (LIFO).
  std::atexit(&FlushAtExit);
  return "";
}

std::string CuptiChannel::StartCallbacks() {
  table_.Build(host_->strings());
  context_ =
      CallbackContext{&host_->enabled(), host_->rings(), &table_, host_->kernel_boundaries()};
  if (context_.rings == nullptr) return "the agent has no rings (not started)";
  CUptiResult result = api_.subscribe(&subscriber_, &HandleApiCallback, &context_);
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    return "another CUPTI subscriber is active (Nsight Systems, torch.profiler or Kineto?): "
           "cuptiSubscribe returned " +
           CuptiResultName(api_, result);
  }
  if (result != CUPTI_SUCCESS) return "cuptiSubscribe: " + CuptiResultName(api_, result);
  size_t enabled = 0;
  std::string first_error;
  for (const ApiSpec& spec : TracedApis()) {
    result = api_.enable_callback(1, subscriber_, spec.domain, spec.cbid);
    if (result == CUPTI_SUCCESS) {
      ++enabled;
    } else if (first_error.empty()) {
      first_error =
          std::string("cuptiEnableCallback(") + spec.name + "): " + CuptiResultName(api_, result);
    }
  }
  if (enabled == 0) {
    (void)api_.unsubscribe(subscriber_);
    subscriber_ = nullptr;
    return first_error;
  }
  if (!first_error.empty()) {
    LUMOS_LOG(Debug, "CUPTI callbacks: %zu of %zu APIs traced; first failure %s", enabled,
              TracedApis().size(), first_error.c_str());
  }
  callbacks_running_ = true;
  return "";
}

void CUPTIAPI CuptiChannel::BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  CuptiChannel* channel = g_activity_channel.load(std::memory_order_acquire);
  uint8_t* taken = channel != nullptr && channel->pool_ ? channel->pool_->Acquire() : nullptr;
  *buffer = taken;
  *size = taken != nullptr ? channel->pool_->buffer_bytes() : 0;
  *max_records = 0;  // As many as fit.
}

void CUPTIAPI CuptiChannel::BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                            size_t /*size*/, size_t valid_bytes) {
  CuptiChannel* channel = g_activity_channel.load(std::memory_order_acquire);
  if (channel == nullptr || !channel->pool_) return;
  if (buffer != nullptr && !channel->pool_->Complete(buffer, valid_bytes)) {
    channel->foreign_buffers_.fetch_add(1, std::memory_order_relaxed);
  }
  // Records CUPTI dropped for this context/stream (no buffer, or a full one). Not our lock's
  // business: we hold none here (STYLE.md 5.6).
  size_t dropped = 0;
  if (channel->api_.activity_get_num_dropped_records != nullptr &&
      channel->api_.activity_get_num_dropped_records(context, stream_id, &dropped) ==
          CUPTI_SUCCESS &&
      dropped > 0) {
    channel->cupti_dropped_.fetch_add(dropped, std::memory_order_relaxed);
  }
}

void CuptiChannel::Drain(RecordSink& sink) {
  if (!pool_) return;
  clock_.MaybeRefresh(ReadMonotonicNs());
  const int64_t offset_ns = clock_.offset_ns();
  pool_->DrainCompleted([&](const uint8_t* buffer, size_t valid_bytes) {
    decoder_.Decode(buffer, valid_bytes, offset_ns, sink);
  });
  const int64_t now_ns = MonotonicNowNs();
  if (const uint64_t dropped = cupti_dropped_.exchange(0, std::memory_order_relaxed)) {
    sink.AddLoss(schema::LossSource::kCuptiDropped, dropped, now_ns,
                 "CUPTI activity records dropped (cuptiActivityGetNumDroppedRecords)");
  }
  if (const uint64_t refused = pool_->TakeRefusedRequests()) {
    const std::string detail = "CUPTI buffer requests refused: all " +
                               std::to_string(pool_->count()) + " buffers of " +
                               std::to_string(pool_->buffer_bytes()) +
                               " bytes in use (LUMOS_CUPTI_BUFFERS, LUMOS_CUPTI_BUFFER_BYTES)";
    sink.AddLoss(schema::LossSource::kBufferPoolEmpty, refused, now_ns, detail);
  }
}

void CuptiChannel::FlushOnce() {
  if (!activity_running() || flushed_.exchange(true)) return;
  // FORCED: also hands over buffers that are not full yet. bufferCompleted runs inside.
  (void)api_.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void CuptiChannel::FlushBeforeFinalDrain() { FlushOnce(); }

void CuptiChannel::FlushAtExit() {
  if (CuptiChannel* channel = g_activity_channel.load(std::memory_order_acquire)) {
    channel->FlushOnce();
  }
}

int InitializeCuptiInjection() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    Agent& agent = Agent::Get();
    // cuInit is running: from now on the writer may ask the driver for the devices (on its own
    // thread, never here; nothing makes it wait for this to return: before cuInit has finished,
    // the probe counts on the driver's refusal and asks again, cuda_devices.h).
    agent.SetDeviceProbe(&ProbeProcessDevices);
    agent.LoadConfig();
    const AgentConfig& config = agent.config();
    if (!config.channels.Has(schema::Channel::kCuptiActivity) &&
        !config.channels.Has(schema::Channel::kCuptiCallback)) {
      return;
    }
    if (!config.enabled) return;
    // libcupti is loaded here, in the driver's injection call (CUPTI's own pattern), before
    // the agent starts, so the header can carry its version (CuptiVersionForHeader).
    const StatusOr<CuptiApi>& api = ProcessCuptiApi(config.cupti_library);
    if (!agent.Start()) return;  // Off (failed; it said why).
    static NoDestructor<AgentHost> host;
    if (!api.ok()) {
      Failures failures;
      for (schema::Channel channel :
           {schema::Channel::kCuptiActivity, schema::Channel::kCuptiCallback}) {
        if (config.channels.Has(channel)) failures.emplace_back(channel, api.status().message());
      }
      ReportFailures(host.operator->(), failures);
      return;
    }
    static NoDestructor<CuptiChannel> channel(api.value(), host.operator->());
    channel->Start(config);
  });
  return 1;
}

namespace {
std::atomic<bool> g_cupti_api_loaded{false};  // ProcessCuptiApi has run (release: its table).
}  // namespace

const StatusOr<CuptiApi>& ProcessCuptiApi(const std::string& fallback_path) {
  // Never destroyed: the channel copies the table, but late callers may still ask at exit.
  static NoDestructor<StatusOr<CuptiApi>> api(LoadCuptiApi(fallback_path));
  g_cupti_api_loaded.store(true, std::memory_order_release);
  return *api;
}

uint32_t CuptiVersionForHeader(const AgentConfig& config) noexcept {
  // Never the first to load libcupti: Start() runs this under its once-lock, and a library load
  // there (from an NVTX or NCCL thread) could wait for the driver's lock while the driver's
  // thread, in InitializeInjection, waits for that once-lock.
  if (!g_cupti_api_loaded.load(std::memory_order_acquire)) return 0;
  const StatusOr<CuptiApi>& api = ProcessCuptiApi(config.cupti_library);
  uint32_t version = 0;
  if (!api.ok() || api.value().get_version == nullptr ||
      api.value().get_version(&version) != CUPTI_SUCCESS) {
    return 0;
  }
  return version;
}

}  // namespace lumos::agent::cupti
