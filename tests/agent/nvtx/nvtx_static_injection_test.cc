// The NVTX channel in-process, through NVTX's static injection (a strong
// InitializeInjectionNvtx2_fnptr), so the hot path and the writer thread run under the
// sanitizers too (the lumos-run tests cannot: they LD_PRELOAD the agent). The agent starts and
// stops once per process, hence one test case in a binary of its own.
// clang-format off
#include <cstdint>
// NVTX's static-injection pointer, defined below; declared first because NVTX's implementation
// refers to it, and NVTX_STATIC_INJECTION_IMPL makes NVTX skip its own weak definition.
extern "C" int (*InitializeInjectionNvtx2_fnptr)(const void* (*)(uint32_t));
#define NVTX_STATIC_INJECTION_IMPL
#include <nvtx3/nvToolsExt.h>
// clang-format on
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "agent/nvtx/nvtx_injection.h"
#include "agent/runtime/agent_runtime.h"
#include "modeler/trace/trace_reader.h"
#include "tests/testing/sample_trace.h"

extern "C" {
// NOLINTNEXTLINE(bugprone-reserved-identifier): NVTX's documented static-injection symbol.
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr =
    &lumos::agent::InitializeNvtxInjection;
}

namespace lumos::agent {
namespace {

constexpr int kThreads = 4;
constexpr int kIterations = 500;
constexpr int kHandedOff = 64;

TEST(NvtxStaticInjectionTest, RecordsRangesFromManyThreads) {
  lumos::testing::TempDir dir;
  // The agent reads its environment once, at the first NVTX call below.
  setenv("LUMOS_OUTPUT_DIR", dir.path().c_str(), 1);
  setenv("LUMOS_FLUSH_INTERVAL_MS", "10", 1);
  setenv("LUMOS_JOB_ID", "static", 1);

  std::vector<nvtxRangeId_t> handed_off;
  handed_off.reserve(kHandedOff);
  for (int i = 0; i < kHandedOff; ++i) handed_off.push_back(nvtxRangeStartA("handed-off"));
  ASSERT_FALSE(Agent::Get().trace_path().empty());
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &handed_off] {
      for (int i = 0; i < kIterations; ++i) {
        nvtxRangePushA("step");
        nvtxRangePushA("a-name-longer-than-twenty-four-bytes");
        nvtxMarkA("tick");
        nvtxRangePop();
        nvtxRangePop();
        nvtxRangePop();  // Unbalanced.
      }
      for (int i = t; i < kHandedOff; i += kThreads) nvtxRangeEnd(handed_off[i]);
      nvtxRangeEnd(handed_off[t]);  // Ended twice: ignored.
    });
  }
  for (std::thread& thread : threads) thread.join();

  // Start/end churn: every range is ended by its own thread, then again by all threads (double
  // ends racing each other), and ids a whole slot table back are ended once more while other
  // threads start ranges in those very slots: late ends must neither record nor race with the
  // new starts (TSan build: build-agent-tsan).
  constexpr size_t kChurn = 3 * kStartEndSlots;
  std::vector<std::atomic<nvtxRangeId_t>> churn(kChurn);
  threads.clear();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &churn] {
      for (size_t i = static_cast<size_t>(t); i < kChurn; i += kThreads) {
        nvtxRangeId_t id = nvtxRangeStartA("churn");
        churn[i].store(id, std::memory_order_relaxed);
        nvtxRangeEnd(id);
        for (size_t back = 1; back <= 8 && back <= i; ++back) {
          nvtxRangeEnd(churn[i - back].load(std::memory_order_relaxed));
        }
        if (i >= kStartEndSlots) {
          nvtxRangeEnd(churn[i - kStartEndSlots].load(std::memory_order_relaxed));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  // The wide-character calls: recorded like the A ones, names as UTF-8, and a W push pops in
  // step with the A push around it.
  nvtxRangePushA("outer-a");
  nvtxRangePushW(L"inner-w-\u00fc");
  nvtxMarkW(L"mark-w-\u20ac");
  nvtxRangeEnd(nvtxRangeStartW(L"start-w"));
  nvtxRangePop();
  nvtxRangePop();
  nvtxDomainHandle_t wide_domain = nvtxDomainCreateW(L"wide-domain");
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attributes.message.registered = nvtxDomainRegisterStringW(wide_domain, L"registered-w");
  nvtxDomainRangePushEx(wide_domain, &attributes);
  nvtxDomainRangePop(wide_domain);
  attributes.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  attributes.message.unicode = L"unicode-attributes";
  nvtxDomainMarkEx(wide_domain, &attributes);
  // What another channel does when it cannot start (here a stand-in report: no CUPTI in this
  // test), and its clock in the final snapshot.
  Agent::Get().ReportChannelFailure(schema::Channel::kCuptiActivity, "stand-in failure");
  Agent::Get().SetSnapshotClock(schema::ClockId::kCupti, [] { return int64_t{42}; });
  const std::string path = Agent::Get().trace_path();
  Agent::Get().Stop();
  // After Stop the handlers are still installed but record nothing.
  nvtxRangePushA("after-stop");
  nvtxRangePop();
  nvtxMarkA("after-stop");

  std::map<int, int> kinds;
  std::map<std::string, int> names;
  int handed_off_other_thread = 0;
  std::map<std::string, uint64_t> lost;  // LossRecord counts by detail.
  int channel_failures = 0, cupti_readings = 0;
  modeler::ReadResult result;
  auto reader = modeler::TraceReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->header().job_id(), "static");
  Status status = (*reader)->ReadPackets(
      [&](const modeler::pb::TracePacket& packet, const modeler::PacketContext& context) {
        if (packet.has_loss()) lost[packet.loss().detail()] += packet.loss().count();
        if (packet.has_loss() &&
            packet.loss().source() == modeler::pb::LOSS_SOURCE_CHANNEL_FAILED) {
          ++channel_failures;
        }
        if (packet.has_clock_snapshot()) {
          for (const auto& reading : packet.clock_snapshot().reading()) {
            if (reading.clock_id() == modeler::pb::CLOCK_ID_CUPTI && reading.value_ns() == 42) {
              ++cupti_readings;
            }
          }
        }
        if (!packet.has_nvtx()) return Status::Ok();
        ++kinds[packet.nvtx().kind()];
        const std::string name(context.String(packet.nvtx().name_iid()));
        ++names[name];
        // (A churn range may be ended by another thread first: that is fine.)
        if (name == "handed-off" && packet.nvtx().end_thread_id() != 0) {
          ++handed_off_other_thread;
        }
        return Status::Ok();
      },
      &result);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(result.has_trailer);
  // A churn start finds its slot busy only when the range 4096 ids before it is still open,
  // i.e. its thread was preempted between start and end: that range is counted as lost, never
  // dropped silently. Nothing else may be lost.
  const uint64_t churn_lost = lost["NVTX start/end ranges beyond 4096 in flight"];
  lost.erase("NVTX start/end ranges beyond 4096 in flight");
  EXPECT_EQ(lost["cupti_activity: stand-in failure"], 1u);
  // No cuInit here: both CUPTI channels are also recorded as never started (at the close).
  const size_t never_started = std::erase_if(lost, [](const auto& loss) {
    return loss.first.find(": CUDA injection never called") != std::string::npos;
  });
  EXPECT_EQ(never_started, 2u);
  EXPECT_EQ(channel_failures, 3);
  EXPECT_EQ(cupti_readings, 1);  // The final snapshot at Stop().
  lost.erase("cupti_activity: stand-in failure");
  EXPECT_TRUE(lost.empty()) << lost.begin()->first;
  EXPECT_EQ(kinds[modeler::pb::NVTX_KIND_PUSH_POP], 2 * kThreads * kIterations + 3);
  EXPECT_EQ(kinds[modeler::pb::NVTX_KIND_MARK], kThreads * kIterations + 2);
  EXPECT_EQ(kinds[modeler::pb::NVTX_KIND_START_END], kHandedOff + names["churn"] + 1);
  for (const char* wide : {"outer-a", "inner-w-\xc3\xbc", "mark-w-\xe2\x82\xac", "start-w",
                           "registered-w", "unicode-attributes"}) {
    EXPECT_EQ(names[wide], 1) << wide;
  }
  EXPECT_EQ(handed_off_other_thread, kHandedOff);
  EXPECT_EQ(names["a-name-longer-than-twent..."], kThreads * kIterations);
  EXPECT_EQ(names["after-stop"], 0);
  // Each churn range exactly once, or counted as lost.
  EXPECT_EQ(static_cast<uint64_t>(names["churn"]) + churn_lost, kChurn);
  EXPECT_LE(churn_lost, kChurn / 100);
}

}  // namespace
}  // namespace lumos::agent
