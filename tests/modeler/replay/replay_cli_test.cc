// `lumos-model replay` as a user runs it (in-process): help, argument errors, bad input, the
// bundled example, JSON and timeline outputs, byte-identical output on a second run.
#include "modeler/replay/replay_cli.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "modeler/graph/job.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/job_builder.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using lumos::testing::TempDir;

struct CliRun {
  int code = 0;
  std::string out, err;
};

CliRun Replay(const std::vector<std::string>& args) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  CliRun run;
  run.code = RunReplayCommand(args, out, err);
  run.out = ::lumos::modeler::testing::ReadAll(out);
  run.err = ::lumos::modeler::testing::ReadAll(err);
  std::fclose(out);
  std::fclose(err);
  return run;
}

std::string Example() { return std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"; }

TEST(ReplayCliTest, HelpAndArgumentErrors) {
  CliRun help = Replay({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("usage: lumos-model replay"), std::string::npos);
  EXPECT_EQ(Replay({}).code, 2);
  CliRun scale = Replay({Example(), "--scale", "kernel:(=2"});
  EXPECT_EQ(scale.code, 2);
  EXPECT_NE(scale.err.find("not a valid regular expression"), std::string::npos);
  EXPECT_EQ(Replay({Example(), "--iteration"}).code, 2);
  EXPECT_EQ(Replay({Example(), "--bogus"}).code, 2);
}

// --iterations chooses which iterations make the figures; the report says which were kept.
TEST(ReplayCliTest, IterationsChoosesAndTheReportSaysHow) {
  CliRun bad = Replay({Example(), "--iterations", "0"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--iterations '0'"), std::string::npos) << bad.err;
  CliRun all = Replay({Example()});
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_NE(all.out.find("kept: the only one)"), std::string::npos) << all.out;  // 1 per rank.
  CliRun first = Replay({Example(), "--iterations", "1"});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.out.find("kept: iteration 1 of 1 (--iterations 1)"), std::string::npos)
      << first.out;
  CliRun none = Replay({Example(), "--iterations", "2-"});
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_NE(none.out.find("kept: none of 1 (--iterations 2-)"), std::string::npos) << none.out;
}

TEST(ReplayCliTest, BadInputIsOneClearError) {
  TempDir dir;
  CliRun missing = Replay({dir.File("nope.pb.zst")});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("nope.pb.zst"), std::string::npos);
  std::ofstream(dir.File("junk.pb.zst")) << "not a trace";
  CliRun junk = Replay({dir.File("junk.pb.zst")});
  EXPECT_EQ(junk.code, 1);
  EXPECT_NE(junk.err.find("junk.pb.zst"), std::string::npos);
  EXPECT_EQ(std::count(junk.err.begin(), junk.err.end(), '\n'), 1);
}

TEST(ReplayCliTest, TwoJobsAreRefusedByName) {
  TempDir dir;
  std::filesystem::copy(Example() + "/worker0_step_12.1694128201545.pt.trace.pb.zst",
                        dir.File("a.pb.zst"));
  // The same trace under another job id: rewrite nothing, just a second job from the tests' data.
  std::filesystem::copy(std::string(LUMOS_SOURCE_DIR) + "/tests/data/schema_v2.0",
                        dir.File("other"), std::filesystem::copy_options::recursive);
  CliRun run = Replay({dir.path()});
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.err.find("jobs"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--job"), std::string::npos) << run.err;
  CliRun chosen = Replay({dir.path(), "--job", "dlrm_kineto"});
  EXPECT_EQ(chosen.code, 0) << chosen.err;
  EXPECT_NE(chosen.out.find("job dlrm_kineto: 1 rank(s)"), std::string::npos) << chosen.out;
  CliRun unknown = Replay({dir.path(), "--job", "nope"});
  EXPECT_EQ(unknown.code, 2);  // A bad argument (issue 26), with the pointer to --help.
  EXPECT_NE(unknown.err.find("--help"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("no files of job 'nope'"), std::string::npos) << unknown.err;
}

// The graph is reserved for the ranks LoadJob will load (on_rank_count): the chosen job's, not
// every file of the input (a directory of many runs would reserve for all of them).
TEST(ReplayCliTest, RankCountIsTheChosenJobsNotTheInputs) {
  TempDir dir;
  std::filesystem::copy(Example() + "/worker0_step_12.1694128201545.pt.trace.pb.zst",
                        dir.File("a.pb.zst"));
  std::filesystem::copy(std::string(LUMOS_SOURCE_DIR) + "/tests/data/schema_v2.0",
                        dir.File("other"), std::filesystem::copy_options::recursive);
  auto paths = ExpandTracePaths({dir.path()});
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  ASSERT_GT(paths->size(), 1u);
  LoadOptions options;
  options.job_id = "dlrm_kineto";
  std::vector<size_t> counts;
  options.on_rank_count = [&counts](size_t ranks) { counts.push_back(ranks); };
  auto job = LoadJob(*paths, options);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(counts, std::vector<size_t>{1});
  EXPECT_EQ(job->ranks.size(), 1u);
}

TEST(ReplayCliTest, ExampleReplaysWithReportJsonAndTimeline) {
  TempDir dir;
  CliRun text = Replay({Example()});
  ASSERT_EQ(text.code, 0) << text.err;
  for (const char* part :
       {"job dlrm_kineto: 8 rank(s)", "ProfilerStep#10", "mean |error|", "breakdown",
        "GPU busy per 1 ms bin", "critical path", "top kernels", "top collectives"}) {
    EXPECT_NE(text.out.find(part), std::string::npos) << part;
  }
  CliRun json = Replay({Example(), "--json", "--timeline", dir.File("timeline.json")});
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_EQ(json.out.rfind("{", 0), 0u);
  EXPECT_NE(json.out.find("\"mean_abs_error_percent\""), std::string::npos);
  EXPECT_NE(json.out.find("\"replayed_gpu_busy_1ms\""), std::string::npos);
  std::ifstream timeline(dir.File("timeline.json"));
  std::stringstream content;
  content << timeline.rdbuf();
  EXPECT_NE(content.str().find("\"rank 3 replayed\""), std::string::npos);
  EXPECT_NE(content.str().find("\"rank 3 measured\""), std::string::npos);
  // Same input, same bytes.
  CliRun again = Replay({Example(), "--json"});
  EXPECT_EQ(again.out, json.out);
}

TEST(ReplayCliTest, WhatIfChangesTheReplayOnly) {
  CliRun base = Replay({Example(), "--json"});
  CliRun faster = Replay({Example(), "--json", "--scale", "host=0.5"});
  ASSERT_EQ(faster.code, 0) << faster.err;
  EXPECT_NE(base.out, faster.out);
  EXPECT_NE(faster.out.find("--scale host=0.5"), std::string::npos);
}

}  // namespace
}  // namespace lumos::modeler
