// What the Kineto importer says about inputs that are not all they should be: each case a small
// hand-written document, converted and read back. Sound but odd inputs are written with a
// warning naming the input; a number simdjson cannot hold loses only its event; a document
// with nothing usable writes nothing and fails.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "modeler/import/kineto_converter.h"
#include "modeler/import/kineto_import.h"
#include "tests/modeler/import/import_test_util.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::kineto {
namespace {

using ::lumos::testing::TempDir;
using testing::ReadBack;
using testing::ReadTrace;

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// A runtime call and the kernel it launches, correlation `id`, at `ts` µs.
std::string Launch(uint64_t id, int ts, const std::string& kernel_args = "") {
  return R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9,
     "ts": )" +
         std::to_string(ts) + R"(, "dur": 5, "args": {"correlation": )" + std::to_string(id) +
         R"(}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" +
         std::to_string(ts + 10) + R"(, "dur": 3, "args": {"correlation": )" + std::to_string(id) +
         R"(, "stream": 7, "device": 0)" + kernel_args + "}}";
}

std::string Document(const std::string& events, const std::string& distributed = "") {
  return "{" + (distributed.empty() ? "" : "\"distributedInfo\": " + distributed + ", ") +
         "\"traceEvents\": [" + events + "]}";
}

struct Converted {
  Status status;
  ConvertStats stats;
  std::string path;
};

Converted Convert(const TempDir& dir, const std::string& json) {
  io::PaddedText text;
  text.Append(json.data(), json.size());
  Converted c;
  c.path = dir.File("t.pb.zst");
  c.status = ConvertKinetoText(text, "in.json", c.path, {}, &c.stats);
  return c;
}

// simdjson refuses a whole document for one integer beyond 2^64 (or a double beyond its range),
// and says neither which nor where. Only the events holding one are lost, each counted and
// named in the loss record; the warning gives the first one's byte offset.
TEST(KinetoDiagnosticsTest, NumberBeyond64BitsLosesOnlyItsEvent) {
  TempDir dir;
  const std::string json =
      Document(Launch(1, 100) + "," + Launch(2, 200, R"(, "External id": 123456789012345678901)") +
               "," + Launch(3, 300, R"(, "grid": [1, 1e400, 1])") + "," +
               Launch(4, 400, R"(, "External id": -9223372036854775809)") + "," +
               // Digits inside a string are no number, and 2^64 - 1 still fits.
               R"({"ph": "X", "cat": "kernel", "name": "123456789012345678901", "pid": 0, "tid": 7,
                   "ts": 500, "dur": 1, "args": {"correlation": 18446744073709551615}})");
  Converted c = Convert(dir, json);
  ASSERT_TRUE(c.status.ok()) << c.status.message();
  EXPECT_EQ(c.stats.kernels, 2u);  // Kernels 1 and the one named by digits.
  EXPECT_EQ(c.stats.api_calls, 4u);
  EXPECT_EQ(c.stats.skipped, 3u);
  ASSERT_EQ(c.stats.warnings.size(), 1u);
  EXPECT_EQ(c.stats.warnings[0],
            "in.json: 3 number(s) beyond the range of a 64-bit integer or a double (the first "
            "at byte offset " +
                std::to_string(json.find(": 123456789012345678901") + 2) +
                " of the JSON); the events holding them are not converted (counted as skipped)");
  ReadBack back = ReadTrace(c.path);
  ASSERT_EQ(back.Count("loss"), 1u);
  const pb::LossRecord& loss = back.Of("loss")[0]->packet.loss();
  EXPECT_EQ(loss.count(), 3u);
  EXPECT_NE(loss.detail().find("traceEvents[3] (cat kernel): \"args.External id\" is a number "
                               "beyond the 64-bit range"),
            std::string::npos)
      << loss.detail();
}

// A number that is not JSON at all still refuses the document, now with its offset.
TEST(KinetoDiagnosticsTest, MalformedNumberIsRefusedWithItsOffset) {
  TempDir dir;
  const std::string json = Document(Launch(1, 100) + R"(, {"ph": "X", "ts": 012, "dur": 1})");
  Converted c = Convert(dir, json);
  ASSERT_FALSE(c.status.ok());
  EXPECT_EQ(c.status.message(),
            "in.json: not valid JSON (traceEvents[0] to [2], bytes " +
                std::to_string(json.find("[{") + 1) + " to " + std::to_string(json.size() - 3) +
                "): a malformed number at byte offset " + std::to_string(json.find("012")));
  EXPECT_FALSE(Exists(c.path));
}

// CUPTI gives every API call its own correlation id; a repeated one (a merged or edited trace)
// makes a GPU op's launch ambiguous. Said, with the count; the calls are all written. GPU ops
// sharing an id (the kernels of one graph launch) are not an error.
TEST(KinetoDiagnosticsTest, RepeatedApiCorrelationIdsAreCounted) {
  TempDir dir;
  Converted c = Convert(dir, Document(Launch(1, 100) + "," + Launch(1, 200) + "," + Launch(2, 300) +
                                      "," + Launch(1, 400) + "," +
                                      R"({"ph": "X", "cat": "kernel", "name": "graph k", "pid": 0,
                                          "tid": 7, "ts": 320, "dur": 1,
                                          "args": {"correlation": 2}})"));
  ASSERT_TRUE(c.status.ok()) << c.status.message();
  EXPECT_EQ(c.stats.api_calls, 4u);
  EXPECT_EQ(c.stats.kernels, 5u);
  ASSERT_EQ(c.stats.warnings.size(), 1u);
  EXPECT_EQ(c.stats.warnings[0],
            "in.json: 2 CUDA API call(s) repeat the correlation id of an earlier one (the first: "
            "id 1 at traceEvents[2]); GPU operations with those ids may be paired with the wrong "
            "call");
  EXPECT_EQ(ReadTrace(c.path).Count("api_call"), 4u);
}

// rank >= world_size was taken silently; which of the two is wrong cannot be told, so both are
// kept, and said.
TEST(KinetoDiagnosticsTest, RankNotBelowWorldSizeIsWarnedAndKept) {
  TempDir dir;
  Converted c = Convert(dir, Document(Launch(1, 100), R"({"rank": 8, "world_size": 8})"));
  ASSERT_TRUE(c.status.ok()) << c.status.message();
  ASSERT_EQ(c.stats.warnings.size(), 1u);
  EXPECT_EQ(c.stats.warnings[0],
            "in.json: distributedInfo gives rank 8, not below its world_size 8 (both kept as "
            "recorded)");
  ReadBack back = ReadTrace(c.path);
  EXPECT_EQ(back.header.rank(), 8);
  EXPECT_EQ(back.header.world_size(), 8);
  // A sound one says nothing.
  Converted sound = Convert(dir, Document(Launch(1, 100), R"({"rank": 7, "world_size": 8})"));
  ASSERT_TRUE(sound.status.ok());
  EXPECT_TRUE(sound.stats.warnings.empty());
}

// Every event unusable: a trace of 0 events was written, at exit 0. Now nothing is written and
// the import fails naming the input and the first reason.
TEST(KinetoDiagnosticsTest, NothingUsableWritesNothingAndFails) {
  TempDir dir;
  Converted c = Convert(dir, Document(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": "soon",
                                          "dur": 1},
                                         {"ph": "X", "cat": "kernel", "name": "k", "ts": 1})"));
  ASSERT_FALSE(c.status.ok());
  EXPECT_EQ(c.status.message(),
            "in.json: none of its events could be converted (2 skipped; the first: "
            "traceEvents[0] (cat kernel): \"ts\" is missing or not a number in range)");
  EXPECT_FALSE(Exists(c.path));

  Converted empty = Convert(dir, Document(R"({"ph": "M", "name": "process_name", "pid": 1})"));
  ASSERT_FALSE(empty.status.ok());
  EXPECT_EQ(empty.status.message(),
            "in.json: no events to convert (no complete \"ph\": \"X\" event in traceEvents)");
  EXPECT_FALSE(Exists(empty.path));

  // Through the import: the output is not left behind either.
  ::lumos::testing::WriteFileBytes(dir.File("none.json"), Document(""));
  auto imported = ImportKineto({{dir.File("none.json")}, dir.File("none.pb.zst"), "", 3});
  ASSERT_FALSE(imported.ok());
  EXPECT_FALSE(Exists(dir.File("none.pb.zst")));
  EXPECT_FALSE(Exists(dir.File("none.pb.zst.tmp")));
}

}  // namespace
}  // namespace lumos::modeler::kineto
