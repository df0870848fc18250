// Windowed capture inside one process (agent_windows.cc): the agent started in on-demand mode,
// a capture asked for through the control handler (what the endpoint calls for lumos-ctl), and
// iteration boundaries reported as the NVTX channel does. Checks the order of the CUPTI switch
// and the arming, a fork child's boundaries, and the exit during a window: the failures reported
// at the close reach the open window's file. The agent starts once per process: this binary's
// only test (ctest runs each test in a process of its own anyway).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "agent/control/window_controller.h"
#include "agent/runtime/agent_runtime.h"
#include "agent/runtime/capture_switch.h"
#include "agent/runtime/record_source.h"
#include "modeler/trace/trace_reader.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

using control::WindowState;

// Stands in for the CUPTI channel: says in which window state collection was turned on.
class RecordingSwitch : public CaptureSwitch {
 public:
  void SetCapturing(bool armed) override {
    if (!armed) return;
    const control::WindowController* windows = Agent::Get().windows();
    state_when_on.store(windows != nullptr ? static_cast<int>(windows->state()) : -1);
    turned_on.fetch_add(1);
  }
  void FlushForWindow() override {}

  std::atomic<int> state_when_on{-1};
  std::atomic<int> turned_on{0};
};

// Stands in for the CUPTI activity channel of the agent before issue 23: once a window is
// capturing, it hands over a buffer that filled while the agent was dormant (a record from
// before the window, one with no time) and one record of the window. Only the last may reach
// the window's file. And a CUDA event record of the window without a device timestamp (a CUPTI
// without cuptiActivityEnableCudaEventDeviceTimestamps): it has no time by design (its call
// has), and stays.
class StaleBufferSource : public RecordSource {
 public:
  void Drain(RecordSink& sink) override {
    const control::WindowController* windows = Agent::Get().windows();
    if (handed_over || windows == nullptr || windows->state() != WindowState::kCapturing) return;
    const int64_t start = windows->capture_start_ns();
    for (int64_t at : {int64_t{0}, start - 1'000'000, start + 1}) {
      Record record{};
      record.kind = RecordKind::kApiCall;
      record.start_ns = at;
      record.end_ns = at + 1;
      record.payload.api_call.correlation_id = 900;
      sink.Add(record, nullptr);
    }
    Record event{};
    event.kind = RecordKind::kCudaEventRecord;
    event.payload.cuda_event.correlation_id = 901;
    sink.Add(event, nullptr);
    handed_over = true;
  }
  std::atomic<bool> handed_over{false};
};

std::vector<std::string> FilesUnder(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> found;
  for (const std::string& stamp : ::lumos::testing::ListDir(dir)) {
    std::string window = dir;
    window.append("/").append(stamp);
    for (const std::string& name : ::lumos::testing::ListDir(window)) {
      if (name.size() >= suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        found.push_back(window);
        found.back().append("/").append(name);
      }
    }
  }
  return found;
}

TEST(AgentWindowsTest, ArmWindowForkAndExitMidWindow) {
  ::lumos::testing::TempDir dir;
  setenv("LUMOS_OUTPUT_DIR", dir.path().c_str(), 1);
  setenv("LUMOS_MODE", "on-demand", 1);
  setenv("LUMOS_JOB_ID", "windows-test", 1);
  setenv("LUMOS_FLUSH_INTERVAL_MS", "50", 1);
  setenv("LUMOS_CLOCK", "monotonic", 1);
  Agent& agent = Agent::Get();
  ASSERT_TRUE(agent.Start());
  control::WindowController* windows = agent.windows();
  ASSERT_NE(windows, nullptr);
  static RecordingSwitch capture_switch;  // Lives as long as the agent.
  agent.SetCaptureSwitch(&capture_switch);
  static StaleBufferSource stale_source;
  ASSERT_TRUE(agent.AddRecordSource(&stale_source));

  // A marker seen (so the window waits for its boundary), then a request for iteration 1000.
  windows->OnIterationBoundary(1, MonotonicNowNs());
  control::CaptureRequest request;
  request.request_id = 7;
  request.iterations = 2;
  request.iteration_multiple = 1000;
  ASSERT_EQ(agent.ControlCapture(request), "");
  ASSERT_TRUE(::lumos::testing::PollUntil(
      [&] { return windows->state() == WindowState::kArmed && capture_switch.turned_on > 0; }, 30));
  // Collection was on before the window could start: it used to be turned on after the
  // arming, so a window starting at once missed its first kernels.
  EXPECT_EQ(capture_switch.state_when_on.load(), static_cast<int>(WindowState::kDormant));

  // A fork child's matching boundary leaves the child's agent off (it used to open the gate:
  // the child recorded into rings nobody drains).
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Agent& forked = Agent::Get();
    forked.windows()->OnIterationBoundary(1000, MonotonicNowNs());
    _exit(forked.enabled().enabled() || forked.windows()->state() != WindowState::kDormant ? 1 : 0);
  }
  int child_status = 0;
  ASSERT_EQ(waitpid(child, &child_status, 0), child);
  ASSERT_TRUE(WIFEXITED(child_status));
  EXPECT_EQ(WEXITSTATUS(child_status), 0) << "the fork child's boundary opened its gate";

  // The window starts here; an API call inside it; the process ends while its file is open.
  windows->OnIterationBoundary(1000, MonotonicNowNs());
  ASSERT_EQ(windows->state(), WindowState::kCapturing);
  ASSERT_TRUE(agent.enabled().enabled());
  Record record{};
  record.kind = RecordKind::kApiCall;
  record.start_ns = MonotonicNowNs();
  record.end_ns = record.start_ns + 1;
  ASSERT_TRUE(agent.rings()->Push(record));
  const std::string job_dir = dir.path() + "/windows-test";
  ASSERT_TRUE(
      ::lumos::testing::PollUntil([&] { return FilesUnder(job_dir, ".partial").size() == 1; }, 30));
  ASSERT_TRUE(::lumos::testing::PollUntil([&] { return stale_source.handed_over.load(); }, 30));
  agent.Stop();
  EXPECT_FALSE(agent.enabled().enabled());

  const std::vector<std::string> files = FilesUnder(job_dir, ".pb.zst");
  ASSERT_EQ(files.size(), 1u);
  auto reader = modeler::TraceReader::Open(files[0]);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  int api_calls = 0, stale_calls = 0, event_records = 0;
  std::vector<std::string> failures;
  std::string missed;
  modeler::ReadResult result;
  Status status = (*reader)->ReadPackets(
      [&](const modeler::pb::TracePacket& packet, const modeler::PacketContext&) {
        if (packet.has_api_call()) {
          ++(packet.api_call().correlation_id() == 900 ? stale_calls : api_calls);
        }
        if (packet.has_cuda_event()) {
          EXPECT_EQ(packet.cuda_event().correlation_id(), 901u);
          ++event_records;
        }
        if (packet.has_loss() &&
            packet.loss().source() == modeler::pb::LOSS_SOURCE_CHANNEL_FAILED) {
          failures.push_back(packet.loss().detail());
        }
        if (packet.has_capture_window()) missed = packet.capture_window().missed_target();
        return Status::Ok();
      },
      &result);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(result.has_trailer);
  EXPECT_EQ(api_calls, 1);
  // Of the source's three records, only the one of the window (dropped: before its start, and
  // with no time).
  EXPECT_EQ(stale_calls, 1);
  EXPECT_EQ(event_records, 1);
  EXPECT_NE(missed.find("the process ended during the window"), std::string::npos) << missed;
  // No cuInit in this process: each CUPTI channel's CHANNEL_FAILED, reported at the close, is
  // in the window that was open then, once (it used to be in none).
  int no_injection = 0;
  for (const std::string& detail : failures) {
    no_injection += detail.find("CUDA injection never called") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(no_injection, 2) << ::testing::PrintToString(failures);
}

}  // namespace
}  // namespace lumos::agent
