// The channel's start-up decisions and its activity path, with a scripted fake CUPTI table
// (versions, subscriber conflicts, buffer callbacks) and with the real libcupti, which has no
// driver here (every enable/subscribe returns CUPTI_ERROR_UNKNOWN).
#include "agent/cupti/cupti_channel.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "agent/runtime/agent_runtime.h"
#include "tests/agent/cupti/cupti_test_support.h"

namespace lumos::agent::cupti {
namespace {

using testing::FakeHost;
using testing::VectorSink;

// The fake's script and what it saw. One channel at a time uses it.
struct FakeCupti {
  uint32_t version = CUPTI_API_VERSION;
  CUptiResult enable_result = CUPTI_SUCCESS;
  CUptiResult subscribe_result = CUPTI_SUCCESS;
  size_t dropped_per_buffer = 0;
  std::vector<CUpti_ActivityKind> enabled, disabled;
  int subscribes = 0, callbacks_enabled = 0, callbacks_disabled = 0, flushes = 0;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  CUpti_CallbackFunc callback = nullptr;
};
FakeCupti g_fake;

CUptiResult FakeGetVersion(uint32_t* version) {
  *version = g_fake.version;
  return CUPTI_SUCCESS;
}
CUptiResult FakeGetTimestamp(uint64_t* timestamp) {
  *timestamp = static_cast<uint64_t>(MonotonicNowNs()) + 1'000'000'000;
  return CUPTI_SUCCESS;
}
CUptiResult FakeEnable(CUpti_ActivityKind kind) {
  if (g_fake.enable_result == CUPTI_SUCCESS) g_fake.enabled.push_back(kind);
  return g_fake.enable_result;
}
CUptiResult FakeDisable(CUpti_ActivityKind kind) {
  g_fake.disabled.push_back(kind);
  return CUPTI_SUCCESS;
}
CUptiResult FakeRegister(CUpti_BuffersCallbackRequestFunc requested,
                         CUpti_BuffersCallbackCompleteFunc completed) {
  g_fake.requested = requested;
  g_fake.completed = completed;
  return CUPTI_SUCCESS;
}
CUptiResult FakeDropped(CUcontext, uint32_t, size_t* dropped) {
  *dropped = g_fake.dropped_per_buffer;
  return CUPTI_SUCCESS;
}
CUptiResult FakeFlushAll(uint32_t) {
  ++g_fake.flushes;
  return CUPTI_SUCCESS;
}
CUptiResult FakeSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void*) {
  ++g_fake.subscribes;
  g_fake.callback = callback;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(0x5);
  return g_fake.subscribe_result;
}
CUptiResult FakeUnsubscribe(CUpti_SubscriberHandle) { return CUPTI_SUCCESS; }
CUptiResult FakeEnableCallback(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                               CUpti_CallbackId) {
  ++(enable != 0 ? g_fake.callbacks_enabled : g_fake.callbacks_disabled);
  return CUPTI_SUCCESS;
}

class CuptiChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_fake = FakeCupti{};
    StatusOr<CuptiApi> real = testing::LoadRealCupti();
    ASSERT_TRUE(real.ok()) << "the real libcupti.so.13 is needed: " << real.status().message();
    real_ = real.value();
    fake_ = CuptiApi{};
    fake_.get_version = &FakeGetVersion;
    fake_.get_timestamp = &FakeGetTimestamp;
    fake_.get_result_string = real_.get_result_string;
    fake_.activity_enable = &FakeEnable;
    fake_.activity_disable = &FakeDisable;
    fake_.activity_register_callbacks = &FakeRegister;
    fake_.activity_get_next_record = real_.activity_get_next_record;  // Walks real buffers.
    fake_.activity_get_num_dropped_records = &FakeDropped;
    fake_.activity_flush_all = &FakeFlushAll;
    fake_.subscribe = &FakeSubscribe;
    fake_.unsubscribe = &FakeUnsubscribe;
    fake_.enable_callback = &FakeEnableCallback;
    fake_.library_path = "fake";
    config_.cupti_buffer_bytes = 64 << 10;
    config_.cupti_buffer_count = 2;
  }

  // Lines of stderr that carry a warning.
  static int WarningLines(const std::string& err) {
    int lines = 0;
    for (size_t at = err.find("CUPTI channel off"); at != std::string::npos;
         at = err.find("CUPTI channel off", at + 1)) {
      ++lines;
    }
    return lines;
  }

  CuptiApi real_, fake_;
  AgentConfig config_;
  FakeHost host_;
};

TEST_F(CuptiChannelTest, StartsActivityAndCallbacks) {
  CuptiChannel channel(fake_, &host_);
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(channel.Start(config_));
  EXPECT_EQ(WarningLines(::testing::internal::GetCapturedStderr()), 0);
  EXPECT_TRUE(channel.activity_running());
  EXPECT_TRUE(channel.callbacks_running());
  EXPECT_TRUE(host_.failures.empty());
  EXPECT_EQ(g_fake.enabled, (std::vector<CUpti_ActivityKind>{
                                CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
                                CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_CUDA_EVENT,
                                CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION}));
  EXPECT_EQ(g_fake.subscribes, 1);
  EXPECT_EQ(static_cast<size_t>(g_fake.callbacks_enabled), TracedApis().size());
  EXPECT_EQ(g_fake.callback, &HandleApiCallback);
  ASSERT_EQ(host_.sources.size(), 1u);
  EXPECT_EQ(host_.sources[0], &channel);
  ASSERT_NE(host_.snapshot_clock, nullptr);
  const int64_t cupti_now = host_.snapshot_clock();
  EXPECT_NEAR(static_cast<double>(cupti_now - MonotonicNowNs()), 1e9, 1e7);
  EXPECT_NEAR(static_cast<double>(channel.clock().offset_ns()), 1e9, 1e6);
}

// Windowed modes: the channel offers itself as the capture switch; off disables every activity
// kind and callback it enabled, on enables them again, and a window's flush is a forced one.
TEST_F(CuptiChannelTest, TheCaptureSwitchTurnsCollectionOffAndOn) {
  CuptiChannel channel(fake_, &host_);
  ASSERT_TRUE(channel.Start(config_));
  EXPECT_EQ(host_.switch_set, &channel);
  const std::vector<CUpti_ActivityKind> kinds = g_fake.enabled;
  const int callbacks = g_fake.callbacks_enabled;
  channel.SetCapturing(false);
  EXPECT_EQ(g_fake.disabled, kinds);
  EXPECT_EQ(g_fake.callbacks_disabled, callbacks);
  g_fake.enabled.clear();
  channel.SetCapturing(true);
  EXPECT_EQ(g_fake.enabled, kinds);
  EXPECT_EQ(g_fake.callbacks_enabled, 2 * callbacks);
  const int flushes = g_fake.flushes;
  channel.FlushForWindow();
  EXPECT_EQ(g_fake.flushes, flushes + 1);
}

TEST_F(CuptiChannelTest, BuffersFlowFromCuptiToTheWriterWithLosses) {
  g_fake.dropped_per_buffer = 3;
  CuptiChannel channel(fake_, &host_);
  ASSERT_TRUE(channel.Start(config_));
  ASSERT_NE(g_fake.requested, nullptr);
  // CUPTI asks for buffers; the pool has two, the third request is refused.
  uint8_t* buffers[3];
  size_t sizes[3], max_records[3];
  for (int i = 0; i < 3; ++i) g_fake.requested(&buffers[i], &sizes[i], &max_records[i]);
  EXPECT_NE(buffers[0], nullptr);
  EXPECT_EQ(sizes[0], 64u << 10);
  EXPECT_EQ(buffers[2], nullptr);
  EXPECT_EQ(sizes[2], 0u);
  // CUPTI fills one with a kernel (CUPTI time = monotonic + 1 s) and completes both.
  CUpti_ActivityKernel10 kernel{};
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  kernel.start = 1'000'000'000 + 5'000;
  kernel.end = 1'000'000'000 + 6'000;
  kernel.correlationId = 9;
  kernel.name = "k";
  std::memcpy(buffers[0], &kernel, sizeof(kernel));
  g_fake.completed(nullptr, 0, buffers[0], sizes[0], sizeof(kernel));
  g_fake.completed(nullptr, 0, buffers[1], sizes[1], 0);

  VectorSink sink;
  channel.Drain(sink);
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].head.kind, RecordKind::kKernel);
  EXPECT_EQ(sink.events[0].head.payload.kernel.correlation_id, 9u);
  // Converted with the measured offset (1 s, to within the bracket).
  EXPECT_NEAR(static_cast<double>(sink.events[0].head.start_ns), 5'000, 1e6);
  EXPECT_EQ(sink.events[0].head.end_ns - sink.events[0].head.start_ns, 1'000);
  ASSERT_EQ(sink.losses.size(), 2u);
  EXPECT_EQ(sink.losses[0].source, schema::LossSource::kCuptiDropped);
  EXPECT_EQ(sink.losses[0].count, 6u);  // 3 per completed buffer.
  EXPECT_EQ(sink.losses[1].source, schema::LossSource::kBufferPoolEmpty);
  EXPECT_EQ(sink.losses[1].count, 1u);
  EXPECT_EQ(channel.pool()->free_buffers(), 2u);  // Recycled.

  VectorSink again;
  channel.Drain(again);  // Nothing new: no events, no losses.
  EXPECT_TRUE(again.events.empty());
  EXPECT_TRUE(again.losses.empty());
  channel.FlushBeforeFinalDrain();
  channel.FlushBeforeFinalDrain();
  EXPECT_EQ(g_fake.flushes, 1);
}

TEST_F(CuptiChannelTest, VersionMismatchLeavesActivityOffAndCallbacksOn) {
  g_fake.version = CUPTI_API_VERSION + 100;
  CuptiChannel channel(fake_, &host_);
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(channel.Start(config_));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(WarningLines(err), 1) << err;
  EXPECT_NE(err.find(std::to_string(CUPTI_API_VERSION + 100)), std::string::npos) << err;
  EXPECT_FALSE(channel.activity_running());
  EXPECT_TRUE(channel.callbacks_running());
  EXPECT_TRUE(g_fake.enabled.empty());
  ASSERT_EQ(host_.failures.size(), 1u);
  EXPECT_EQ(host_.failures[0].first, schema::Channel::kCuptiActivity);
  EXPECT_TRUE(host_.sources.empty());
}

TEST_F(CuptiChannelTest, AnotherSubscriberGivesOneWarningAndActivityCarriesOn) {
  g_fake.subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  CuptiChannel channel(fake_, &host_);
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(channel.Start(config_));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(WarningLines(err), 1) << err;
  EXPECT_NE(err.find("another CUPTI subscriber"), std::string::npos) << err;
  EXPECT_TRUE(channel.activity_running());
  EXPECT_FALSE(channel.callbacks_running());
  ASSERT_EQ(host_.failures.size(), 1u);
  EXPECT_EQ(host_.failures[0].first, schema::Channel::kCuptiCallback);
  EXPECT_NE(host_.failures[0].second.find("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"),
            std::string::npos);
  EXPECT_EQ(g_fake.callbacks_enabled, 0);
}

TEST_F(CuptiChannelTest, OnlyTheChannelsAskedFor) {
  config_.channels = ChannelSet();
  config_.channels.Add(schema::Channel::kCuptiCallback);
  CuptiChannel channel(fake_, &host_);
  EXPECT_TRUE(channel.Start(config_));
  EXPECT_FALSE(channel.activity_running());
  EXPECT_TRUE(channel.callbacks_running());
  EXPECT_TRUE(g_fake.enabled.empty());
  EXPECT_TRUE(host_.failures.empty());
}

TEST_F(CuptiChannelTest, RealCuptiWithoutADriverDegradesWithOneWarning) {
  CuptiChannel channel(real_, &host_);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(channel.Start(config_));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(WarningLines(err), 1) << err;
  EXPECT_NE(err.find("CUPTI_ERROR_UNKNOWN (999)"), std::string::npos) << err;
  EXPECT_FALSE(channel.activity_running());
  EXPECT_FALSE(channel.callbacks_running());
  ASSERT_EQ(host_.failures.size(), 2u);
  EXPECT_EQ(host_.failures[0].first, schema::Channel::kCuptiActivity);
  EXPECT_NE(host_.failures[0].second.find("cuptiActivityEnable"), std::string::npos);
  EXPECT_EQ(host_.failures[1].first, schema::Channel::kCuptiCallback);
  EXPECT_NE(host_.failures[1].second.find("cuptiSubscribe"), std::string::npos);
  VectorSink sink;
  channel.Drain(sink);  // Harmless when off.
  EXPECT_TRUE(sink.events.empty());
  channel.FlushBeforeFinalDrain();  // No CUPTI call when activity never ran.
}

TEST(CuptiApiTest, LoadsTheRealLibraryAndNamesResults) {
  StatusOr<CuptiApi> api = LoadCuptiApi("");
  ASSERT_TRUE(api.ok()) << api.status().message();
  EXPECT_NE(api.value().library_path.find("libcupti"), std::string::npos);
  uint32_t version = 0;
  ASSERT_EQ(api.value().get_version(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version, static_cast<uint32_t>(CUPTI_API_VERSION));
  EXPECT_EQ(CuptiResultName(api.value(), CUPTI_ERROR_UNKNOWN), "CUPTI_ERROR_UNKNOWN (999)");
  EXPECT_EQ(CuptiResultName(CuptiApi{}, CUPTI_ERROR_UNKNOWN), "CUPTI_ERROR (999)");
  // A second load reuses the copy already in the process (RTLD_NOLOAD first).
  StatusOr<CuptiApi> again = LoadCuptiApi("/nonexistent/libcupti.so.13");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value().activity_get_next_record, api.value().activity_get_next_record);
}

}  // namespace
}  // namespace lumos::agent::cupti
