// Windowed capture (LUMOS_MODE=periodic|on-demand) and the control endpoint's handlers: the
// Agent's members declared under "Windowed capture" in agent_runtime.h. Design there and in
// agent/control/window_controller.h.
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "agent/control/window_output.h"
#include "agent/core/counted_loss.h"
#include "agent/core/file_names.h"
#include "agent/core/record_encoding.h"
#include "agent/runtime/agent_runtime.h"
#include "agent/runtime/writer_record_sink.h"
#include "base/logging.h"

namespace lumos::agent {
namespace {

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kNsPerS = 1'000'000'000;
// The length of a window that found no iteration marker, when no LUMOS_WINDOW_S says one.
constexpr int64_t kDefaultTimedWindowNs = 10 * kNsPerS;
// How long past its target a window waits for a matching boundary before it takes a timed
// window instead: this, or 4 iteration periods when longer.
constexpr int64_t kGiveUpAfterNs = 30 * kNsPerS;
// A request whose --at is this far in the past when it arrives says that it missed it.
constexpr int64_t kLateRequestNs = 1 * kNsPerS;

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNsPerS + ts.tv_nsec;
}

// Control endpoint -> the agent (its thread; never the job's).
class AgentControlHandler : public control::ControlHandler {
 public:
  control::AgentStatus Status() override { return Agent::Get().ControlStatus(); }
  std::string Capture(const control::CaptureRequest& request) override {
    return Agent::Get().ControlCapture(request);
  }
  control::CancelReply Cancel(const control::CancelRequest& request) override {
    return Agent::Get().ControlCancel(request);
  }
};

// Between windows: the sources' records go through the same filter as the rings' (held when
// they belong to a window that just started, else dropped); their losses are not a window's.
class BetweenWindowsSink : public RecordSink {
 public:
  using Keep = void (*)(void* context, const Record& head, const Record* extension);
  BetweenWindowsSink(StringTable* strings, Keep keep, void* context)
      : strings_(strings), keep_(keep), context_(context) {}
  void Add(const Record& head, const Record* extension) override {
    keep_(context_, head, extension);
  }
  void AddLoss(schema::LossSource, uint64_t, int64_t, std::string_view) override {}
  StringTable& strings() override { return *strings_; }

 private:
  StringTable* strings_;
  Keep keep_;
  void* context_;
};

schema::CaptureWindowEvent WindowEvent(const control::WindowPlan& plan,
                                       const control::WindowSpan& span, uint64_t index,
                                       const std::string& marker, bool complete) {
  schema::CaptureWindowEvent e;
  e.start_ns = span.start_ns;
  e.duration_ns = complete && span.end_ns > span.start_ns
                      ? static_cast<uint64_t>(span.end_ns - span.start_ns)
                      : 0;
  e.window_index = index;
  e.trigger = plan.trigger;
  e.first_iteration = span.started_at_boundary ? span.first_iteration : 0;
  e.iteration_count = complete ? span.iterations : 0;
  e.iteration_marker = marker;
  e.requested_by = plan.requested_by;
  e.request_id = plan.request_id;
  e.target = plan.target;
  e.missed_target = span.missed_target;
  e.start_realtime_ns = static_cast<uint64_t>(std::max<int64_t>(0, plan.window_realtime_ns));
  e.requested_iterations = plan.iterations;
  e.requested_duration_ns =
      plan.iterations == 0 ? static_cast<uint64_t>(std::max<int64_t>(0, plan.duration_ns)) : 0;
  return e;
}

}  // namespace

void Agent::StartWindows() {
  if (!windowed()) return;
  iteration_marker_ = control::IterationMarker(config_.iteration_marker);
  owned_windows_ = std::make_unique<control::WindowController>(&enabled_);
  if (config_.mode == CaptureMode::kPeriodic) {
    next_periodic_realtime_ns_ =
        control::NextPeriodicStart(RealtimeNs(), static_cast<int64_t>(config_.period_ms) * kNsPerMs,
                                   static_cast<double>(config_.jitter_ppm) / 1e6, config_.job_id);
  }
  // Published last: the NVTX channel reports boundaries once it sees the controller.
  windows_.store(owned_windows_.get(), std::memory_order_release);
}

control::KernelBoundaries* Agent::EnableKernelBoundaries() {
  control::WindowController* windows = windows_.load(std::memory_order_acquire);
  if (windows == nullptr) return nullptr;  // Continuous mode, or not started.
  std::lock_guard<std::mutex> lock(kernel_boundaries_mutex_);
  if (!owned_kernel_boundaries_) {
    owned_kernel_boundaries_ = std::make_unique<control::KernelBoundaries>(windows);
    kernel_boundaries_.store(owned_kernel_boundaries_.get(), std::memory_order_release);
  }
  return owned_kernel_boundaries_.get();
}

std::string Agent::IterationSource(const control::WindowController& windows) const {
  const control::KernelBoundaries* kernel = kernel_boundaries_.load(std::memory_order_acquire);
  if (kernel != nullptr && windows.plan().kernel_boundaries && !windows.marker_seen() &&
      windows.kernel_boundaries() > 0) {
    return "(kernel stream: a period of " + std::to_string(kernel->period()) + " launches)";
  }
  return iteration_marker_.pattern();
}

void Agent::StartControlEndpoint() {
  static NoDestructor<AgentControlHandler> handler;
  StatusOr<std::unique_ptr<control::ControlEndpoint>> endpoint =
      control::ControlEndpoint::Start(&handler.get(), owner_pid_);
  if (!endpoint.ok()) {
    // lumos-ctl will not see this process; the capture itself is unaffected.
    LUMOS_LOG(Info, "no control endpoint (lumos-ctl cannot reach this process): %s",
              endpoint.status().message().c_str());
    return;
  }
  endpoint_ = std::move(endpoint).value();
}

void Agent::SetCaptureSwitch(CaptureSwitch* capture_switch) {
  if (!windowed()) return;  // Continuous: the channel collects all the time.
  std::lock_guard<std::mutex> lock(capture_switch_mutex_);
  capture_switch_.store(capture_switch, std::memory_order_release);
  if (capture_switch != nullptr) capture_switch->SetCapturing(capture_switch_on_);
}

void Agent::NotifyCaptureSwitch(bool armed) {
  std::lock_guard<std::mutex> lock(capture_switch_mutex_);
  capture_switch_on_ = armed;
  if (CaptureSwitch* s = capture_switch_.load(std::memory_order_acquire)) s->SetCapturing(armed);
}

RankInfo Agent::CurrentRank() const {
  RankInfo rank = env_rank_;
  rank.warnings.clear();
  const schema::TrailerInfo trailer = CurrentTrailer();
  if (trailer.has_rank) {
    rank.rank = trailer.rank;
    rank.world_size = trailer.world_size;
  }
  return rank;
}

schema::TrailerInfo Agent::CurrentTrailer() const {
  schema::TrailerInfo trailer;
  // What the header could not name at start-up (schema 2.4), once the writer learned it.
  trailer.devices = process_devices_.devices;
  trailer.cuda_runtime_version = process_devices_.cuda_runtime_version;
  trailer.cuda_driver_version = process_devices_.cuda_driver_version;
  trailer.nccl_version = process_devices_.nccl_version;
  uint64_t world = world_comm_.load(std::memory_order_relaxed);
  if (world != 0 && env_rank_.world_size.has_value() &&
      static_cast<int64_t>(world >> 32) < *env_rank_.world_size) {
    // Smaller than the launcher's world: a sub-group (tensor, data or pipeline parallel) of a
    // job whose world communicator never ran here. Its rank is not the process's global rank.
    world = 0;
  }
  if (world == 0) return trailer;
  trailer.has_rank = true;
  trailer.has_world_size = true;
  trailer.rank = static_cast<int32_t>(world & 0xffffffffu);
  trailer.world_size = static_cast<int32_t>(world >> 32);
  return trailer;
}

void Agent::CacheCommunicator(const Record& head) {
  const uint64_t id = head.payload.communicator.comm_id;
  for (Record& cached : communicators_) {
    if (cached.payload.communicator.comm_id == id) {
      cached = head;
      return;
    }
  }
  communicators_.push_back(head);
}

void Agent::WindowPass(int64_t now_ns, bool flush_now) {
  control::WindowController* controller = windows_.load(std::memory_order_acquire);
  if (controller == nullptr) return;  // StartWindows() runs before the writer; never here.
  control::WindowController& windows = *controller;
  ApplyPendingCancel(now_ns);
  windows.Tick(now_ns);
  const control::WindowState state = windows.state();
  const bool in_window =
      state == control::WindowState::kCapturing || state == control::WindowState::kClosing;
  if (in_window && writer_ == nullptr && !window_open_failed_) OpenWindowFile();
  if (writer_ != nullptr) {
    DrainOnce(flush_now ? SIZE_MAX : kMaxDrainPerRing);
  } else {
    DrainBetweenWindows();
  }
  if (state == control::WindowState::kClosing) {
    CloseWindow();
  } else if (state == control::WindowState::kDormant) {
    MaybeArm(now_ns);
  }
  // Kernel launches feed the period detector while a window that counts iterations without a
  // marker is armed or capturing (MaybeArm turns it on at once; a marker turns it off).
  if (control::KernelBoundaries* kernel = kernel_boundaries_.load(std::memory_order_acquire)) {
    const control::WindowState now = windows.state();
    kernel->SetWanted((now == control::WindowState::kArmed ||
                       now == control::WindowState::kStarting ||
                       now == control::WindowState::kCapturing) &&
                      windows.plan().kernel_boundaries && !windows.marker_seen());
  }
  if (writer_ != nullptr) {
    if (ReadMonotonicNs() - last_snapshot_ns_ >= static_cast<int64_t>(kClockSnapshotIntervalNs)) {
      WriteClockSnapshot();
    }
    if (flush_now) {
      writer_->Flush().IgnoreError();
    } else {
      writer_->MaybeFlush(static_cast<uint64_t>(ReadMonotonicNs())).IgnoreError();
    }
  }
}

void Agent::ApplyPendingCancel(int64_t now_ns) {
  std::optional<PendingCancel> cancel;
  {
    std::lock_guard<std::mutex> lock(request_mutex_);
    cancel.swap(pending_cancel_);
  }
  if (!cancel.has_value()) return;
  control::WindowController& windows = *windows_.load(std::memory_order_acquire);
  const std::string request =
      cancel->request_id != 0 ? "request " + std::to_string(cancel->request_id) : "periodic window";
  const control::WindowController::Cancelled done = windows.Cancel(
      cancel->word, now_ns, "cancelled by " + cancel->requested_by + " (lumos-ctl cancel)");
  std::string what;
  switch (done) {
    case control::WindowController::Cancelled::kDropped:
      NotifyCaptureSwitch(false);  // Armed turned CUPTI on; no window follows.
      what = request + ": cancelled while armed, by " + cancel->requested_by + "; no window";
      break;
    case control::WindowController::Cancelled::kEnded:
      // Closed by this pass as any window that ends (WindowPass: kClosing).
      what = request + ": ended early " + control::SecondsText(now_ns - windows.span().start_ns) +
             " into its window, by " + cancel->requested_by + "; its file is kept";
      break;
    case control::WindowController::Cancelled::kNothing:
      what = request + ": had ended before the cancel reached it, nothing cancelled";
      break;
  }
  LUMOS_LOG(Info, "lumos-ctl cancel: %s", what.c_str());
  std::lock_guard<std::mutex> lock(status_mutex_);
  last_cancel_ = what;
}

bool Agent::MaybeArm(int64_t now_ns) {
  control::WindowController& windows = *windows_.load(std::memory_order_acquire);
  const int64_t now_real = RealtimeNs();
  const int64_t real_to_mono = now_ns - now_real;  // Add to a realtime instant.
  std::optional<control::CaptureRequest> request;
  // Held until the request is armed (or refused): a cancel (ControlCancel) finds it waiting or
  // armed, never in between.
  std::unique_lock<std::mutex> request_lock(request_mutex_);
  request.swap(pending_request_);
  const int64_t fallback_ns = config_.window_ms > 0
                                  ? static_cast<int64_t>(config_.window_ms) * kNsPerMs
                                  : kDefaultTimedWindowNs;
  control::WindowPlan plan;
  if (request.has_value()) {
    const control::CaptureRequest& r = *request;
    plan.trigger = schema::WindowTrigger::kOnDemand;
    plan.iterations = r.iterations;
    plan.duration_ns = static_cast<int64_t>(r.duration_ms) * kNsPerMs;
    if (plan.iterations == 0 && plan.duration_ns == 0) {
      plan.iterations = config_.window_ms > 0 ? 0 : config_.window_iterations;
      plan.duration_ns = config_.window_ms > 0 ? fallback_ns : 0;
    }
    if (plan.duration_ns == 0) plan.duration_ns = fallback_ns;
    plan.not_before_ns = r.at_realtime_ns > 0 ? r.at_realtime_ns + real_to_mono : now_ns;
    plan.iteration_multiple = r.iteration_multiple;
    plan.window_realtime_ns = r.window_realtime_ns > 0 ? r.window_realtime_ns
                              : r.at_realtime_ns > 0   ? r.at_realtime_ns
                                                       : now_real;
    plan.request_id = r.request_id;
    plan.requested_by = "uid " + std::to_string(r.peer_uid) + " pid " + std::to_string(r.peer_pid) +
                        " (" + r.peer_comm + ")";
    plan.output_dir = r.output_dir;
    std::string target;
    if (r.at_realtime_ns > 0) target = "at " + control::WindowStamp(r.at_realtime_ns);
    if (r.iteration_multiple > 0) {
      if (!target.empty()) target += ", ";
      target += "iteration % " + std::to_string(r.iteration_multiple) + " == 0";
    }
    plan.target = target.empty() ? "next iteration" : target;
    if (r.at_realtime_ns > 0 && now_real - r.at_realtime_ns > kLateRequestNs) {
      plan.missed_at_arm = "the request reached this process " +
                           control::SecondsText(now_real - r.at_realtime_ns) +
                           " after its target time";
    }
  } else if (config_.mode == CaptureMode::kPeriodic) {
    const int64_t period_ns = static_cast<int64_t>(config_.period_ms) * kNsPerMs;
    const double jitter = static_cast<double>(config_.jitter_ppm) / 1e6;
    // A slot long gone (the previous window ran over it, the machine slept): the next one.
    if (now_real - next_periodic_realtime_ns_ > period_ns / 2) {
      next_periodic_realtime_ns_ =
          control::NextPeriodicStart(now_real, period_ns, jitter, config_.job_id);
    }
    const int64_t lead_ns = static_cast<int64_t>(config_.flush_interval_ms) * kNsPerMs;
    if (now_real < next_periodic_realtime_ns_ - lead_ns) return false;
    plan.trigger = schema::WindowTrigger::kPeriodic;
    plan.iterations = config_.window_ms > 0 ? 0 : config_.window_iterations;
    plan.duration_ns = fallback_ns;
    plan.not_before_ns = next_periodic_realtime_ns_ + real_to_mono;
    plan.window_realtime_ns = next_periodic_realtime_ns_;
    plan.target = "periodic slot at " + control::WindowStamp(next_periodic_realtime_ns_);
    next_periodic_realtime_ns_ =
        control::NextPeriodicStart(next_periodic_realtime_ns_, period_ns, jitter, config_.job_id);
  } else {
    return false;
  }
  control::KernelBoundaries* kernel = kernel_boundaries_.load(std::memory_order_acquire);
  if (plan.iterations > 0 || plan.iteration_multiple > 0) {
    plan.give_up_ns = std::max(plan.not_before_ns, now_ns) +
                      std::max(kGiveUpAfterNs, 4 * windows.iteration_period_ns());
    // No marker so far: boundaries may come from the kernel stream (CUPTI callbacks running).
    plan.kernel_boundaries = kernel != nullptr && !windows.marker_seen();
  }
  // CUPTI on first: a job thread may start the window the moment it is armed, and the window's
  // first kernels must be seen.
  NotifyCaptureSwitch(true);
  if (!windows.Arm(plan, now_ns)) {
    NotifyCaptureSwitch(false);
    return false;
  }
  if (kernel != nullptr) kernel->SetWanted(plan.kernel_boundaries);
  return true;
}

void Agent::OpenWindowFile() {
  control::WindowController& windows = *windows_.load(std::memory_order_acquire);
  const control::WindowPlan& plan = windows.plan();
  const std::string output = plan.output_dir.empty() ? trace_dir_ : plan.output_dir;
  control::RecoveryResult recovered = control::RecoverOrphans(output, host_name_);
  for (const std::string& path : recovered.recovered) {
    LUMOS_LOG(Info, "recovered the window file of a process that ended mid-window: %s",
              path.c_str());
  }
  const RankInfo rank = CurrentRank();
  const std::string name = TraceFileName(config_.job_id, host_name_, owner_pid_, rank);
  control::WindowPaths paths =
      control::MakeWindowPaths(output, config_.job_id, plan.window_realtime_ns, name);
  schema::HeaderInfo header = base_header_;
  FillHeaderRank(rank, &header);
  header.has_capture_window = true;
  header.capture_window =
      WindowEvent(plan, windows.span(), window_index_, IterationSource(windows), false);
  Status made = control::CreateWindowDirectory(paths.directory);
  StatusOr<std::unique_ptr<schema::TraceFileWriter>> writer =
      made.ok()
          ? schema::TraceFileWriter::Create(paths.partial_path, header, ToWriterOptions(config_))
          : StatusOr<std::unique_ptr<schema::TraceFileWriter>>(made);
  if (!writer.ok()) {
    // This window is lost (one line); the job and the next windows are not.
    LUMOS_LOG(Warn, "capture window %llu not written: %s",
              static_cast<unsigned long long>(window_index_), writer.status().message().c_str());
    window_open_failed_ = true;
    held_.clear();
    held_dropped_ = 0;
    return;
  }
  writer_ = std::move(writer).value();
  window_partial_path_ = paths.partial_path;
  window_final_path_ = paths.final_path;
  window_directory_ = paths.directory;
  described_threads_.clear();
  WriteClockSnapshot();
  RecordEncoder encoder(&strings_, writer_.get());
  for (const Record& communicator : communicators_) encoder.Add(communicator, nullptr);
  for (const std::string& detail : all_failures_) {
    writer_->Add(schema::LossEvent{windows.span().start_ns, 0, schema::LossSource::kChannelFailed,
                                   1, 0, detail});
  }
  for (const HeldRecord& held : held_) {
    encoder.Add(held.head, held.has_extension ? &held.extension : nullptr);
  }
  if (held_dropped_ > 0) {
    writer_->Add(schema::LossEvent{windows.span().start_ns, 0, schema::LossSource::kRingFull,
                                   held_dropped_, 0,
                                   "records of the window's first moments the writer could not "
                                   "hold before the file was open"});
  }
  held_.clear();
  held_dropped_ = 0;
}

void Agent::DrainBetweenWindows() {
  const control::WindowController& windows = *windows_.load(std::memory_order_acquire);
  int64_t start = windows.capture_start_ns();
  const bool hold = !window_open_failed_;
  auto keep = [&](const Record& head, const Record* extension) {
    if (head.kind == RecordKind::kCommunicator) {
      CacheCommunicator(head);
      return;
    }
    // Before the window: dropped. From its start on: held for its file. A window may start
    // during this drain (a job thread at its boundary): a record older than the start read so
    // far reads it again, else the window's first records, made after the start, were dropped.
    if (head.start_ns < start) start = windows.capture_start_ns();
    if (!hold || head.start_ns < start) return;
    if (held_.size() >= kMaxHeldRecords) {
      ++held_dropped_;
      return;
    }
    held_.push_back(
        HeldRecord{head, extension != nullptr ? *extension : Record{}, extension != nullptr});
  };
  ThreadRings* rings = owned_rings_.get();
  rings->DrainAll([&](const ThreadRing&, const Record& head,
                      const Record* extension) { keep(head, extension); },
                  kMaxDrainPerRing);
  (void)rings->CollectDrops();  // Not a window's loss.
  BetweenWindowsSink sink(
      &strings_,
      [](void* context, const Record& head, const Record* extension) {
        (*static_cast<decltype(keep)*>(context))(head, extension);
      },
      &keep);
  for (std::atomic<RecordSource*>& slot : sources_) {
    if (RecordSource* source = slot.load(std::memory_order_acquire)) source->Drain(sink);
  }
  for (int i = 0; i < static_cast<int>(CountedLoss::kCount); ++i) {
    (void)TakeLoss(static_cast<CountedLoss>(i));
  }
}

void Agent::CloseWindow() {
  control::WindowController& windows = *windows_.load(std::memory_order_acquire);
  if (writer_ == nullptr) {  // Its file could not be created: nothing to close.
    window_open_failed_ = false;
    held_.clear();
    held_dropped_ = 0;
    ++window_index_;
    windows.FinishClose();
    NotifyCaptureSwitch(false);
    return;
  }
  if (CaptureSwitch* s = capture_switch_.load(std::memory_order_acquire)) s->FlushForWindow();
  DrainOnce(SIZE_MAX);
  WriteClockSnapshot();
  const control::WindowSpan span = windows.span();
  writer_->Add(WindowEvent(windows.plan(), span, window_index_, IterationSource(windows), true));
  Status closed = writer_->Close(static_cast<uint64_t>(span.end_ns), CurrentTrailer());
  if (!closed.ok() && !writer_->warned()) {
    LUMOS_LOG(Warn, "closing capture window %llu failed: %s",
              static_cast<unsigned long long>(window_index_), closed.message().c_str());
  }
  if (outside_window_records_ > 0) {
    LUMOS_LOG(Info,
              "capture window %llu: %llu GPU records from before the window were not written "
              "(CUPTI buffers of the dormant time)",
              static_cast<unsigned long long>(window_index_),
              static_cast<unsigned long long>(outside_window_records_));
    outside_window_records_ = 0;
  }
  bytes_written_.fetch_add(writer_->stats().bytes_written, std::memory_order_relaxed);
  events_dropped_.fetch_add(writer_->stats().events_lost + held_dropped_,
                            std::memory_order_relaxed);
  writer_.reset();
  StatusOr<std::string> finished =
      control::FinishWindowFile(window_partial_path_, window_final_path_);
  std::string path = window_partial_path_;
  if (finished.ok()) {
    path = *finished;
  } else {
    LUMOS_LOG(Warn, "capture window %llu keeps its name %s: %s",
              static_cast<unsigned long long>(window_index_), window_partial_path_.c_str(),
              finished.status().message().c_str());
  }
  {
    std::lock_guard<std::mutex> lock(status_mutex_);
    last_window_path_ = path;
    last_window_end_realtime_ns_ = RealtimeNs();
  }
  windows_written_.fetch_add(1, std::memory_order_relaxed);
  if (config_.max_disk_bytes > 0) {
    const std::string output =
        windows.plan().output_dir.empty() ? trace_dir_ : windows.plan().output_dir;
    control::QuotaResult quota =
        control::EnforceDiskQuota(output, host_name_, config_.max_disk_bytes, window_directory_);
    if (quota.windows_deleted > 0) {
      LUMOS_LOG(Info, "LUMOS_MAX_DISK: deleted the %llu oldest windows (%llu bytes) in %s",
                static_cast<unsigned long long>(quota.windows_deleted),
                static_cast<unsigned long long>(quota.bytes_freed), output.c_str());
    }
    for (const std::string& error : quota.errors) {
      LUMOS_LOG(Warn, "LUMOS_MAX_DISK: %s", error.c_str());
    }
  }
  ++window_index_;
  windows.FinishClose();
  NotifyCaptureSwitch(false);
}

void Agent::FinishWindowsAtExit() {
  control::WindowController& windows = *windows_.load(std::memory_order_acquire);
  if (windows.EndForExit(MonotonicNowNs(), "the process ended during the window")) {
    if (writer_ == nullptr && !window_open_failed_) OpenWindowFile();
    CloseWindow();
  }
  if (endpoint_) endpoint_->Stop();
}

control::AgentStatus Agent::ControlStatus() {
  control::AgentStatus status;
  status.pid = owner_pid_;
  status.job = config_.job_id;
  status.host = host_name_;
  const RankInfo rank = CurrentRank();
  status.rank = rank.rank.value_or(-1);
  status.world_size = rank.world_size.value_or(-1);
  status.mode = std::string(CaptureModeName(config_.mode));
  const control::WindowController* windows = windows_.load(std::memory_order_acquire);
  if (stopped_.load(std::memory_order_acquire)) {
    status.state = "stopped";
  } else if (windows == nullptr) {
    status.state = "recording";
  } else {
    status.state = control::WindowStateName(windows->state());
  }
  if (windows != nullptr && windows->boundaries() > 0) {
    status.iteration = windows->last_iteration();
    status.iteration_known = true;
  }
  status.windows_written = windows_written_.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(status_mutex_);
    status.last_window = last_window_path_;
    status.last_window_end_realtime_ns = last_window_end_realtime_ns_;
    status.last_cancel = last_cancel_;
  }
  status.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  status.events_dropped = events_dropped_.load(std::memory_order_relaxed);
  return status;
}

std::string Agent::ControlCapture(const control::CaptureRequest& request) {
  if (!windowed()) {
    return "this process records continuously (LUMOS_MODE=continuous): it has no windows to "
           "start";
  }
  if (stopped_.load(std::memory_order_acquire)) return "the agent has stopped";
  const control::WindowController* windows = windows_.load(std::memory_order_acquire);
  if (windows == nullptr) return "the agent is not running";
  if (!request.output_dir.empty() && request.output_dir[0] != '/') {
    return "the output directory must be absolute: " + request.output_dir;
  }
  std::lock_guard<std::mutex> lock(request_mutex_);
  if (pending_request_.has_value()) {
    return "another request (id " + std::to_string(pending_request_->request_id) +
           ") is waiting to start";
  }
  const control::WindowState state = windows->state();
  if (state != control::WindowState::kDormant) {
    return std::string("a window is ") + control::WindowStateName(state) + " already";
  }
  pending_request_ = request;
  Wake();
  return "";
}

control::CancelReply Agent::ControlCancel(const control::CancelRequest& request) {
  control::CancelReply reply;
  if (!windowed()) {
    reply.what =
        "this process records continuously (LUMOS_MODE=continuous): it has no windows to cancel";
    return reply;
  }
  if (stopped_.load(std::memory_order_acquire)) {
    reply.what = "the agent has stopped";
    return reply;
  }
  const control::WindowController* windows = windows_.load(std::memory_order_acquire);
  if (windows == nullptr) {
    reply.what = "the agent is not running";
    return reply;
  }
  const std::string requested_by = "uid " + std::to_string(request.peer_uid) + " pid " +
                                   std::to_string(request.peer_pid) + " (" + request.peer_comm +
                                   ")";
  const std::string wanted =
      request.request_id != 0 ? "request " + std::to_string(request.request_id) : "";
  std::lock_guard<std::mutex> lock(request_mutex_);
  // A request the writer has not armed yet: dropped here, it never reaches the controller.
  if (pending_request_.has_value() &&
      (request.request_id == 0 || request.request_id == pending_request_->request_id)) {
    reply.what = "request " + std::to_string(pending_request_->request_id) +
                 ": cancelled before it was armed, by " + requested_by + "; no window";
    pending_request_.reset();
    reply.accepted = true;
    std::lock_guard<std::mutex> status_lock(status_mutex_);
    last_cancel_ = reply.what;
    return reply;
  }
  // The window armed or capturing now, and its request id (the same word before and after:
  // consistent; the writer arms at most once per pass, so a retry or two suffice).
  uint64_t word = 0, armed_id = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    word = windows->word();
    armed_id = windows->armed_request_id();
    if (windows->word() == word) break;
  }
  const control::WindowState state = control::WindowController::StateOfWord(word);
  const bool armed = state == control::WindowState::kArmed;
  const bool capturing =
      state == control::WindowState::kStarting || state == control::WindowState::kCapturing;
  const std::string window =
      armed_id != 0 ? "request " + std::to_string(armed_id) : std::string("a periodic window");
  if (!armed && !capturing) {
    reply.what = state == control::WindowState::kDormant
                     ? "no window is armed or capturing" +
                           (wanted.empty() ? std::string() : " (" + wanted + " is not here)")
                     : "the window (" + window + ") is closing already";
    return reply;
  }
  if (request.request_id != 0 && request.request_id != armed_id) {
    reply.what = std::string("the window ") + (armed ? "armed" : "capturing") + " is " + window +
                 ", not " + wanted + ": nothing cancelled";
    return reply;
  }
  pending_cancel_ = PendingCancel{word, armed_id, requested_by};
  Wake();
  reply.accepted = true;
  reply.what = window + (armed ? ": armed, dropped before it starts"
                               : ": capturing, ends now; its file is kept");
  return reply;
}

}  // namespace lumos::agent
