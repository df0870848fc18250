// `lumos-model export` arguments, exit codes and messages: in-process through
// RunExportCommand, and a few cases through the real binary as a user runs it.
#include "modeler/export/export_cli.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/modeler/export/export_test_util.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

struct CliResult {
  int code = -1;
  std::string out, err;
};

std::string Drain(std::FILE* file) {
  std::string text;
  std::rewind(file);
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), file)) > 0) text.append(buf, n);
  std::fclose(file);
  return text;
}

CliResult RunCli(const std::vector<std::string>& args) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  CliResult result;
  result.code = RunExportCommand(args, out, err);
  result.out = Drain(out);
  result.err = Drain(err);
  return result;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

class ExportCliTest : public ::testing::Test {
 protected:
  void SetUp() override { export_test::WriteTwoRankScenario(dir_.path()); }
  TempDir dir_;
};

TEST_F(ExportCliTest, HelpDocumentsEveryFlag) {
  CliResult r = RunCli({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--output", "--no-flows", "--quiet", "--help", "exit status"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  }
}

TEST_F(ExportCliTest, UsageErrorsExitTwoAndWriteNothing) {
  std::string in = dir_.File("rank0.pb.zst");
  std::string out = dir_.File("out.json");
  const std::vector<std::vector<std::string>> cases = {
      {},
      {in},
      {"-o", out},
      {in, "-o"},
      {in, "-o", out, "--output", out},
      {in, "-o", out, "--frobnicate"},
      {in, "--output="},
      {in, "-o", in},
  };
  for (const auto& args : cases) {
    CliResult r = RunCli(args);
    std::string joined;
    for (const std::string& a : args) joined += a + " ";
    EXPECT_EQ(r.code, 2) << joined;
    EXPECT_NE(r.err.find("lumos-model export: "), std::string::npos) << joined;
    EXPECT_FALSE(Exists(out)) << joined;
  }
}

TEST_F(ExportCliTest, MissingOrUnreadableInputFailsWithOneLine) {
  std::string out = dir_.File("out.json");
  CliResult r = RunCli({dir_.File("nope.pb.zst"), "-o", out});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("nope.pb.zst"), std::string::npos) << r.err;
  WriteFileBytes(dir_.File("text.pb.zst"), "hello");
  r = RunCli({dir_.File("text.pb.zst"), "-o", out});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("text.pb.zst: byte offset 0"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_FALSE(Exists(out));
  for (const std::string& name : ::lumos::testing::ListDir(dir_.path())) {
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << name << " left behind";
  }
}

TEST_F(ExportCliTest, DirectoryGlobAndFileListGiveTheSameOutput) {
  std::string by_files = dir_.File("a.json"), by_dir = dir_.File("b.json");
  std::string by_glob = dir_.File("c.json");
  CliResult r = RunCli({dir_.File("rank1.pb.zst"), dir_.File("rank0.pb.zst"), "-o", by_files});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("from 2 trace files"), std::string::npos) << r.out;
  ASSERT_EQ(RunCli({dir_.path(), "--output", by_dir, "-q"}).code, 0);
  ASSERT_EQ(RunCli({dir_.File("rank*.pb.zst"), "--output=" + by_glob}).code, 0);
  std::string json = ReadFileBytes(by_files);
  EXPECT_EQ(ReadFileBytes(by_dir), json);
  EXPECT_EQ(ReadFileBytes(by_glob), json);
  export_test::ParsedTrace trace;
  ASSERT_TRUE(export_test::ParseTrace(json, &trace));
  EXPECT_EQ(trace.process_names.size(), 2u);
}

TEST_F(ExportCliTest, DamagedInputStillWritesAndExitsOne) {
  ::lumos::testing::WriteSampleTrace(dir_.File("big.pb.zst"), 3000, /*frame_bytes=*/8192);
  std::string bytes = ReadFileBytes(dir_.File("big.pb.zst"));
  std::string cut = dir_.File("cut.pb.zst");
  WriteFileBytes(cut, bytes.substr(0, bytes.size() / 2));
  std::string out = dir_.File("out.json");
  CliResult r = RunCli({dir_.File("rank0.pb.zst"), cut, "-o", out});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("lumos-model export: " + cut + ": byte offset ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("(exported the "), std::string::npos) << r.err;
  export_test::ParsedTrace trace;
  ASSERT_TRUE(export_test::ParseTrace(ReadFileBytes(out), &trace));
  EXPECT_EQ(trace.process_names.size(), 2u);
}

// The real binary, as a user runs it.
TEST_F(ExportCliTest, BinaryExitCodes) {
  const std::string binary = ::lumos::testing::LumosModelBinary();
  std::string out = dir_.File("out.json");
  auto ok = ::lumos::testing::RunCommand(binary + " export " + dir_.path() + " -o " + out);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.err, "");
  export_test::ParsedTrace trace;
  EXPECT_TRUE(export_test::ParseTrace(ReadFileBytes(out), &trace));

  auto usage = ::lumos::testing::RunCommand(binary + " export " + dir_.path());
  EXPECT_EQ(usage.exit_code, 2);
  auto help = ::lumos::testing::RunCommand(binary + " export --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: lumos-model export"), std::string::npos);

  std::string bytes = ReadFileBytes(dir_.File("rank0.pb.zst"));
  WriteFileBytes(dir_.File("cut.pb.zst"), bytes.substr(0, bytes.size() - 7));
  auto damaged =
      ::lumos::testing::RunCommand(binary + " export " + dir_.File("cut.pb.zst") + " -o " + out);
  EXPECT_EQ(damaged.exit_code, 1);
  EXPECT_NE(damaged.err.find("byte offset"), std::string::npos) << damaged.err;
  export_test::ParsedTrace partial;
  EXPECT_TRUE(export_test::ParseTrace(ReadFileBytes(out), &partial));
}

}  // namespace
}  // namespace lumos::modeler
