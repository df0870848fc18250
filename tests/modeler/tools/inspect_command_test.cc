// `lumos-model inspect` as a user runs it: a real process on real files.
#include <gtest/gtest.h>
#include <simdjson.h>

#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;
using ::lumos::testing::WriteSampleTrace;

std::string Inspect(const std::string& args) { return LumosModelBinary() + " inspect " + args; }

TEST(InspectCommandTest, ShowsCountsSpanAndCleanClose) {
  TempDir dir;
  WriteSampleTrace(dir.File("t.pb.zst"), 200);
  auto r = RunCommand(Inspect(dir.File("t.pb.zst")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("kernel 200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("api_call 200"), std::string::npos);
  EXPECT_NE(r.out.find("job        sample-job   rank 0 / 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NVIDIA H200, 132 SMs"), std::string::npos);
  EXPECT_NE(r.out.find("+ 0.200 ms"), std::string::npos);  // 900 ns .. 200.5 µs
  EXPECT_NE(r.out.find("closed cleanly"), std::string::npos);
  EXPECT_NE(r.out.find("bytes, 400 events ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("streams    3   threads 1"), std::string::npos) << r.out;
}

// Agent traces run on CLOCK_MONOTONIC (time since boot): inspect shows wall-clock time through
// the trace's clock snapshot, and says so.
TEST(InspectCommandTest, MonotonicTimesAreMappedToRealtime) {
  TempDir dir;
  schema::HeaderInfo header = ::lumos::testing::SampleHeader();
  header.default_clock_id = schema::ClockId::kMonotonic;
  auto writer = schema::TraceFileWriter::Create(dir.File("t.pb.zst"), header, {});
  ASSERT_TRUE(writer.ok());
  const schema::ClockReading clocks[] = {{schema::ClockId::kMonotonic, 4'000'000'000},
                                         {schema::ClockId::kRealtime, 1'700'000'000'000'000'000}};
  (*writer)->AddClockSnapshot(clocks, 2);
  (*writer)->Add(schema::KernelEvent{.start_ns = 5'000'000'000, .duration_ns = 2'000'000});
  ASSERT_TRUE((*writer)->Close(0).ok());
  auto r = RunCommand(Inspect(dir.File("t.pb.zst")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // 1.7e9 s since the epoch is 2023-11-14 22:13:20 UTC; the kernel starts 1 s after the
  // snapshot.
  EXPECT_NE(r.out.find("time       2023-11-14 22:13:21.000000 UTC + 2.000 ms (clock monotonic, "
                       "mapped to realtime by a clock snapshot)"),
            std::string::npos)
      << r.out;
}

// The rank the agent learned from NCCL after the header (Trailer, schema 2.1) is shown beside the
// header's; without it (older files, no communicator) nothing changes (the tests above).
TEST(InspectCommandTest, ShowsTheTrailersNcclRank) {
  TempDir dir;
  auto writer = schema::TraceFileWriter::Create(dir.File("t.pb.zst"),
                                                ::lumos::testing::SampleHeader(5, 8), {});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)
                  ->Close(0, {.has_rank = true, .has_world_size = true, .rank = 2, .world_size = 4})
                  .ok());
  auto r = RunCommand(Inspect(dir.File("t.pb.zst")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("rank 5 / 8 (NCCL 2 / 4)"), std::string::npos) << r.out;
  auto json = RunCommand(Inspect("--json " + dir.File("t.pb.zst")));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  simdjson::dom::element file = doc["files"].at(0);
  EXPECT_EQ(int64_t(file["rank"]), 5);
  EXPECT_EQ(int64_t(file["nccl_rank"]), 2);
  EXPECT_EQ(int64_t(file["nccl_world_size"]), 4);
}

// How many kernels a GEMM call gives a shape (schema 2.2), text and JSON: none in a file from
// before GEMM calls (its kernels counted still, no attention line), the one kernel of the 2.2
// golden file, whose attention call names a launch the file lacks.
TEST(InspectCommandTest, CountsKernelsWithAGemmShape) {
  const std::string data = std::string(LUMOS_SOURCE_DIR) + "/tests/data/";
  auto old = RunCommand(Inspect(data + "schema_v2.1/every_packet_kind.pb.zst"));
  EXPECT_EQ(old.exit_code, 0) << old.err;
  EXPECT_NE(old.out.find("  gemm       kernels with a GEMM shape: 0 of 1 (0 GEMM calls)\n"),
            std::string::npos)
      << old.out;
  EXPECT_EQ(old.out.find("attention"), std::string::npos) << old.out;
  auto v22 = RunCommand(Inspect(data + "schema_v2.2/every_packet_kind.pb.zst"));
  EXPECT_EQ(v22.exit_code, 0) << v22.err;
  EXPECT_NE(v22.out.find("kernels with a GEMM shape: 1 of 1 (1 GEMM calls)"), std::string::npos)
      << v22.out;
  EXPECT_NE(v22.out.find("  attention  kernels with an attention shape: 0 of 1 (1 attention "
                         "calls)\n"),
            std::string::npos)
      << v22.out;
  EXPECT_NE(v22.out.find("gemm_call 2"), std::string::npos) << v22.out;
  auto json = RunCommand(Inspect("--json " + data + "schema_v2.2/every_packet_kind.pb.zst"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  simdjson::dom::element file = doc["files"].at(0);
  EXPECT_EQ(int64_t(file["kernels"]), 1);
  EXPECT_EQ(int64_t(file["kernels_with_gemm_shape"]), 1);
  EXPECT_EQ(int64_t(file["gemm_calls"]), 1);
  EXPECT_EQ(int64_t(file["kernels_with_attention_shape"]), 0);
  EXPECT_EQ(int64_t(file["attention_calls"]), 1);
  EXPECT_EQ(int64_t(file["packets"]["gemm_call"]), 2);
}

TEST(InspectCommandTest, JsonHasTheSameFacts) {
  TempDir dir;
  WriteSampleTrace(dir.File("t.pb.zst"), 50);
  auto r = RunCommand(Inspect("--json " + dir.File("t.pb.zst")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  simdjson::dom::element file = doc["files"].at(0);
  EXPECT_EQ(int64_t(file["packets"]["kernel"]), 50);
  EXPECT_EQ(int64_t(file["rank"]), 0);
  EXPECT_EQ(int64_t(file["span_ns"]), 49 * 1000 + 500 + 100);
  EXPECT_EQ(bool(file["closed_cleanly"]), true);
  EXPECT_EQ(int64_t(file["events"]), 100);  // 50 kernels + 50 API calls.
  EXPECT_TRUE(file["damage"].is_null());
  EXPECT_EQ(std::string_view(doc["jobs"].at(0)["job_id"]), "sample-job");
}

TEST(InspectCommandTest, DamagedFileShowsPrefixAndFailsWithOffset) {
  TempDir dir;
  WriteSampleTrace(dir.File("t.pb.zst"), 3000, /*frame_bytes=*/8192);
  std::string bytes = ReadFileBytes(dir.File("t.pb.zst"));
  WriteFileBytes(dir.File("cut.pb.zst"), bytes.substr(0, bytes.size() * 2 / 3));
  auto r = RunCommand(Inspect(dir.File("cut.pb.zst")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("DAMAGED (see below)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernel "), std::string::npos);
  EXPECT_NE(r.err.find("cut.pb.zst: byte offset "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("truncated frame"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // One clear message.
}

TEST(InspectCommandTest, NotATraceFailsWithOneLine) {
  TempDir dir;
  WriteFileBytes(dir.File("x.json"), "{\"traceEvents\": []}\n");
  auto r = RunCommand(Inspect(dir.File("x.json")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("x.json: byte offset 0: not a Lumos trace"), std::string::npos) << r.err;
}

TEST(InspectCommandTest, ReportsMissingRanksOfAJob) {
  TempDir dir;
  for (int rank : {0, 2}) {
    schema::WriterOptions options;
    auto writer = schema::TraceFileWriter::Create(dir.File("r" + std::to_string(rank) + ".pb.zst"),
                                                  ::lumos::testing::SampleHeader(rank, 4), options);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Close(0).ok());
  }
  auto r = RunCommand(Inspect(dir.path()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("job sample-job: 2 file(s), ranks 0 2 of 4; missing 1 3"), std::string::npos)
      << r.out;
}

// File names are bytes: a Latin-1 name made --json emit invalid UTF-8 (simdjson, like every
// strict parser, refused the document). Invalid bytes become U+FFFD, in paths and in errors.
TEST(InspectCommandTest, JsonStaysValidForNonUtf8FileNames) {
  TempDir dir;
  const std::string good = dir.File("caf\xe9.pb.zst");
  const std::string bad = dir.File("bad\xff.pb.zst");
  WriteSampleTrace(good, 5);
  WriteFileBytes(bad, "not a trace");
  auto r = RunCommand(Inspect("--json '" + good + "' '" + bad + "'"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(std::string_view(doc["files"].at(0)["path"]), dir.File("caf\uFFFD.pb.zst"));
  const std::string error(std::string_view(doc["errors"].at(0)));
  EXPECT_EQ(error.rfind(dir.File("bad\uFFFD.pb.zst: "), 0), 0u) << error;
}

// Times before 1970 (a realtime offset or an imported ts below zero) printed the fraction of
// the second as a negative number: "1969-12-31 23:59:59.-500000".
TEST(InspectCommandTest, TimesBefore1970AreDates) {
  TempDir dir;
  schema::HeaderInfo header = ::lumos::testing::SampleHeader();
  header.default_clock_id = schema::ClockId::kRealtime;
  auto writer = schema::TraceFileWriter::Create(dir.File("t.pb.zst"), header, {});
  ASSERT_TRUE(writer.ok());
  (*writer)->Add(schema::KernelEvent{.start_ns = -1'500'000'000, .duration_ns = 2'000'000});
  ASSERT_TRUE((*writer)->Close(0).ok());
  auto r = RunCommand(Inspect(dir.File("t.pb.zst")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("time       1969-12-31 23:59:58.500000 UTC + 2.000 ms (clock realtime)"),
            std::string::npos)
      << r.out;
}

TEST(InspectCommandTest, UsageErrors) {
  EXPECT_EQ(RunCommand(Inspect("")).exit_code, 2);
  EXPECT_EQ(RunCommand(Inspect("--bogus x")).exit_code, 2);
  auto help = RunCommand(Inspect("--help"));
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--json"), std::string::npos);
  EXPECT_EQ(RunCommand(Inspect("/nonexistent/*.pb.zst")).exit_code, 1);
  EXPECT_EQ(RunCommand(LumosModelBinary() + " frobnicate").exit_code, 2);
  EXPECT_EQ(RunCommand(LumosModelBinary()).exit_code, 2);
  EXPECT_EQ(RunCommand(LumosModelBinary() + " --help").exit_code, 0);
}

}  // namespace
}  // namespace lumos::modeler
