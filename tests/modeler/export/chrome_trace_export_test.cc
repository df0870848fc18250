// The exporter end to end on traces written by the real writer: what lands where, in µs with
// ns kept, with rows that nest and flows that pair, byte for byte the same every time.
#include "modeler/export/chrome_trace_export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/modeler/export/export_test_util.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using export_test::Event;
using export_test::kBaseRelNs;
using export_test::ParsedTrace;
using ::lumos::testing::TempDir;

constexpr int64_t kUs = 1000;

std::string Export(const std::vector<std::string>& paths, ExportReport* report,
                   const ExportOptions& options = ExportOptions()) {
  std::string json;
  Status status = ExportChromeTrace(
      paths, options,
      [&](std::string_view chunk) {
        json.append(chunk);
        return Status::Ok();
      },
      report);
  EXPECT_TRUE(status.ok()) << status.message();
  return json;
}

class TwoRankExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    export_test::WriteTwoRankScenario(dir_.path());
    paths_ = {dir_.File("rank0.pb.zst"), dir_.File("rank1.pb.zst")};
    json_ = Export(paths_, &report_);
    ASSERT_TRUE(export_test::ParseTrace(json_, &trace_));
    stream7_ = trace_.Tid(1, "stream 7 (device 0)");
    stream13_ = trace_.Tid(1, "stream 13 (device 0)");
  }

  TempDir dir_;
  std::vector<std::string> paths_;
  ExportReport report_;
  std::string json_;
  ParsedTrace trace_;
  uint32_t stream7_ = 0, stream13_ = 0;
};

TEST_F(TwoRankExportTest, OneProcessPerRankWithNamedRowsInOrder) {
  EXPECT_EQ(trace_.process_names[1], "rank 0 \u00b7 node-a \u00b7 pid 4242");
  EXPECT_EQ(trace_.process_names[2], "rank 1 \u00b7 node-b \u00b7 pid 4343");
  EXPECT_EQ(trace_.process_names.size(), 2u);

  // pid 1: threads (by tid), its overflow row, streams (by id), NCCL, lumos.
  std::vector<std::string> names;
  std::map<int64_t, std::string> by_sort_index;
  for (const auto& [key, row] : trace_.rows) {
    if (key.first == 1) by_sort_index[row.sort_index] = row.name;
  }
  for (const auto& [index, name] : by_sort_index) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"main", "main (overlap 1)", "thread 101",
                                             "stream 7 (device 0)", "stream 13 (device 0)", "NCCL",
                                             "lumos"}));
  EXPECT_EQ(trace_.Tid(1, "main"), export_test::kMainThread);
  EXPECT_EQ(trace_.Tid(1, "thread 101"), export_test::kWorkerThread);
  // Rows without an OS thread get tids no OS thread has, unique across the export.
  std::set<uint32_t> synthetic;
  for (const auto& [key, row] : trace_.rows) {
    if (key.second != export_test::kMainThread && key.second != export_test::kWorkerThread &&
        key.second != export_test::kRank1Thread) {
      EXPECT_GE(key.second, 2'000'000'000u) << row.name;
      EXPECT_TRUE(synthetic.insert(key.second).second) << row.name;
    }
  }
}

TEST_F(TwoRankExportTest, GpuOpsLieOnTheirStreamWithArgs) {
  const Event& gemm = trace_.Slice("gemm", 1);
  EXPECT_EQ(gemm.ph, "X");
  EXPECT_EQ(gemm.cat, "kernel");
  EXPECT_EQ(gemm.tid, stream7_);
  EXPECT_EQ(gemm.ts_ns, kBaseRelNs + 3 * kUs);
  EXPECT_EQ(gemm.dur_ns, 6 * kUs);
  EXPECT_EQ(uint64_t(gemm.args["correlation"]), 1u);
  EXPECT_EQ(uint64_t(gemm.args["grid"].at(0)), 132u);
  EXPECT_EQ(uint64_t(gemm.args["block"].at(0)), 256u);
  EXPECT_EQ(uint64_t(gemm.args["registers_per_thread"]), 128u);

  const Event& copy = trace_.Slice("Memcpy HtoD 4.0 MB", 1);
  EXPECT_EQ(copy.tid, stream13_);
  EXPECT_EQ(copy.ts_ns, kBaseRelNs + 12 * kUs + 1);  // The odd ns survives.
  EXPECT_EQ(uint64_t(copy.args["bytes"]), 4u << 20);
  EXPECT_EQ(std::string_view(copy.args["kind"]), "HtoD");
  // "123468.790": origin-relative µs, three decimals, exact.
  EXPECT_NE(json_.find("\"ts\":123468.790,\"dur\":1.000"), std::string::npos);

  const Event& record = trace_.Slice("Event Record", 1);
  EXPECT_EQ(record.tid, stream7_);
  EXPECT_EQ(record.ts_ns, kBaseRelNs + 9 * kUs);
  EXPECT_EQ(record.dur_ns, 0);
  EXPECT_EQ(trace_.Slice("gemm_rank1", 2).tid, trace_.Tid(2, "stream 7 (device 0)"));
}

TEST_F(TwoRankExportTest, HostRangesNestAndAPartialOverlapMovesToAnOverflowRow) {
  const Event& forward = trace_.Slice("forward", 1);
  const Event& layer = trace_.Slice("layer1", 1);
  const Event& launch = *[&] {
    for (const Event& e : trace_.events) {
      if (e.name == "cudaLaunchKernel" && e.pid == 1 && e.tid == export_test::kMainThread) {
        return &e;
      }
    }
    return &forward;
  }();
  EXPECT_EQ(forward.tid, export_test::kMainThread);
  EXPECT_EQ(layer.tid, export_test::kMainThread);
  EXPECT_EQ(launch.name, "cudaLaunchKernel");
  EXPECT_EQ(launch.cat, "cuda_runtime");
  EXPECT_LE(forward.ts_ns, layer.ts_ns);
  EXPECT_LE(layer.ts_ns + layer.dur_ns, forward.ts_ns + forward.dur_ns);
  EXPECT_LE(layer.ts_ns, launch.ts_ns);
  EXPECT_LE(launch.ts_ns + launch.dur_ns, layer.ts_ns + layer.dur_ns);

  const Event& async = trace_.Slice("async-range", 1);
  EXPECT_EQ(async.tid, trace_.Tid(1, "main (overlap 1)"));
  EXPECT_EQ(async.ts_ns, kBaseRelNs + 8 * kUs);
  EXPECT_EQ(async.dur_ns, 6 * kUs);

  const Event& wait = trace_.Slice("Stream Wait Event", 1);
  EXPECT_EQ(wait.cat, "cuda_sync");
  EXPECT_EQ(wait.tid, export_test::kWorkerThread);
  EXPECT_EQ(uint64_t(wait.args["cuda_event_sync_id"]), 77u);
  EXPECT_TRUE(export_test::RowsNest(trace_));
}

TEST_F(TwoRankExportTest, CollectivesLossAndWindowsHaveTheirRows) {
  const Event& rank0 = trace_.Slice("AllReduce 25.2 MB", 1);
  EXPECT_EQ(rank0.tid, trace_.Tid(1, "NCCL"));
  EXPECT_EQ(rank0.ts_ns, kBaseRelNs + 16 * kUs);  // GPU time, not the host call.
  EXPECT_EQ(rank0.dur_ns, 5 * kUs);
  EXPECT_EQ(std::string_view(rank0.args["comm_id"]), "0x0000000000000abc");
  EXPECT_EQ(uint64_t(rank0.args["seq"]), 1u);
  EXPECT_EQ(uint64_t(rank0.args["count"]), export_test::kAllReduceBytes / 2);
  EXPECT_EQ(std::string_view(rank0.args["dtype"]), "Bfloat16");
  EXPECT_EQ(std::string_view(rank0.args["algorithm"]), "Ring");
  EXPECT_EQ(std::string_view(rank0.args["protocol"]), "Simple");
  EXPECT_EQ(std::string_view(rank0.args["time"]), "gpu");
  const Event& rank1 = trace_.Slice("AllReduce 25.2 MB", 2);
  EXPECT_EQ(rank1.tid, trace_.Tid(2, "NCCL"));
  EXPECT_EQ(rank1.ts_ns, kBaseRelNs + 17 * kUs);

  const Event& loss = trace_.Slice("Lost 3 events (RingFull)", 1);
  EXPECT_EQ(loss.ph, "i");
  EXPECT_EQ(loss.scope, "t");
  EXPECT_EQ(loss.tid, trace_.Tid(1, "lumos"));
  EXPECT_EQ(loss.ts_ns, kBaseRelNs + 20 * kUs);
  const Event& window = trace_.Slice("Capture window 0", 1);
  EXPECT_EQ(window.tid, trace_.Tid(1, "lumos"));
  EXPECT_EQ(window.dur_ns, 30 * kUs);
}

TEST_F(TwoRankExportTest, FlowsJoinLaunchesEventsAndRanks) {
  EXPECT_TRUE(export_test::FlowsPaired(trace_));
  EXPECT_EQ(trace_.Flows("launch").size(), 2u * 4);  // gemm, relu, the copy, gemm_rank1.
  EXPECT_EQ(trace_.Flows("cuda_event").size(), 2u * 2);
  EXPECT_EQ(trace_.Flows("collective").size(), 2u * 1);
  EXPECT_EQ(report_.flows, 7u);
  EXPECT_EQ(report_.flows_skipped, 0u);

  // Launch of gemm: from the call on the main thread to the kernel on stream 7.
  const Event& gemm = trace_.Slice("gemm", 1);
  bool launch_found = false;
  for (const Event* f : trace_.Flows("launch")) {
    if (f->ph != "f" || f->tid != stream7_ || f->pid != 1) continue;
    EXPECT_EQ(f->ts_ns, gemm.ts_ns);
    for (const Event* s : trace_.Flows("launch")) {
      if (s->ph == "s" && s->id == f->id) {
        EXPECT_EQ(s->tid, export_test::kMainThread);
        EXPECT_EQ(s->ts_ns, kBaseRelNs + 2 * kUs);
        launch_found = true;
      }
    }
  }
  EXPECT_TRUE(launch_found);

  // Record -> wait: from the cudaEventRecord call to the wait on the worker thread; record
  // (GPU time) -> relu, the first op queued on stream 13 after the wait.
  std::vector<std::pair<const Event*, const Event*>> pairs;
  for (const Event* s : trace_.Flows("cuda_event")) {
    if (s->ph != "s") continue;
    for (const Event* f : trace_.Flows("cuda_event")) {
      if (f->ph == "f" && f->id == s->id) pairs.push_back({s, f});
    }
  }
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].first->tid, export_test::kMainThread);
  EXPECT_EQ(pairs[0].first->ts_ns, kBaseRelNs + 6 * kUs);
  EXPECT_EQ(pairs[0].second->tid, export_test::kWorkerThread);
  EXPECT_EQ(pairs[0].second->ts_ns, kBaseRelNs + 7 * kUs);
  EXPECT_EQ(pairs[1].first->tid, stream7_);
  EXPECT_EQ(pairs[1].first->ts_ns, kBaseRelNs + 9 * kUs);
  EXPECT_EQ(pairs[1].second->tid, stream13_);
  EXPECT_EQ(pairs[1].second->ts_ns, trace_.Slice("relu", 1).ts_ns);

  // Collective: rank 1 arrived last; the arrow ends in rank 0's AllReduce when it did.
  std::vector<const Event*> collective = trace_.Flows("collective");
  ASSERT_EQ(collective.size(), 2u);
  const Event* s = collective[0]->ph == "s" ? collective[0] : collective[1];
  const Event* f = collective[0]->ph == "s" ? collective[1] : collective[0];
  EXPECT_EQ(s->pid, 2u);
  EXPECT_EQ(f->pid, 1u);
  EXPECT_EQ(f->tid, trace_.Tid(1, "NCCL"));
  EXPECT_EQ(s->ts_ns, kBaseRelNs + 17 * kUs);
  EXPECT_EQ(f->ts_ns, kBaseRelNs + 17 * kUs);

  // Ids are unique across ranks.
  std::set<uint64_t> ids;
  for (const Event& e : trace_.events) {
    if (e.ph == "s") {
      EXPECT_TRUE(ids.insert(e.id).second) << e.id;
    }
  }
}

TEST_F(TwoRankExportTest, FormatRulesAndMetadata) {
  EXPECT_TRUE(export_test::TimesHaveThreeDecimals(json_));
  EXPECT_TRUE(export_test::RowsNest(trace_));
  EXPECT_EQ(std::string_view(trace_.root["displayTimeUnit"]), "ns");
  simdjson::dom::element lumos = trace_.root["metadata"]["lumos"];
  EXPECT_EQ(std::string_view(lumos["time_origin_ns"]), "1700000000000000000");
  EXPECT_EQ(uint64_t(lumos["flows"]["launch"]), 4u);
  simdjson::dom::element file0 = lumos["files"].at(0);
  EXPECT_EQ(std::string_view(file0["host_name"]), "node-a");
  EXPECT_EQ(int64_t(file0["rank"]), 0);
  EXPECT_EQ(std::string_view(file0["devices"].at(0)["name"]), "NVIDIA H200");
  EXPECT_TRUE(bool(file0["closed_cleanly"]));
  EXPECT_EQ(report_.files.size(), 2u);
  EXPECT_FALSE(report_.damaged());
  EXPECT_EQ(report_.bytes, json_.size());
  EXPECT_EQ(json_.back(), '\n');
}

TEST_F(TwoRankExportTest, SameInputGivesTheSameBytes) {
  ExportReport again;
  EXPECT_EQ(Export(paths_, &again), json_);
  // And through a file.
  std::string out = dir_.File("out.json");
  ASSERT_TRUE(ExportChromeTraceFile(paths_, ExportOptions(), out, &again).ok());
  EXPECT_EQ(::lumos::testing::ReadFileBytes(out), json_);
}

TEST_F(TwoRankExportTest, NoFlowsOptionWritesNoFlowEvents) {
  ExportOptions options;
  options.flows = false;
  ExportReport report;
  ParsedTrace trace;
  ASSERT_TRUE(export_test::ParseTrace(Export(paths_, &report, options), &trace));
  // Slices, instants and counters (counter_tracks.h); no flow events.
  for (const Event& e : trace.events) {
    EXPECT_TRUE(e.ph == "X" || e.ph == "i" || e.ph == "C") << e.ph;
  }
  EXPECT_EQ(report.flows, 0u);
  EXPECT_EQ(report.events, report_.events);
}

TEST(ChromeTraceExportTest, DamagedTailExportsTheIntactPartAndReportsIt) {
  TempDir dir;
  ::lumos::testing::WriteSampleTrace(dir.File("t.pb.zst"), 3000, /*frame_bytes=*/8192);
  std::string bytes = ::lumos::testing::ReadFileBytes(dir.File("t.pb.zst"));
  ::lumos::testing::WriteFileBytes(dir.File("cut.pb.zst"), bytes.substr(0, bytes.size() * 2 / 3));

  ExportReport report;
  std::string json = Export({dir.File("cut.pb.zst")}, &report);
  ASSERT_TRUE(report.damaged());
  EXPECT_NE(report.files[0].damage.message().find("cut.pb.zst: byte offset "), std::string::npos)
      << report.files[0].damage.message();
  ParsedTrace trace;
  ASSERT_TRUE(export_test::ParseTrace(json, &trace));
  EXPECT_GT(report.events, 1000u);
  EXPECT_LT(report.events, 6000u);
  EXPECT_TRUE(export_test::RowsNest(trace));
  EXPECT_TRUE(export_test::FlowsPaired(trace));
  std::string_view damage = trace.root["metadata"]["lumos"]["files"].at(0)["damage"];
  EXPECT_NE(damage.find("byte offset"), std::string::npos);
  EXPECT_FALSE(bool(trace.root["metadata"]["lumos"]["files"].at(0)["closed_cleanly"]));
}

TEST(ChromeTraceExportTest, UnreadableInputFailsAndLeavesTheOutputAlone) {
  TempDir dir;
  ::lumos::testing::WriteFileBytes(dir.File("bad.pb.zst"), "{\"traceEvents\": []}");
  ::lumos::testing::WriteFileBytes(dir.File("out.json"), "previous");
  ExportReport report;
  ExportOptions options;
  options.force = true;  // "previous" is not an export: only --force lets it be replaced.
  Status status =
      ExportChromeTraceFile({dir.File("bad.pb.zst")}, options, dir.File("out.json"), &report);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("not a Lumos trace"), std::string::npos) << status.message();
  EXPECT_EQ(::lumos::testing::ReadFileBytes(dir.File("out.json")), "previous");
  // No temporary file left either: only the two files of the test.
  EXPECT_EQ(::lumos::testing::ListDir(dir.path()).size(), 2u);
}

// One input that is no trace among good ones is skipped by name, the others exported (as
// inspect and replay do); the report says which.
TEST(ChromeTraceExportTest, AnInputThatCannotBeOpenedIsSkippedAndTheOthersExported) {
  TempDir dir;
  export_test::WriteTwoRankScenario(dir.path());
  ::lumos::testing::WriteFileBytes(dir.File("bad.pb.zst"), "{\"traceEvents\": []}");
  ExportReport report;
  std::string json =
      Export({dir.File("bad.pb.zst"), dir.File("rank0.pb.zst"), dir.File("rank1.pb.zst")}, &report);
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_EQ(
      report.skipped[0].rfind(dir.File("bad.pb.zst") + ": byte offset 0: not a Lumos trace", 0), 0u)
      << report.skipped[0];
  EXPECT_TRUE(report.damaged());
  ASSERT_EQ(report.files.size(), 2u);
  EXPECT_EQ(report.files[0].path, dir.File("rank0.pb.zst"));
  EXPECT_TRUE(report.files[0].closed);
  ParsedTrace trace;
  ASSERT_TRUE(export_test::ParseTrace(json, &trace));
  EXPECT_EQ(trace.process_names.size(), 2u);
}

TEST(ChromeTraceExportTest, ASinkErrorFailsTheExport) {
  TempDir dir;
  ::lumos::testing::WriteSampleTrace(dir.File("t.pb.zst"), 20000);
  ExportReport report;
  int calls = 0;
  Status status = ExportChromeTrace(
      {dir.File("t.pb.zst")}, ExportOptions(),
      [&](std::string_view) {
        ++calls;
        return Status::Error("disk full");
      },
      &report);
  EXPECT_EQ(status.message(), "disk full");
  EXPECT_EQ(calls, 1);  // The first error stops the export.
}

// Counter tracks (counter_tracks.h): rank 1's all-reduce starts 1 µs after rank 0's, so its
// "arrival late by" is 1 µs from its start to its end; rank 0 arrived first (0). Busy shares
// lie in [0, 1]; the launch queue never goes below 0 and ends empty.
TEST_F(TwoRankExportTest, CounterTracksShowArrivalBusyAndQueue) {
  std::map<std::pair<uint32_t, std::string>, std::vector<std::pair<int64_t, double>>> counters;
  for (const Event& e : trace_.events) {
    if (e.ph != "C") continue;
    double value = -1;
    for (auto field : simdjson::dom::object(e.args)) {
      ASSERT_EQ(field.value.get_double().get(value), simdjson::SUCCESS);
    }
    counters[{e.pid, e.name}].emplace_back(e.ts_ns, value);
  }
  const auto& late1 = counters[{2, "arrival late by"}];
  ASSERT_EQ(late1.size(), 2u);
  EXPECT_EQ(late1[0], std::make_pair(kBaseRelNs + 17 * kUs, 1.0));
  EXPECT_EQ(late1[1], std::make_pair(kBaseRelNs + 21 * kUs, 0.0));
  const auto& late0 = counters[{1, "arrival late by"}];
  ASSERT_EQ(late0.size(), 1u);
  EXPECT_EQ(late0[0], std::make_pair(kBaseRelNs + 16 * kUs, 0.0));
  for (uint32_t pid : {1u, 2u}) {
    const auto& busy = counters[{pid, "GPU busy"}];
    ASSERT_FALSE(busy.empty()) << pid;
    for (const auto& [ts, share] : busy) {
      EXPECT_GE(share, 0.0);
      EXPECT_LE(share, 1.0);
    }
    EXPECT_GT(busy.front().second, 0.0);  // The first bin holds the first op.
    EXPECT_EQ(busy.back().second, 0.0);
    const auto& queue = counters[{pid, "launch queue"}];
    ASSERT_FALSE(queue.empty()) << pid;
    for (const auto& [ts, depth] : queue) EXPECT_GE(depth, 0.0);
    EXPECT_GE(queue.front().second, 1.0);
    EXPECT_EQ(queue.back().second, 0.0);
  }
}

}  // namespace
}  // namespace lumos::modeler
