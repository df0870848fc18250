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

// The capture-window options set their variables; a bad value stops before the job runs, with
// the agent's reason; without --mode, the mode stays unset (the agent's default: continuous).
TEST(LumosRunTest, WindowOptionsSetTheirVariables) {
  auto on = RunCommand(LumosRun(
      "--mode periodic --period-s 30 --jitter 0.2 --window-iterations 5 --window-s 2.5 "
      "--iteration-marker 'train step' --max-disk 10G -- sh -c 'echo \"$LUMOS_MODE $LUMOS_PERIOD_S "
      "$LUMOS_JITTER $LUMOS_WINDOW_ITERATIONS $LUMOS_WINDOW_S $LUMOS_ITERATION_MARKER "
      "$LUMOS_MAX_DISK\"'"));
  EXPECT_EQ(on.exit_code, 0) << on.err;
  EXPECT_EQ(on.out, "periodic 30 0.2 5 2.5 train step 10G\n");
  EXPECT_EQ(on.err, "");
  auto off = RunCommand("env -u LUMOS_MODE " + LumosRun("sh -c 'echo \"[${LUMOS_MODE-unset}]\"'"));
  EXPECT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(off.out, "[unset]\n");
  auto bad = RunCommand(LumosRun("--mode sometimes -- sh -c 'echo ran'"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out, "");
  EXPECT_EQ(bad.err, Usage("--mode sometimes: LUMOS_MODE='sometimes': not continuous, periodic or "
                           "on-demand"));
  auto quota = RunCommand(LumosRun("--max-disk 1K -- sh -c 'echo ran'"));
  EXPECT_EQ(quota.exit_code, 2);
  EXPECT_EQ(quota.out, "");
  EXPECT_EQ(quota.err.rfind("lumos-run: --max-disk 1K: LUMOS_MAX_DISK='1K': outside 1048576..", 0),
            0u)
      << quota.err;
  // A window as long as the period: the second option that makes it so is the one named.
  auto overlap =
      RunCommand(LumosRun("--mode periodic --period-s 10 --window-s 10 -- sh -c 'echo ran'"));
  EXPECT_EQ(overlap.exit_code, 2);
  EXPECT_EQ(overlap.err, Usage("--window-s 10: LUMOS_WINDOW_S='10': not shorter than the period "
                               "(10 s)"));
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
        "--nvtx-chain off|cupti|PATH", "--clock tsc|monotonic", "--log-level LEVEL",
        "--mode continuous|periodic|on-demand", "--period-s S", "--jitter F",
        "--window-iterations K", "--window-s S", "--iteration-marker GLOB", "--max-disk SIZE"}) {
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
