// Shared by the CUPTI channel tests: a RecordSink that keeps what it gets, a ChannelHost that
// records failures, and the real libcupti's table (a test that needs it fails when it is missing:
// it is part of the machine image, so its absence is a broken setup, not a reason to skip).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "agent/core/string_table.h"
#include "agent/core/thread_rings.h"
#include "agent/cupti/cupti_api.h"
#include "agent/cupti/cupti_channel.h"
#include "agent/runtime/record_source.h"

namespace lumos::agent::cupti::testing {

struct Event {
  Record head;
  bool has_extension = false;
  Record extension;
};

struct Loss {
  schema::LossSource source;
  uint64_t count;
  std::string detail;
};

class VectorSink : public RecordSink {
 public:
  void Add(const Record& head, const Record* extension) override {
    events.push_back({head, extension != nullptr, extension != nullptr ? *extension : Record{}});
  }
  void AddLoss(schema::LossSource source, uint64_t count, int64_t /*time_ns*/,
               std::string_view detail) override {
    losses.push_back({source, count, std::string(detail)});
  }
  StringTable& strings() override { return table; }

  StringTable table;
  std::vector<Event> events;
  std::vector<Loss> losses;
};

class FakeHost : public ChannelHost {
 public:
  FakeHost() {
    auto created = ThreadRings::Create(uint64_t{4} << 20, uint64_t{64} << 10);
    EXPECT_TRUE(created.ok());
    if (created.ok()) owned_rings = std::move(created).value();
    flag.Set(true);
  }
  const EnabledFlag& enabled() override { return flag; }
  ThreadRings* rings() override { return owned_rings.get(); }
  StringTable& strings() override { return table; }
  void ReportFailure(schema::Channel channel, std::string_view why) override {
    failures.emplace_back(channel, std::string(why));
  }
  bool AddRecordSource(RecordSource* source) override {
    sources.push_back(source);
    return true;
  }
  void SetSnapshotClock(int64_t (*read_ns)()) override { snapshot_clock = read_ns; }
  void SetCaptureSwitch(CaptureSwitch* capture_switch) override { switch_set = capture_switch; }

  EnabledFlag flag;
  std::unique_ptr<ThreadRings> owned_rings;
  StringTable table;
  std::vector<std::pair<schema::Channel, std::string>> failures;
  std::vector<RecordSource*> sources;
  int64_t (*snapshot_clock)() = nullptr;
  CaptureSwitch* switch_set = nullptr;
};

// The real libcupti.so.13 through the channel's own loader (ASSERT in the caller on ok()).
inline StatusOr<CuptiApi> LoadRealCupti() { return LoadCuptiApi(""); }

}  // namespace lumos::agent::cupti::testing
