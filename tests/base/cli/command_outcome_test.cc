// The exit status of a command run: input problems and failed outputs are 1, each one line on
// the error stream; an output stream that cannot be written (/dev/full) is a failed output.
#include "base/cli/command_outcome.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace lumos::cli {
namespace {

std::string Drain(std::FILE* file) {
  std::string text;
  std::rewind(file);
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), file)) > 0) text.append(buf, n);
  std::fclose(file);
  return text;
}

TEST(CommandOutcomeTest, NothingWrongIsZeroAndSaysNothing) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  CommandOutcome outcome("lumos-model inspect", out, err);
  std::fputs("report\n", out);
  EXPECT_EQ(outcome.Finish(), kExitOk);
  EXPECT_EQ(Drain(out), "report\n");
  EXPECT_EQ(Drain(err), "");
}

TEST(CommandOutcomeTest, EachProblemIsOneLineAndExitOne) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  CommandOutcome outcome("lumos-model export", out, err);
  outcome.InputProblem("a.pb.zst: byte offset 9: truncated frame");
  outcome.OutputFailed("out.json.tmp: write failed: No space left on device");
  std::fputs("the rest\n", out);
  EXPECT_EQ(outcome.exit_status(), kExitFailure);
  EXPECT_EQ(outcome.Finish(), kExitFailure);
  EXPECT_EQ(Drain(out), "the rest\n");
  EXPECT_EQ(Drain(err),
            "lumos-model export: a.pb.zst: byte offset 9: truncated frame\n"
            "lumos-model export: out.json.tmp: write failed: No space left on device\n");
  std::FILE* err2 = std::tmpfile();
  CommandOutcome fatal("lumos-model replay", stdout, err2);
  EXPECT_EQ(fatal.Fail("nothing to replay"), kExitFailure);
  EXPECT_EQ(Drain(err2), "lumos-model replay: nothing to replay\n");
}

// Text that cannot be written is a failure, said once, never exit 0.
TEST(CommandOutcomeTest, AFullOutputIsAFailedOutput) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full here";
  std::FILE* out = std::fopen("/dev/full", "w");
  ASSERT_NE(out, nullptr);
  std::FILE* err = std::tmpfile();
  CommandOutcome outcome("lumos-model inspect", out, err);
  std::fputs("a report that does not fit\n", out);
  EXPECT_EQ(outcome.Finish(), kExitFailure);
  std::fclose(out);
  EXPECT_EQ(Drain(err),
            "lumos-model inspect: cannot write to standard output: No space left on device\n");
}

}  // namespace
}  // namespace lumos::cli
