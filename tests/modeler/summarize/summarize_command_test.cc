// lumos-model summarize as a user runs it: the real binary on `synth gpt` windows in the agent's
// DIR/<job>/<stamp>/ layout and the bundled real 8-rank trace. What the tables say is checked
// in DuckDB (summarize_duckdb_test.py); here: which files form a window, a window that fails
// while the others are summarized, and that no existing output is ever overwritten.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "modeler/summarize/summary_schema.h"
#include "modeler/trace/window_stamp.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::summarize {
namespace {

namespace fs = std::filesystem;
using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

constexpr const char kStamp1[] = "20261201T233956Z";
constexpr const char kStamp2[] = "20261201T234956Z";

// A 4-rank synth gpt window written to `dir` (created).
void Window(const std::string& dir, const std::string& stamp, const std::string& extra = "") {
  fs::create_directories(fs::path(dir).parent_path());
  const auto r =
      RunCommand(LumosModelBinary() + " synth gpt -o " + dir + " --set layers=1,iterations=2" +
                 (stamp.empty() ? "" : " --window " + stamp) + " " + extra);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

::lumos::testing::CommandResult Summarize(const std::string& args) {
  return RunCommand(LumosModelBinary() + " summarize " + args);
}

TEST(WindowStampTest, RoundTripsAndRefusesWhatIsNotAStamp) {
  const uint64_t ns = *ParseWindowStamp(kStamp1);
  EXPECT_EQ(WindowStamp(ns + 999'999'999), kStamp1);  // The second, floored.
  EXPECT_EQ(Iso8601Utc(ns + 123'456'789), "2026-12-01T23:39:56.123456Z");
  EXPECT_EQ(WindowStamp(0), "19700101T000000Z");
  EXPECT_EQ(*ParseWindowStamp("20240229T000000Z") / 1'000'000'000, 1709164800u);  // Leap day.
  for (const char* bad : {"20230229T000000Z", "20261301T000000Z", "20261201T240000Z",
                          "20261201T233960Z", "20261201 233956Z", "2026120T2339560Z", ""}) {
    EXPECT_FALSE(ParseWindowStamp(bad).has_value()) << bad;
  }
}

TEST(SummarySchemaTest, CsvQuotesTextAndWritesNullsEmpty) {
  std::string line;
  std::vector<Value> row(Columns(Table::kKernels).size(), Value(Null{}));
  row[0] = int64_t{1};
  row[6] = std::string("void k<int, float>(\"x\")");  // name: commas and quotes.
  row[7] = std::string();                             // kernel_class: empty is null.
  AppendRow(Format::kCsv, Table::kKernels, row, &line);
  EXPECT_EQ(line, "1,,,,,,\"void k<int, float>(\"\"x\"\")\",,,,,,,,,,,,,,\n");
  line.clear();
  AppendRow(Format::kNdjson, Table::kKernels, row, &line);
  EXPECT_EQ(line.rfind("{\"schema_version\":1,\"job\":null,", 0), 0u) << line;
  EXPECT_NE(line.find("\"name\":\"void k<int, float>(\\\"x\\\")\",\"kernel_class\":null,"),
            std::string::npos)
      << line;
}

TEST(SummarizeCommandTest, FilesOfOneWindowAreOneWindowWhereverTheyLie) {
  TempDir tmp;
  // One window whose ranks two hosts wrote into directories of their own, a second window,
  // and a whole run in two directories (two windows: one per directory).
  Window(tmp.File("a/gpt_synth/") + kStamp1, kStamp1);
  fs::create_directories(tmp.File("b/gpt_synth/") + kStamp1);
  for (const char* moved : {"gpt.rank2.pb.zst", "gpt.rank3.pb.zst"}) {
    fs::rename(tmp.File("a/gpt_synth/") + kStamp1 + "/" + moved,
               tmp.File("b/gpt_synth/") + kStamp1 + "/" + moved);
  }
  Window(tmp.File("a/gpt_synth/") + kStamp2, kStamp2);
  Window(tmp.File("runs/1"), "");
  Window(tmp.File("runs/2"), "");
  // A file still being written is not read.
  WriteFileBytes(tmp.File("runs/2/gpt.rank9.pb.zst.partial"), "half");
  const auto r = Summarize(tmp.path() + " -o " + tmp.File("out"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // 4 windows x 4 ranks x 2 iterations.
  EXPECT_EQ(r.out.rfind(tmp.File("out") + ": 4 window(s), 32 iteration, ", 0), 0u) << r.out;
  const std::string manifest = ReadFileBytes(tmp.File("out/manifest.json"));
  EXPECT_NE(manifest.find("\"format\":\"lumos-summary\",\"summary_version\":1"), std::string::npos);
  EXPECT_NE(manifest.find("{\"job\":\"gpt_synth\",\"window_stamp\":\"" + std::string(kStamp1) +
                          "\",\"directory\":\"" + tmp.File("a/gpt_synth/") + kStamp1 +
                          "\",\"files\":4,\"ranks\":4,"),
            std::string::npos)
      << manifest;
  EXPECT_FALSE(fs::exists(tmp.File("out.partial")));
}

TEST(SummarizeCommandTest, AWindowThatFailsIsOneLineAndTheOthersAreSummarized) {
  TempDir tmp;
  Window(tmp.File("w/gpt_synth/") + kStamp1, kStamp1);
  Window(tmp.File("w/gpt_synth/") + kStamp2, kStamp2);
  // Two files of one rank in the second window: that window cannot be loaded.
  const std::string dir2 = tmp.File("w/gpt_synth/") + kStamp2;
  fs::copy_file(dir2 + "/gpt.rank0.pb.zst", dir2 + "/gpt.rank0-copy.pb.zst");
  const auto r = Summarize(tmp.File("w") + " -o " + tmp.File("out"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("lumos-model summarize: job gpt_synth window " + std::string(kStamp2) +
                            " (" + dir2 + "): " + dir2 + "/gpt.rank0",
                        0),
            0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out.rfind(tmp.File("out") + ": 1 window(s) (1 failed), 8 iteration, ", 0), 0u)
      << r.out;
  const std::string manifest = ReadFileBytes(tmp.File("out/manifest.json"));
  EXPECT_NE(manifest.find("\"files\":5,\"error\":\""), std::string::npos) << manifest;
}

TEST(SummarizeCommandTest, NeverOverwritesAnExistingOutputUnlessASummaryWithForce) {
  TempDir tmp;
  Window(tmp.File("w/gpt_synth/") + kStamp1, kStamp1);
  const std::string in = tmp.File("w");
  // A user's directory: refused, with --force too; nothing in it touched.
  fs::create_directories(tmp.File("mine"));
  WriteFileBytes(tmp.File("mine/notes.txt"), "keep");
  for (const char* force : {"", " --force"}) {
    const auto r = Summarize(in + " -o " + tmp.File("mine") + force);
    EXPECT_EQ(r.exit_code, 2) << force;
    EXPECT_NE(r.err.find(tmp.File("mine") + " exists"), std::string::npos) << r.err;
    EXPECT_EQ(ReadFileBytes(tmp.File("mine/notes.txt")), "keep");
    EXPECT_FALSE(fs::exists(tmp.File("mine.partial")));
  }
  // A summary: refused without --force, replaced with it (the new one whole, the old gone).
  ASSERT_EQ(Summarize(in + " -o " + tmp.File("s") + " --format csv").exit_code, 0);
  EXPECT_EQ(Summarize(in + " -o " + tmp.File("s")).exit_code, 2);
  EXPECT_TRUE(fs::exists(tmp.File("s/iterations.csv")));
  const auto r = Summarize(in + " -o " + tmp.File("s") + " --force");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(tmp.File("s/iterations.ndjson")));
  EXPECT_FALSE(fs::exists(tmp.File("s/iterations.csv")));
  EXPECT_FALSE(fs::exists(tmp.File("s.partial")));
  // A summary the user put other files in: refused even with --force, before anything is read
  // (the swap moved them into s.partial, which then blocked the next run); nothing moved.
  ::lumos::testing::WriteFileBytes(tmp.File("s/notes.txt"), "mine");
  const auto mixed = Summarize(in + " -o " + tmp.File("s") + " --force");
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.err.find("holding files summarize did not write (notes.txt)"), std::string::npos)
      << mixed.err;
  EXPECT_EQ(::lumos::testing::ReadFileBytes(tmp.File("s/notes.txt")), "mine");
  EXPECT_TRUE(fs::exists(tmp.File("s/iterations.ndjson")));
  EXPECT_FALSE(fs::exists(tmp.File("s.partial")));
  // A leftover OUT.partial (a killed run) is refused, not removed.
  fs::create_directories(tmp.File("t.partial"));
  const auto left = Summarize(in + " -o " + tmp.File("t"));
  EXPECT_EQ(left.exit_code, 2);
  EXPECT_NE(left.err.find("t.partial exists"), std::string::npos) << left.err;
  EXPECT_FALSE(fs::exists(tmp.File("t")));
}

}  // namespace
}  // namespace lumos::modeler::summarize
