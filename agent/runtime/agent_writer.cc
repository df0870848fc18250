// The writer thread: its loop (flush interval, eventfd wake-ups, signal requests, the close),
// the drain of the rings and record sources, thread descriptions and clock snapshots: the
// Agent's members declared under "Writer thread" in agent_runtime.h, and FlushFromSignal (a
// signal handler's request to it). Design there.
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/core/counted_loss.h"
#include "agent/core/record_encoding.h"
#include "agent/runtime/agent_runtime.h"
#include "agent/runtime/signal_flush.h"
#include "agent/runtime/writer_record_sink.h"

namespace lumos::agent {
namespace {

int64_t ReadClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

void* Agent::WriterThreadMain(void* agent) {
  static_cast<Agent*>(agent)->WriterLoop();
  return nullptr;
}

void Agent::WriterLoop() {
  pthread_setname_np(pthread_self(), "lumos-writer");
  // Signals go to the job's threads: their handler waits for this one.
  FlushOnSignals::BlockInThisThread();
  // A write past RLIMIT_FSIZE raises SIGXFSZ in the writing thread, which kills the process by
  // default. The writer keeps below the limit (trace_file_writer.h); should the job lower it
  // meanwhile, the write fails with EFBIG here and the signal stays pending in this thread.
  sigset_t file_size_signal;
  sigemptyset(&file_size_signal);
  sigaddset(&file_size_signal, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &file_size_signal, nullptr);
  const int interval_ms = static_cast<int>(config_.flush_interval_ms);
  FastClock& fast_clock = FastClock::Get();
  for (;;) {
    // The fast clock's first refinements come sooner than the flush interval (fast_clock.h).
    int timeout_ms = interval_ms;
    // A window armed or open: its timers and its file need the writer more often.
    if (const control::WindowController* windows = this->windows();
        windows != nullptr && windows->state() != control::WindowState::kDormant) {
      timeout_ms = std::min(timeout_ms, kWindowPassMs);
    }
    if (const int64_t refine_ns = fast_clock.NsUntilRefine(); refine_ns >= 0) {
      timeout_ms =
          static_cast<int>(std::min<int64_t>(interval_ms, (refine_ns + 999'999) / 1'000'000));
    }
    pollfd wake{wake_fd_, POLLIN, 0};
    poll(&wake, 1, timeout_ms);  // Timeout, wake-up or EINTR: all just mean "look again".
    uint64_t wakes = 0;
    while (read(wake_fd_, &wakes, sizeof(wakes)) == static_cast<ssize_t>(sizeof(wakes))) {
    }
    const int request = signal_request_.exchange(0, std::memory_order_acq_rel);
    // The close happens here, not in the thread calling Stop(): the job's exit waits for it
    // only so long (Stop), and every trace write stays in this thread (SIGXFSZ blocked).
    if (stop_requested_.load(std::memory_order_acquire)) {
      FinishTrace();
      if (request != 0) signal_served_.fetch_add(1, std::memory_order_release);
      return;
    }
    if (request == kSignalFinish) {
      FinishTrace();
      signal_served_.fetch_add(1, std::memory_order_release);
      return;
    }
    fast_clock.RefineIfDue();
    MaybeProbeDevices();
    if (windowed()) {
      WindowPass(ReadMonotonicNs(), request == kSignalFlush);
      if (request == kSignalFlush) signal_served_.fetch_add(1, std::memory_order_release);
      continue;
    }
    // A signal's flush writes out everything recorded so far (the job may end in its handler).
    DrainOnce(request == kSignalFlush ? SIZE_MAX : kMaxDrainPerRing);
    if (ReadMonotonicNs() - last_snapshot_ns_ >= static_cast<int64_t>(kClockSnapshotIntervalNs)) {
      WriteClockSnapshot();
    }
    // A failed write is counted as a LossRecord by the writer, which warns once itself.
    if (request == kSignalFlush) {
      writer_->Flush().IgnoreError();
      signal_served_.fetch_add(1, std::memory_order_release);
    } else {
      writer_->MaybeFlush(static_cast<uint64_t>(ReadMonotonicNs())).IgnoreError();
    }
  }
}

void Agent::Wake() {
  const uint64_t one = 1;
  // Fails only when the counter is about to overflow: the writer is awake then anyway.
  (void)!write(wake_fd_, &one, sizeof(one));
}

bool Agent::FlushFromSignal(bool finish, int64_t timeout_ns) {
  if (!started_.load(std::memory_order_acquire) || static_cast<uint32_t>(getpid()) != owner_pid_ ||
      stopped_.load(std::memory_order_acquire)) {
    return false;
  }
  const uint64_t target = signal_served_.load(std::memory_order_acquire) + 1;
  const int want = finish ? kSignalFinish : kSignalFlush;
  int current = signal_request_.load(std::memory_order_relaxed);
  while (current < want &&
         !signal_request_.compare_exchange_weak(current, want, std::memory_order_acq_rel)) {
  }
  Wake();
  const int64_t deadline = ReadMonotonicNs() + timeout_ns;
  const timespec pause{0, 1'000'000};
  while (signal_served_.load(std::memory_order_acquire) < target) {
    if (ReadMonotonicNs() >= deadline) return false;
    nanosleep(&pause, nullptr);
  }
  return true;
}

void Agent::DescribeNewThreads() {
  owned_rings_->ForEachRing([this](const ThreadRing& ring) {
    const uint32_t tid = ring.thread_id();
    if (tid == 0 || !described_threads_.insert(tid).second) return;
    // The kernel's name of the thread (pthread_setname_np, or the program's name): readable
    // from this thread, as long as the other one is alive. Empty when it is gone already.
    std::string name;
    std::string path = "/proc/self/task/" + std::to_string(tid) + "/comm";
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      char buffer[64];
      ssize_t n = read(fd, buffer, sizeof(buffer));
      close(fd);
      if (n > 0) name.assign(buffer, static_cast<size_t>(n));
      while (!name.empty() && (name.back() == '\n' || name.back() == '\0')) name.pop_back();
    }
    writer_->AddThread(schema::ThreadEvent{tid, name, owner_pid_});
  });
}

void Agent::DrainOnce(size_t max_per_ring) {
  DescribeNewThreads();
  {
    std::vector<std::string> failures;
    {
      std::lock_guard<std::mutex> lock(failures_mutex_);
      failures.swap(pending_failures_);
    }
    for (const std::string& detail : failures) {
      writer_->Add(
          schema::LossEvent{MonotonicNowNs(), 0, schema::LossSource::kChannelFailed, 1, 0, detail});
    }
    // Windowed: every later window file says so too.
    if (windowed()) all_failures_.insert(all_failures_.end(), failures.begin(), failures.end());
  }
  RecordEncoder encoder(&strings_, writer_.get());
  ThreadRings* rings = owned_rings_.get();
  const bool cache_communicators = windowed();
  rings->DrainAll(
      [&](const ThreadRing&, const Record& head, const Record* extension) {
        if (cache_communicators && head.kind == RecordKind::kCommunicator) CacheCommunicator(head);
        encoder.Add(head, extension);
      },
      max_per_ring);
  encoder.AddDrops(rings->CollectDrops());
  WriterRecordSink sink(&encoder, writer_.get(), &strings_);
  // A window's file holds its window: a source's records from before it started go.
  if (const control::WindowController* windows = windows_.load(std::memory_order_acquire)) {
    sink.SetNotBefore(windows->capture_start_ns());
  }
  for (std::atomic<RecordSource*>& slot : sources_) {
    if (RecordSource* source = slot.load(std::memory_order_acquire)) source->Drain(sink);
  }
  outside_window_records_ += sink.dropped_before();
  for (int i = 0; i < static_cast<int>(CountedLoss::kCount); ++i) {
    const uint64_t lost = TakeLoss(static_cast<CountedLoss>(i));
    if (lost == 0) continue;
    const CountedLossInfo& info = kCountedLossInfo[i];
    writer_->Add(schema::LossEvent{MonotonicNowNs(), 0, info.source, lost, 0, info.detail});
  }
}

void Agent::MaybeProbeDevices() {
  if (devices_known_) return;
  const DeviceProbe probe = device_probe_.load(std::memory_order_acquire);
  if (probe == nullptr) return;  // No cuInit yet: no driver to ask.
  // A driver that keeps failing (cuInit found no device) is asked every pass for the first ten,
  // then every sixteenth: a few dlsym look-ups each, off the job's threads, but not forever.
  if (++probe_attempts_ > 10 && probe_attempts_ % 16 != 0) return;
  ProcessDevices found;
  devices_known_ = probe(&found);
  process_devices_ = std::move(found);
  // Every window opened from now on names them in its header.
  base_header_.devices = process_devices_.devices;
  base_header_.cuda_runtime_version = process_devices_.cuda_runtime_version;
  base_header_.cuda_driver_version = process_devices_.cuda_driver_version;
  base_header_.nccl_version = process_devices_.nccl_version;
}

void Agent::WriteClockSnapshot() {
  // Monotonic first and again last would bracket realtime; one pair is enough at this
  // resolution (the vDSO reads are ~20 ns apart). The exact clock, never the TSC estimate: the
  // snapshots define the records' clock domain for readers.
  const int64_t monotonic = ReadMonotonicNs();
  const int64_t realtime = ReadClockNs(CLOCK_REALTIME);
  schema::ClockReading readings[] = {
      {schema::ClockId::kMonotonic, static_cast<uint64_t>(monotonic)},
      {schema::ClockId::kRealtime, static_cast<uint64_t>(realtime)},
      {}};
  size_t count = 2;
  if (int64_t(*extra)() = snapshot_clock_.load(std::memory_order_acquire)) {
    readings[count++] = {snapshot_clock_id_.load(std::memory_order_acquire),
                         static_cast<uint64_t>(extra())};
  }
  writer_->AddClockSnapshot(readings, count);
  last_snapshot_ns_ = monotonic;
}
}  // namespace lumos::agent
