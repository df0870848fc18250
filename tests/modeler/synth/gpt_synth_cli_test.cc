// `lumos-model synth gpt` as a process: what it writes, what `inspect` and `replay` make of it,
// bad settings (one line, exit 2, nothing written), an existing directory's other files kept.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "modeler/graph/job.h"
#include "modeler/models/kernels/kernel_class.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using lumos::testing::CommandResult;
using lumos::testing::RunCommand;
using lumos::testing::TempDir;

CommandResult Model(const std::string& args) {
  return RunCommand(lumos::testing::LumosModelBinary() + " " + args);
}

size_t Lines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TEST(GptSynthCliTest, WritesEveryRankAndReplaysIt) {
  TempDir dir;
  const std::string out = dir.File("job");
  CommandResult r = Model("synth gpt -o " + out + " --set layers=2,iterations=2,tp=2,dp=4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("8 files"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("test double"), std::string::npos) << r.out;
  for (int rank = 0; rank < 8; ++rank) {
    EXPECT_TRUE(
        std::filesystem::is_regular_file(out + "/gpt.rank" + std::to_string(rank) + ".pb.zst"));
  }
  CommandResult inspect = Model("inspect " + out + "/gpt.rank5.pb.zst");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("gpt_synth"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("NVIDIA H100 80GB HBM3"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("producer   synthetic synth-gpt"), std::string::npos) << inspect.out;
  CommandResult replay = Model("replay " + out + " --json");
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_NE(replay.out.find("ProfilerStep#2"), std::string::npos);
}

TEST(GptSynthCliTest, AnotherGpuNamesItsDevice) {
  TempDir dir;
  CommandResult r =
      Model("synth gpt -o " + dir.path() + " --set gpu=A100-SXM4-80GB,tp=1,dp=2,layers=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CommandResult inspect = Model("inspect " + dir.File("gpt.rank0.pb.zst"));
  EXPECT_NE(inspect.out.find("A100"), std::string::npos) << inspect.out;
}

TEST(GptSynthCliTest, BadSettingsAreOneLineAndExitTwo) {
  const std::pair<const char*, const char*> cases[] = {
      {"--set layerz=3", "layerz"},         {"--set layers=abc", "layers"},
      {"--set layers=0", "layers"},         {"--set layers=2.5", "layers"},
      {"--set heads=15", "heads=15"},       {"--set tp=3", "tp=3"},
      {"--set tp=4,ffn=4098", "ffn=4098"},  {"--set pp=2", "pp=2"},
      {"--set seq=100000000", "mbs x seq"}, {"--set dp=1000,layers=300", "in memory together"},
      {"--set gpu=Z9000", "Z9000"},         {"--set layers", "layers"},
  };
  for (const auto& [args, named] : cases) {
    TempDir dir;
    const std::string out = dir.File("out");
    CommandResult r = Model("synth gpt -o " + out + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << args << ": " << r.err;
    // One error line, then the pointer to --help.
    EXPECT_EQ(Lines(r.err), 2u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << args;
  }
}

TEST(GptSynthCliTest, KeepsOtherFilesAndReplacesItsOwn) {
  TempDir dir;
  lumos::testing::WriteFileBytes(dir.File("notes.txt"), "mine");
  lumos::testing::WriteFileBytes(dir.File("gpt.rank0.pb.zst"), "old");
  // A rank's name holding a file synth did not write: refused, untouched, unless --force.
  CommandResult r = Model("synth gpt -o " + dir.path() + " --set layers=1,iterations=1");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("will not replace " + dir.File("gpt.rank0.pb.zst")), std::string::npos)
      << r.err;
  EXPECT_EQ(lumos::testing::ReadFileBytes(dir.File("gpt.rank0.pb.zst")), "old");
  r = Model("synth gpt -o " + dir.path() + " --set layers=1,iterations=1 --force");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lumos::testing::ReadFileBytes(dir.File("notes.txt")), "mine");
  EXPECT_GT(lumos::testing::ReadFileBytes(dir.File("gpt.rank0.pb.zst")).size(), 1000u);
  // Its own earlier output is replaced without --force.
  r = Model("synth gpt -o " + dir.path() + " --set layers=2,iterations=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(GptSynthCliTest, AnUnreadableCostModelIsExitOne) {
  TempDir dir;
  CommandResult r = Model("synth gpt -o " + dir.File("out") + " --costs " + dir.File("none.json"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("none.json"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("out")));
}

// The GEMM kernels' time in a job's traces.
int64_t GemmNs(const std::string& dir) {
  auto paths = ExpandTracePaths({dir});
  EXPECT_TRUE(paths.ok());
  auto job = LoadJob(*paths);
  EXPECT_TRUE(job.ok());
  int64_t total = 0;
  for (const RankTrace& r : job->ranks) {
    for (const auto& k : r.kernels) {
      if (models::ClassifyKernel(k.name) == models::KernelClass::kGemm) {
        total += static_cast<int64_t>(k.duration_ns);
      }
    }
  }
  return total;
}

TEST(GptSynthCliTest, AFittedCostModelGivesTheDurations) {
  TempDir dir;
  const std::string data = std::string(LUMOS_SOURCE_DIR) + "/../shared/data/costs/";
  CommandResult fit = Model("costs fit " + data + "gemm_h100_bf16.csv " + data +
                            "nccl_h100.csv -o " + dir.File("model.json"));
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const std::string args = " --set layers=2,iterations=1";
  ASSERT_EQ(Model("synth gpt -o " + dir.File("roofline") + args).exit_code, 0);
  CommandResult fitted =
      Model("synth gpt -o " + dir.File("fitted") + args + " --costs " + dir.File("model.json"));
  ASSERT_EQ(fitted.exit_code, 0) << fitted.err;
  // Measured H100 GEMMs run below the bf16 peak the roofline-only model assumes.
  EXPECT_GT(GemmNs(dir.File("fitted")), GemmNs(dir.File("roofline")));
  CommandResult replay = Model("replay " + dir.File("fitted"));
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_NE(replay.out.find("validation: 0 issue(s)"), std::string::npos) << replay.out;
}

TEST(GptSynthCliTest, HelpSaysItIsATestDouble) {
  CommandResult r = Model("synth gpt --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("TEST DOUBLE FOR A GPU RUN, NOT A MEASUREMENT"), std::string::npos);
  EXPECT_NE(r.out.find("micro_batches"), std::string::npos);
  CommandResult synth = Model("synth --help");
  EXPECT_NE(synth.out.find("synth gpt --help"), std::string::npos);
}

}  // namespace
}  // namespace lumos::modeler
