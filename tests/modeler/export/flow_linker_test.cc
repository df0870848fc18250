// How flow arrows are joined in the cases the two-rank scenario does not cover: imported
// traces (record correlation instead of sync id), a CUDA event recorded again and again, a
// graph launch with many kernels, arrows that would point back in time, and the placement of
// syncs whose thread is unknown.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "base/logging.h"
#include "modeler/export/chrome_trace_export.h"
#include "schema/writer/trace_file_writer.h"
#include "tests/modeler/export/export_test_util.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

namespace a = ::lumos::schema;
using export_test::Event;
using export_test::ParsedTrace;
using schema::ApiKind;

constexpr int64_t kT0 = 5'000'000'000;  // 5 s: the origin is then exactly 5 s.

a::ApiCallEvent Call(int64_t start, uint32_t thread, uint64_t corr, ApiKind kind,
                     std::string_view name, uint64_t stream = 0) {
  a::ApiCallEvent e;
  e.start_ns = kT0 + start;
  e.duration_ns = 100;
  e.thread_id = thread;
  e.correlation_id = corr;
  e.kind = kind;
  e.name = name;
  e.stream_id = stream;
  return e;
}

a::KernelEvent Kernel(int64_t start, uint64_t corr, uint64_t stream, std::string_view name) {
  a::KernelEvent k;
  k.start_ns = kT0 + start;
  k.duration_ns = 200;
  k.correlation_id = corr;
  k.stream_id = stream;
  k.name = name;
  return k;
}

a::SyncEvent Wait(int64_t start, uint64_t corr, uint64_t stream, uint64_t sync_id,
                  uint64_t record_corr, uint32_t thread) {
  a::SyncEvent s;
  s.start_ns = kT0 + start;
  s.duration_ns = 50;
  s.sync_type = schema::SyncType::kStreamWaitEvent;
  s.correlation_id = corr;
  s.stream_id = stream;
  s.cuda_event_sync_id = sync_id;
  s.event_record_correlation_id = record_corr;
  s.thread_id = thread;
  return s;
}

class FlowLinkerTest : public ::testing::Test {
 protected:
  std::unique_ptr<a::TraceFileWriter> NewTrace() {
    auto writer = a::TraceFileWriter::Create(dir_.File("t.pb.zst"),
                                             ::lumos::testing::SampleHeader(), a::WriterOptions());
    LUMOS_CHECK(writer.ok());
    return std::move(writer).value();
  }

  void ExportAndParse(std::unique_ptr<a::TraceFileWriter> writer) {
    ASSERT_TRUE(writer->Close(kT0 + 1'000'000).ok());
    Status status = ExportChromeTrace(
        {dir_.File("t.pb.zst")}, ExportOptions(),
        [&](std::string_view chunk) {
          json_.append(chunk);
          return Status::Ok();
        },
        &report_);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_TRUE(export_test::ParseTrace(json_, &trace_));
    ASSERT_TRUE(export_test::FlowsPaired(trace_));
    ASSERT_TRUE(export_test::RowsNest(trace_));
  }

  std::string RowOf(const Event& e) { return trace_.rows[{e.pid, e.tid}].name; }

  // (start row name, start ts, end row name, end ts) of every arrow of `category`.
  std::vector<std::tuple<std::string, int64_t, std::string, int64_t>> Arrows(
      const std::string& category) {
    std::vector<std::tuple<std::string, int64_t, std::string, int64_t>> arrows;
    for (const Event* s : trace_.Flows(category)) {
      if (s->ph != "s") continue;
      for (const Event* f : trace_.Flows(category)) {
        if (f->ph == "f" && f->id == s->id) {
          arrows.emplace_back(RowOf(*s), s->ts_ns, RowOf(*f), f->ts_ns);
        }
      }
    }
    return arrows;
  }

  ::lumos::testing::TempDir dir_;
  std::string json_;
  ExportReport report_;
  ParsedTrace trace_;
};

using Arrow = std::tuple<std::string, int64_t, std::string, int64_t>;

TEST_F(FlowLinkerTest, ImportedWaitJoinsOnTheRecordCorrelation) {
  auto w = NewTrace();
  w->Add(Call(1000, 5, 10, ApiKind::kEventRecord, "cudaEventRecord", 7));
  w->Add(Call(2000, 6, 11, ApiKind::kStreamWaitEvent, "cudaStreamWaitEvent", 9));
  // Thread unknown: the sync goes to the thread of its API call (correlation 11).
  w->Add(Wait(2000, 11, 9, /*sync_id=*/0, /*record_corr=*/10, /*thread=*/0));
  w->Add(Call(3000, 6, 12, ApiKind::kLaunchKernel, "cudaLaunchKernel", 9));
  w->Add(Kernel(4000, 12, 9, "after_wait"));
  ExportAndParse(std::move(w));
  EXPECT_EQ(trace_.Slice("Stream Wait Event", 1).tid, 6u);
  EXPECT_EQ(Arrows("cuda_event"),
            (std::vector<Arrow>{{"thread 5", 1000, "thread 6", 2000},
                                {"thread 5", 1000, "stream 9 (device 0)", 4000}}));
}

TEST_F(FlowLinkerTest, ARecordedAgainEventJoinsTheLatestEarlierRecord) {
  auto w = NewTrace();
  a::CudaEventRecordEvent record;
  record.stream_id = 7;
  record.cuda_event_sync_id = 5;
  record.has_device_timestamp = true;
  for (int k = 0; k < 2; ++k) {  // Recorded at 1 µs and 10 µs, GPU times 1.5 and 10.5 µs.
    w->Add(Call(1000 + 9000 * k, 5, 20 + k, ApiKind::kEventRecord, "cudaEventRecord", 7));
    record.start_ns = kT0 + 1500 + 9000 * k;
    record.correlation_id = 20 + k;
    w->Add(record);
  }
  w->Add(Wait(5000, 0, 9, 5, 0, 6));   // After the first record only.
  w->Add(Wait(12000, 0, 9, 5, 0, 6));  // After both.
  ExportAndParse(std::move(w));
  std::vector<Arrow> expected = {{"thread 5", 1000, "thread 6", 5000},
                                 {"thread 5", 10000, "thread 6", 12000}};
  EXPECT_EQ(Arrows("cuda_event"), expected);
  // GPU-timed records are drawn on their stream.
  int records = 0;
  for (const Event& e : trace_.events) {
    if (e.name == "Event Record") {
      EXPECT_EQ(RowOf(e), "stream 7 (device 0)");
      ++records;
    }
  }
  EXPECT_EQ(records, 2);
}

TEST_F(FlowLinkerTest, AGraphLaunchPointsToEachOfItsKernels) {
  auto w = NewTrace();
  w->Add(Call(1000, 5, 30, ApiKind::kLaunchGraph, "cudaGraphLaunch", 7));
  for (int k = 0; k < 3; ++k) w->Add(Kernel(2000 + 300 * k, 30, 7, "node"));
  ExportAndParse(std::move(w));
  std::vector<Arrow> arrows = Arrows("launch");
  ASSERT_EQ(arrows.size(), 3u);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(std::get<3>(arrows[k]), 2000 + 300 * k);
}

TEST_F(FlowLinkerTest, ArrowsBackInTimeAreSkippedAndCounted) {
  auto w = NewTrace();
  w->Add(Call(5000, 5, 40, ApiKind::kLaunchKernel, "cudaLaunchKernel", 7));
  w->Add(Kernel(1000, 40, 7, "before_its_launch"));  // Clock skew.
  w->Add(Call(6000, 5, 41, ApiKind::kLaunchKernel, "cudaLaunchKernel", 7));
  w->Add(Kernel(7000, 41, 7, "fine"));
  ExportAndParse(std::move(w));
  EXPECT_EQ(Arrows("launch"),
            (std::vector<Arrow>{{"thread 5", 6000, "stream 7 (device 0)", 7000}}));
  EXPECT_EQ(report_.flows, 1u);
  EXPECT_EQ(report_.flows_skipped, 1u);
}

TEST_F(FlowLinkerTest, ASyncWithoutThreadOrCallGoesToItsStreamOrAnUnknownThread) {
  auto w = NewTrace();
  w->Add(Wait(1000, 0, 9, 0, 0, 0));
  a::SyncEvent device_sync;
  device_sync.start_ns = kT0 + 2000;
  device_sync.duration_ns = 10;
  device_sync.sync_type = schema::SyncType::kContextSynchronize;
  w->Add(device_sync);
  ExportAndParse(std::move(w));
  EXPECT_EQ(RowOf(trace_.Slice("Stream Wait Event", 1)), "stream 9 (device 0)");
  EXPECT_EQ(RowOf(trace_.Slice("Context Sync", 1)), "unknown thread");
  EXPECT_TRUE(trace_.Flows("cuda_event").empty());
}

// NCCL records as the agent writes them: collectives numbered per communicator and op, sends
// and receives per direction with a peer (a comm rank).
a::CollectiveEvent Nccl(int64_t start, uint64_t seq, schema::CollectiveOp op, int32_t peer = -1) {
  a::CollectiveEvent c;
  c.start_ns = kT0 + start;
  c.duration_ns = 3000;
  c.comm_id = 42;
  c.seq_number = seq;
  c.op = op;
  c.peer_rank = peer;
  c.comm_size = 3;
  c.has_host_time = true;
  return c;
}

TEST(FlowLinkerCollectiveTest, ArrowsJoinOneOperationNotOneSeqNumber) {
  // Ranks 0 and 1 run AllGather #0 then ReduceScatter #0 (one seq number: NCCL counts each op
  // apart); rank 0 sends to rank 2 (its send #0) and rank 1 to rank 2 (its send #0); rank 2
  // receives from rank 1 first (its receive #0), then from rank 0 (#1). Comm ranks = ranks.
  using Op = schema::CollectiveOp;
  ::lumos::testing::TempDir dir;
  const std::vector<std::vector<a::CollectiveEvent>> records = {
      {Nccl(1000, 0, Op::kAllGather), Nccl(10000, 0, Op::kReduceScatter),
       Nccl(30000, 0, Op::kSend, 2)},
      {Nccl(2000, 0, Op::kAllGather), Nccl(11000, 0, Op::kReduceScatter),
       Nccl(20000, 0, Op::kSend, 2)},
      {Nccl(21000, 0, Op::kRecv, 1), Nccl(31000, 1, Op::kRecv, 0)},
  };
  std::vector<std::string> paths;
  for (int32_t rank = 0; rank < 3; ++rank) {
    paths.push_back(dir.File("rank" + std::to_string(rank) + ".pb.zst"));
    auto writer = a::TraceFileWriter::Create(paths.back(), ::lumos::testing::SampleHeader(rank, 3),
                                             a::WriterOptions());
    ASSERT_TRUE(writer.ok());
    a::CommunicatorEvent comm;
    comm.start_ns = kT0;
    comm.comm_id = 42;
    comm.rank = rank;
    comm.comm_size = 3;
    (*writer)->Add(comm);
    for (const a::CollectiveEvent& c : records[rank]) (*writer)->Add(c);
    ASSERT_TRUE((*writer)->Close(kT0 + 1'000'000).ok());
  }
  std::string json;
  ExportReport report;
  ASSERT_TRUE(ExportChromeTrace(
                  paths, ExportOptions(),
                  [&](std::string_view chunk) {
                    json.append(chunk);
                    return Status::Ok();
                  },
                  &report)
                  .ok());
  ParsedTrace trace;
  ASSERT_TRUE(export_test::ParseTrace(json, &trace));
  ASSERT_TRUE(export_test::FlowsPaired(trace));
  // (start pid, end pid, time) of each arrow: the last rank to start -> each other one.
  std::vector<std::tuple<uint32_t, uint32_t, int64_t>> arrows;
  for (const Event* s : trace.Flows("collective")) {
    if (s->ph != "s") continue;
    for (const Event* f : trace.Flows("collective")) {
      if (f->ph == "f" && f->id == s->id) arrows.emplace_back(s->pid, f->pid, s->ts_ns);
    }
  }
  std::sort(arrows.begin(), arrows.end());
  const std::vector<std::tuple<uint32_t, uint32_t, int64_t>> expected = {
      {2, 1, 2000},   // AllGather: rank 1 started last.
      {2, 1, 11000},  // ReduceScatter.
      {3, 1, 31000},  // Rank 0's send, received last on rank 2.
      {3, 2, 21000},  // Rank 1's send.
  };
  EXPECT_EQ(arrows, expected);
}

}  // namespace
}  // namespace lumos::modeler
