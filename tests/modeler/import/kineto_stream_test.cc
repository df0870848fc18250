// The Kineto document stream (modeler/import/kineto_stream.h): batches that cover traceEvents
// exactly whatever the budget, strings holding brackets and quotes, header members before and
// after the events, every truncation one clear error, and bounds on one element and on a huge
// header member. The real traces (kineto_import_test.cc, several MiB each) cross the buffer's
// refills; here a small memory budget makes batches of a few KB.
#include "modeler/io/kineto_stream.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <vector>

#include "base/memory_budget.h"
#include "modeler/import/kineto_converter.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::kineto {

using io::KinetoPiece;
using io::KinetoStream;
using io::PieceInfo;
namespace {

using ::lumos::testing::TempDir;

// An event whose name holds what a scanner could mistake for structure.
std::string Event(int i) {
  return R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i) +
         R"( \"]}{[\\", "pid": 0, "tid": 7, "ts": )" + std::to_string(100 + i) +
         R"(, "dur": 1, "args": {"correlation": )" + std::to_string(i + 1) +
         R"(, "grid": [1, 1, 1]}})";
}

std::string Events(int n) {
  std::string events;
  for (int i = 0; i < n; ++i) {
    if (i != 0) events += ",\n  ";
    events += Event(i);
  }
  return events;
}

struct Pieces {
  Status status;
  std::vector<PieceInfo> infos;
  std::vector<std::string> texts;
};

Pieces ReadPieces(const std::string& json) {
  Pieces pieces;
  auto source = io::OpenMemorySource(json.data(), json.size(), "in.json");
  EXPECT_TRUE(source.ok());
  KinetoStream stream({}, source->get(), "in.json");
  io::PaddedText text;
  while (true) {
    auto piece = stream.Next(&text);
    if (!piece.ok()) {
      pieces.status = piece.status();
      return pieces;
    }
    if (piece->kind == KinetoPiece::kEnd) return pieces;
    pieces.infos.push_back(*piece);
    pieces.texts.emplace_back(text.view());
  }
}

class KinetoStreamTest : public ::testing::Test {
 protected:
  void TearDown() override { SetMemoryBudget(DefaultMemoryBudget()); }
};

TEST_F(KinetoStreamTest, BatchesCoverTraceEventsExactlyAndMembersComeAroundThem) {
  SetMemoryBudget(64 << 10);  // Batches of about 8 KB: 2,000 events take dozens.
  const std::string json = R"({"schemaVersion": 1, "deviceProperties": [{"id": 0}],
    "traceEvents": [)" + Events(2000) +
                           R"(], "baseTimeNanoseconds": 5, "traceName": "t"})";
  Pieces pieces = ReadPieces(json);
  ASSERT_TRUE(pieces.status.ok()) << pieces.status.message();
  ASSERT_GE(pieces.infos.size(), 20u);
  EXPECT_EQ(pieces.infos.front().kind, KinetoPiece::kMembers);
  EXPECT_FALSE(pieces.infos.front().after_events);
  EXPECT_EQ(pieces.texts.front(), R"({"schemaVersion": 1,"deviceProperties": [{"id": 0}]})");
  EXPECT_EQ(pieces.infos.back().kind, KinetoPiece::kMembers);
  EXPECT_TRUE(pieces.infos.back().after_events);
  EXPECT_EQ(pieces.texts.back(), R"({"baseTimeNanoseconds": 5,"traceName": "t"})");
  simdjson::dom::parser parser;
  size_t next = 0;
  for (size_t p = 1; p + 1 < pieces.infos.size(); ++p) {
    const PieceInfo& info = pieces.infos[p];
    ASSERT_EQ(info.kind, KinetoPiece::kEvents);
    EXPECT_EQ(info.first_index, next);
    simdjson::dom::array array;
    ASSERT_EQ(parser.parse(pieces.texts[p]).get_array().get(array), simdjson::SUCCESS);
    EXPECT_EQ(array.size(), info.count);
    // Byte offsets point into the document: the batch is the document's text there.
    const std::string& text = pieces.texts[p];
    EXPECT_EQ(json.substr(info.text_offset + 1, text.size() - 2), text.substr(1, text.size() - 2));
    size_t i = next;
    for (simdjson::dom::element e : array) {
      std::string_view name;
      ASSERT_EQ(e["name"].get_string().get(name), simdjson::SUCCESS);
      EXPECT_EQ(name, "k" + std::to_string(i++) + " \"]}{[\\");
    }
    next += info.count;
  }
  EXPECT_EQ(next, 2000u);
}

// Kineto writes baseTimeNanoseconds before traceEvents or after it (HTA's nccl_data.json.gz),
// and the header members anywhere: the trace written is the same byte for byte.
TEST_F(KinetoStreamTest, MembersAfterTheEventsGiveTheSameTrace) {
  SetMemoryBudget(64 << 20);
  const std::string members =
      R"("deviceProperties": [{"id": 0, "name": "NVIDIA H200", "numSms": 132}],
      "distributedInfo": {"rank": 1, "world_size": 2}, "baseTimeNanoseconds": 1700000000000000000)";
  const std::string before = "{" + members + R"(, "traceEvents": [)" + Events(300) + "]}";
  const std::string after = R"({"traceEvents": [)" + Events(300) + "], " + members + "}";
  TempDir dir;
  std::vector<std::string> outputs;
  for (const std::string& json : {before, after}) {
    io::PaddedText text;
    text.Append(json.data(), json.size());
    ConvertStats stats;
    const std::string path = dir.File("t" + std::to_string(outputs.size()) + ".pb.zst");
    ConvertOptions options;
    options.job_id = "j";
    options.source_path = "in.json";
    ASSERT_TRUE(ConvertKinetoText(text, "in.json", path, options, &stats).ok());
    EXPECT_EQ(stats.kernels, 300u);
    EXPECT_EQ(stats.start_ns, 1700000000000100000);
    outputs.push_back(::lumos::testing::ReadFileBytes(path));
  }
  EXPECT_EQ(outputs[0], outputs[1]);
}

// Cut anywhere, the document is one error (or, cut after its last '}', converts); never a
// crash, a hang, or a trace of what happened to be read.
TEST_F(KinetoStreamTest, EveryTruncationIsOneClearError) {
  const std::string json =
      R"({"baseTimeNanoseconds": 0, "traceEvents": [)" + Events(3) + R"(], "traceName": "x"})";
  TempDir dir;
  for (size_t cut = 0; cut < json.size(); ++cut) {
    io::PaddedText text;
    text.Append(json.data(), cut);
    ConvertStats stats;
    Status status = ConvertKinetoText(text, "in.json", dir.File("t.pb.zst"), {}, &stats);
    ASSERT_FALSE(status.ok()) << "cut at " << cut;
    EXPECT_EQ(status.message().rfind("in.json: ", 0), 0u) << status.message();
    EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
  }
  Pieces cut = ReadPieces(json.substr(0, json.find("\"traceName\"") + 5));
  EXPECT_EQ(cut.status.message().rfind("in.json: not valid JSON: the document ends early (at "
                                       "byte ",
                                       0),
            0u)
      << cut.status.message();
}

TEST_F(KinetoStreamTest, WhatIsNotStructureIsNamedWithItsOffset) {
  const std::string json = R"({"traceEvents": [)" + Event(0) + " " + Event(1) + "]}";
  Pieces pieces = ReadPieces(json);
  EXPECT_EQ(pieces.status.message(),
            "in.json: not valid JSON: ',' or ']' after a traceEvents "
            "element expected at byte offset " +
                std::to_string(json.find("} {") + 2) + ", not '{'");
  Pieces trailing = ReadPieces(R"({"traceEvents": []} x)");
  EXPECT_EQ(trailing.status.message(),
            "in.json: not valid JSON: nothing more after the closing '}' expected at byte offset "
            "20, not 'x'");
  Pieces comma = ReadPieces(R"({"traceEvents": [1,]})");
  EXPECT_EQ(comma.status.message(),
            "in.json: not valid JSON: a traceEvents element expected at byte offset 19, not ']'");
}

// One element past half the budget is refused as it is read, not after it all is.
TEST_F(KinetoStreamTest, AnElementLargerThanTheBudgetIsRefused) {
  SetMemoryBudget(8 << 20);
  const std::string json =
      R"({"traceEvents": [)" + Event(0) + R"(, {"name": ")" + std::string(6 << 20, 'a') + R"("}]})";
  Pieces pieces = ReadPieces(json);
  EXPECT_EQ(pieces.status.message(),
            "in.json: one traceEvents element at byte offset " +
                std::to_string(json.find(R"({"name": "a)")) +
                " is larger than 4.0 MiB, half of the memory budget of 8.0 MiB "
                "(LUMOS_MAX_MEMORY): not read");
}

// A PyTorch Execution Trace is mostly one huge "nodes" member: its name is kept, its value
// is not, so it is still recognised (and says so) without being held.
TEST_F(KinetoStreamTest, AHugeHeaderMemberKeepsItsName) {
  const std::string json = R"({"schema": "1.0.3", "nodes": [)" +
                           std::string(io::kMaxMemberBytes + (2 << 20), ' ') +
                           R"(1], "finish": 1})";
  io::PaddedText text;
  text.Append(json.data(), json.size());
  TempDir dir;
  ConvertStats stats;
  Status status = ConvertKinetoText(text, "et.json", dir.File("t.pb.zst"), {}, &stats);
  EXPECT_EQ(status.message(),
            "et.json: this is a PyTorch Execution Trace (\"schema\" and \"nodes\"), not a Kineto "
            "trace; import the Kineto (torch.profiler) trace recorded with it instead");
}

}  // namespace
}  // namespace lumos::modeler::kineto
