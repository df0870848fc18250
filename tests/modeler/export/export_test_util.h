// Test support for the Chrome trace exporter: a two-rank scenario written with the real trace
// writer (every time and id below is what the export must show), and a checker that parses the
// exported JSON with simdjson and verifies what Perfetto relies on: rows that nest, flow events
// that pair up and land inside a slice, ts/dur printed with exactly three decimals.
#pragma once

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lumos::modeler::export_test {

// Absolute start of the scenario: an odd ns count, so the export must keep every digit.
// The export's origin is this rounded down to the second.
inline constexpr int64_t kBaseNs = 1'700'000'000'123'456'789;
inline constexpr int64_t kOriginNs = 1'700'000'000'000'000'000;
inline constexpr int64_t kBaseRelNs = kBaseNs - kOriginNs;  // 123'456'789

inline constexpr uint32_t kMainThread = 100;    // Rank 0, named "main" by a ThreadInfo.
inline constexpr uint32_t kWorkerThread = 101;  // Rank 0, unnamed.
inline constexpr uint32_t kRank1Thread = 200;
inline constexpr uint64_t kCommId = 0xabc;
inline constexpr uint64_t kAllReduceBytes = 26424115;  // 25.2 MiB.

// Writes dir/rank0.pb.zst and dir/rank1.pb.zst. Rank 0: two threads; streams 7 and 13; nested
// NVTX ranges forward [0,10 µs] > layer1 [1,6 µs] > the launch of "gemm" (corr 1); an NVTX
// start/end range [8,14 µs] that partially overlaps forward; cudaEventRecord (corr 2, sync id
// 77, GPU time 9 µs on stream 7) waited for by stream 13 (SyncEvent at 7 µs on the worker
// thread) before "relu" (corr 4); a 4 MiB HtoD copy (corr 5); an AllReduce (GPU [16,21] µs);
// a loss record; a capture window. Rank 1: one launch and the same AllReduce, GPU [17,21] µs.
// Offsets are from kBaseNs.
void WriteTwoRankScenario(const std::string& dir);

struct Event {
  std::string ph, cat, name, bp, scope;
  uint32_t pid = 0;
  uint32_t tid = 0;
  int64_t ts_ns = -1;   // Relative to the origin, from µs.
  int64_t dur_ns = -1;  // X events only.
  uint64_t id = 0;      // Flow events only.
  simdjson::dom::element args;
};

struct Row {
  std::string name;
  int64_t sort_index = -1;
};

struct ParsedTrace {
  std::unique_ptr<simdjson::dom::parser> parser = std::make_unique<simdjson::dom::parser>();
  simdjson::dom::element root;
  std::vector<Event> events;  // All but metadata ("M") events, in file order.
  std::map<uint32_t, std::string> process_names;
  std::map<std::pair<uint32_t, uint32_t>, Row> rows;  // (pid, tid) -> thread metadata.

  // The only slice or instant called `name` (fails the test when there is not exactly one).
  const Event& Slice(const std::string& name, uint32_t pid) const;
  std::vector<const Event*> Flows(const std::string& category) const;
  // tid of the row of `pid` called `name`, 0 if none.
  uint32_t Tid(uint32_t pid, const std::string& name) const;
};

::testing::AssertionResult ParseTrace(const std::string& json, ParsedTrace* trace);

// Every row: slices sorted by (ts, longer first) either follow or lie inside one another.
::testing::AssertionResult RowsNest(const ParsedTrace& trace);

// Every flow id has one "s" and one "f" (same cat and name, "f" binds to the enclosing slice),
// the "f" is not before the "s", and each end lies inside a slice of its own row.
::testing::AssertionResult FlowsPaired(const ParsedTrace& trace);

// Every "ts" and "dur" in the text is a decimal with exactly three fractional digits.
::testing::AssertionResult TimesHaveThreeDecimals(const std::string& json);

}  // namespace lumos::modeler::export_test
