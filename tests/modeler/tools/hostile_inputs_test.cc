// Inputs made to hurt (issue 26): names long enough to break a backtracking regex engine, files
// whose frames each pass their caps but add up to more than the machine has, a flipped byte in
// one frame of many, outputs aimed at other people's traces. Each is a real lumos-model process
// on real files, bounded by timeout(1): it must answer or refuse with one clear line, never
// crash, hang or touch what it does not own.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "schema/writer/trace_file_writer.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::CommandResult;
using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

CommandResult RunBounded(const std::string& args) {
  return RunCommand("timeout -s KILL 60 " + LumosModelBinary() + " " + args);
}

// A rank whose 20 iterations are host ranges "op" + 100,000 'b's, each launching a kernel named
// 100,000 'a's + "_kernel". std::regex searched `(a|b)*_kernel` by recursing per character and
// died by SIGSEGV, with nothing on stderr.
void WriteLongNames(const std::string& path) {
  const std::string kernel = std::string(100'000, 'a') + "_kernel";
  const std::string range = "op" + std::string(100'000, 'b');
  auto writer = schema::TraceFileWriter::Create(path, ::lumos::testing::SampleHeader(0, 1),
                                                schema::WriterOptions());
  ASSERT_TRUE(writer.ok());
  for (uint64_t i = 1; i <= 20; ++i) {
    const int64_t t = static_cast<int64_t>(10'000 * i);
    (*writer)->Add(schema::HostRangeEvent{.start_ns = t,
                                          .duration_ns = 9'000,
                                          .thread_id = 7,
                                          .name = range,
                                          .category = schema::HostRangeCategory::kCpuOp});
    (*writer)->Add(schema::ApiCallEvent{.start_ns = t + 100,
                                        .duration_ns = 50,
                                        .thread_id = 7,
                                        .correlation_id = i,
                                        .kind = schema::ApiKind::kLaunchKernel,
                                        .name = "cudaLaunchKernel"});
    (*writer)->Add(schema::KernelEvent{.start_ns = t + 200,
                                       .duration_ns = 5'000,
                                       .correlation_id = i,
                                       .stream_id = 7,
                                       .name = kernel});
  }
  ASSERT_TRUE((*writer)->Close(250'000).ok());
}

TEST(HostileInputsTest, PatternsOverNamesOfAHundredThousandCharacters) {
  TempDir dir;
  const std::string trace = dir.File("long.pb.zst");
  WriteLongNames(trace);
  const std::string commands[] = {
      "replay " + trace + " --scale 'kernel:(a|b)*_kernel=2'",
      "replay " + trace + " --iteration 'op(b)+'",
      "structure " + trace + " --iteration 'op(b)+'",
      "diff " + trace + " " + trace + " --iteration 'op(b)+'",
      "summarize " + trace + " -o " + dir.File("tables") + " --iteration 'op(b)+' -q",
  };
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    const CommandResult r = RunBounded(command);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  // The scaled kernels took twice as long: the what-if reached them.
  const CommandResult scaled =
      RunBounded("replay " + trace + " --json --scale 'kernel:(a|b)*_kernel=2'");
  ASSERT_EQ(scaled.exit_code, 0) << scaled.err;
  const CommandResult plain = RunBounded("replay " + trace + " --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(scaled.out, plain.out);
  EXPECT_FALSE(std::filesystem::exists(dir.File("tables.partial")));
  // The 20 ranges are the iterations.
  const CommandResult iterations = RunBounded("replay " + trace + " --iteration 'op(b)+'");
  EXPECT_NE(iterations.out.find("20 iterations"), std::string::npos) << iterations.out;
}

TEST(HostileInputsTest, APatternRE2CannotCompileIsOneLineAndExit2) {
  TempDir dir;
  const std::string trace = dir.File("long.pb.zst");
  WriteLongNames(trace);
  const CommandResult backreference = RunBounded("replay " + trace + " --iteration '(a)\\1'");
  EXPECT_EQ(backreference.exit_code, 2);
  EXPECT_NE(backreference.err.find("--iteration '(a)\\1': not a valid regular expression (RE2 "
                                   "syntax): invalid escape sequence: \\1"),
            std::string::npos)
      << backreference.err;
  const CommandResult huge =
      RunBounded("replay " + trace + " --scale 'kernel:" + std::string(5000, 'x') + "=2'");
  EXPECT_EQ(huge.exit_code, 2);
  EXPECT_NE(huge.err.find("a pattern of 5000 characters (at most 4096)"), std::string::npos)
      << huge.err;
  // Any letter of any script, 1,000 times: a program of tens of MiB.
  const CommandResult big = RunBounded("replay " + trace + " --scale 'kernel:\\pL{1000}=2'");
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("compiles to more than 8 MiB"), std::string::npos) << big.err;
}

}  // namespace
}  // namespace lumos::modeler
