// How the graph's notes and validation lines read: durations in ms (µs below 1 ms) as the
// rest of the report gives times, and long kernel names cut short in the text report only
// (the JSON keeps them whole).
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "modeler/graph/duration_text.h"
#include "modeler/replay/replay_cli.h"
#include "tests/testing/job_builder.h"

namespace lumos::modeler::testing {
namespace {

using schema::ApiKind;

TEST(GraphNotesTest, DurationTextIsInMsOrUs) {
  EXPECT_EQ(DurationText(0), "0 µs");
  EXPECT_EQ(DurationText(250), "0.25 µs");
  EXPECT_EQ(DurationText(2'000), "2 µs");
  EXPECT_EQ(DurationText(28'000), "28 µs");
  EXPECT_EQ(DurationText(999'999), "999.999 µs");
  EXPECT_EQ(DurationText(1'500'000), "1.500 ms");
  EXPECT_EQ(DurationText(194'070'000), "194.070 ms");
  EXPECT_EQ(DurationText(-2'000), "-2 µs");
}

// Rank 0's kernel k starts 2 µs before its launch call (negative slack), and its allreduce
// ends at 40 µs, 1.5 ms before rank 1's starts (1540 µs): both are noted, and the validation
// line gives the larger.
TEST(GraphNotesTest, NotesAndValidationGiveDurationsInMsOrUs) {
  Job job;
  job.job_id = "notes";
  RankBuilder(&job, 0, 2)
      .Api(ApiKind::kLaunchKernel, "launch_k", 10, 5, 1)
      .Api(ApiKind::kLaunchKernel, "launch_nccl", 20, 5, 2)
      .Kernel("k", 7, 8, 12, 1)
      .Kernel("ncclKernel_AllReduce", 5, 30, 10, 2)
      .Collective(42, 0, 2, 5, 30, 10, 2);
  RankBuilder(&job, 1, 2)
      .Api(ApiKind::kLaunchKernel, "launch_nccl", 1530, 5, 1)
      .Kernel("ncclKernel_AllReduce", 5, 1540, 60, 1)
      .Collective(42, 0, 1, 5, 1540, 60, 2);
  ExecutionGraph graph = BuildGraph(job, {0, 0});
  EXPECT_EQ(Validate(&graph), 1u);
  std::vector<std::string> texts;
  for (const GraphDiagnostic& d : graph.diagnostics) texts.push_back(d.what);
  auto has = [&](const std::string& part) {
    for (const std::string& t : texts) {
      if (t.find(part) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("launch edge into 'k' has negative slack (2 µs: it started before"));
  EXPECT_TRUE(has("ended on rank 0 1.500 ms before it started on rank 1"));
  EXPECT_TRUE(has("2 dependencies have negative slack in the measurement (up to 1.500 ms)"));
  EXPECT_FALSE(has(" ns"));
}

std::string Replay(const std::vector<std::string>& args) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  const int code = RunReplayCommand(args, out, err);
  std::string text = ReadAll(out);
  EXPECT_EQ(code, 0) << ReadAll(err);
  std::fclose(out);
  std::fclose(err);
  return text;
}

// The bundled example's first note names a kernel of 471 characters.
TEST(GraphNotesTest, LongKernelNamesAreCutInTheTextReportOnly) {
  const std::string example = std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank";
  const std::string json = Replay({example, "--json"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(json, m, std::regex("GPU op '([^']*)' has no launching API call")));
  const std::string name = m[1];
  ASSERT_GT(name.size(), 400u);
  const std::string text = Replay({example});
  EXPECT_EQ(text.find(name), std::string::npos);
  EXPECT_NE(text.find("GPU op '" + name.substr(0, 80) + "…' has no launching API call"),
            std::string::npos)
      << text.substr(0, 2000);
}

}  // namespace
}  // namespace lumos::modeler::testing
