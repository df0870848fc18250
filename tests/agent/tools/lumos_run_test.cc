// lumos-run's command line as a user meets it (the real binary): both spellings of a value, a
// flag taken as a value, unknown and repeated options, the command's own options left alone,
// --help with every option under its heading, --version, and output that cannot be written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

using ::lumos::testing::RunCommand;

std::string LumosRun(const std::string& args) { return std::string(LUMOS_RUN_PATH) + " " + args; }

std::string Usage(const std::string& message) {
  return "lumos-run: " + message + "\n(run `lumos-run --help` for usage)\n";
}

TEST(LumosRunTest, BothSpellingsOfAValueSetTheVariable) {
  for (const char* args : {"--job-id=spelt --", "--job-id spelt", "--job-id spelt --"}) {
    auto r = RunCommand(LumosRun(std::string(args) + " sh -c 'echo $LUMOS_JOB_ID'"));
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
    EXPECT_EQ(r.out, "spelt\n") << args;
    EXPECT_EQ(r.err, "") << args;
  }
}

// A flag where a value belongs is an error: nothing runs, no directory named "--" is made.
TEST(LumosRunTest, AFlagTakenAsAValueIsAUsageError) {
  ::lumos::testing::TempDir cwd;
  auto r = RunCommand("cd " + cwd.path() + " && " + LumosRun("-o -- sh -c 'echo ran'"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, Usage("-o needs a value, got '--'"));
  EXPECT_TRUE(std::filesystem::is_empty(cwd.path()));
  auto channels = RunCommand(LumosRun("--job-id --channels nvtx -- sh -c 'echo ran'"));
  EXPECT_EQ(channels.exit_code, 2);
  EXPECT_EQ(channels.out, "");
  EXPECT_EQ(channels.err, Usage("--job-id needs a value, got '--channels' (for a value that "
                                "starts with '-', write --job-id=VALUE)"));
}

TEST(LumosRunTest, UnknownRepeatedAndMissing) {
  auto unknown = RunCommand(LumosRun("--zstd 3 -- true"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err, Usage("unknown option '--zstd' (did you mean --zstd-level?)"));
  auto twice = RunCommand(LumosRun("--job-id a --job-id b -- true"));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_EQ(twice.err, Usage("--job-id given twice"));
  auto none = RunCommand(LumosRun("-o /tmp"));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, Usage("no command given (COMMAND [ARGS...])"));
  auto bad = RunCommand(LumosRun("--clock=wall -- true"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.rfind("lumos-run: --clock wall: LUMOS_CLOCK", 0), 0u) << bad.err;
}

// The options end at COMMAND: its own (-o, --help) are its own.
TEST(LumosRunTest, TheCommandKeepsItsOwnOptions) {
  auto r = RunCommand(LumosRun("sh -c 'echo \"$@\"' sh -o x --help --version --"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "-o x --help --version --\n");
}

// Every option is listed, the LUMOS_* ones under their own heading (before the exit statuses).
TEST(LumosRunTest, HelpListsEveryOptionUnderItsHeading) {
  auto help = RunCommand(LumosRun("--help"));
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.err, "");
  EXPECT_EQ(help.out.rfind("usage: lumos-run [-o DIR] [OPTIONS] [--] COMMAND [ARGS...]\n", 0), 0u)
      << help.out;
  const size_t heading = help.out.find("\nagent options (each sets the LUMOS_* variable");
  const size_t exit_status = help.out.find("\nexit status: COMMAND's; 2 bad arguments");
  ASSERT_NE(heading, std::string::npos) << help.out;
  ASSERT_NE(exit_status, std::string::npos) << help.out;
  EXPECT_LT(heading, exit_status);
  for (const char* general : {"  -o DIR ", "  -h, --help ", "      --version "}) {
    const size_t at = help.out.find(general);
    EXPECT_LT(at, heading) << general;
  }
  for (const char* option :
       {"--job-id ID", "--channels LIST", "--max-file-bytes SIZE", "--flush-interval-ms MS",
        "--zstd-level N", "--ring-bytes SIZE", "--cupti-buffer-bytes SIZE", "--cupti-buffers N",
        "--nvtx-chain off|cupti|PATH", "--clock tsc|monotonic", "--log-level LEVEL"}) {
    const size_t at = help.out.find(std::string("      ") + option);
    EXPECT_GT(at, heading) << option;
    EXPECT_LT(at, exit_status) << option;
  }
}

TEST(LumosRunTest, VersionIsTheProjectsVersion) {
  auto r = RunCommand(LumosRun("--version"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("lumos-run ") + LUMOS_PROJECT_VERSION + "\n");
  EXPECT_EQ(r.err, "");
}

TEST(LumosRunTest, HelpThatCannotBeWrittenIsAFailure) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full here";
  auto r = RunCommand(LumosRun("--help >/dev/full"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "lumos-run: cannot write to standard output: No space left on device\n");
}

}  // namespace
}  // namespace lumos::agent
