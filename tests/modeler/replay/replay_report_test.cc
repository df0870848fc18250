// The text report's first screen as a newcomer reads it: one clock line per host (ranks with
// no host name share one line, a single host says there is nothing to align), the validation
// header counts exactly the issues listed under it (or says how many are not listed), and the
// critical path's total says what it is (the mean per iteration, which is the mean replayed
// iteration), on the bundled example, a shared HTA trace and a hand-built report.
#include "modeler/replay/replay_report.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "modeler/graph/clock_alignment.h"
#include "modeler/import/kineto_import.h"
#include "modeler/replay/replay_cli.h"
#include "tests/testing/job_builder.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using lumos::testing::TempDir;

std::string ReplayText(const std::vector<std::string>& args) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  const int code = RunReplayCommand(args, out, err);
  std::string text = ::lumos::modeler::testing::ReadAll(out);
  const std::string errors = ::lumos::modeler::testing::ReadAll(err);
  std::fclose(out);
  std::fclose(err);
  EXPECT_EQ(code, 0) << errors;
  return text;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> LinesStartingWith(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& line : Lines(text)) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

// "validation: N issue(s)" is followed by N indented lines, or by fewer and "... and M more
// not listed" with the two adding up to N.
void ExpectValidationCountMatchesItsList(const std::string& text) {
  const std::vector<std::string> lines = Lines(text);
  const std::regex header(R"(^validation: (\d+) issue\(s\)$)");
  const std::regex more(R"(^  \.\.\. and (\d+) more not listed$)");
  size_t headers = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, header)) continue;
    ++headers;
    const uint64_t issues = std::stoull(m[1]);
    uint64_t listed = 0, not_listed = 0;
    for (size_t j = i + 1; j < lines.size() && lines[j].rfind("  ", 0) == 0; ++j) {
      std::smatch n;
      if (std::regex_match(lines[j], n, more)) {
        not_listed = std::stoull(n[1]);
      } else {
        ++listed;
      }
    }
    EXPECT_EQ(listed + not_listed, issues) << text;
  }
  EXPECT_EQ(headers, 1u) << text;
}

// The critical path's header gives the mean per iteration; it equals the mean replayed
// iteration of the JSON report, and the classes under it add up to it.
void ExpectCriticalPathIsPerIteration(const std::string& text, const std::string& json,
                                      size_t iterations, size_t ranks) {
  std::smatch m;
  const std::regex header(
      R"(critical path \(replayed; mean per iteration over (\d+) iterations? of (\d+) )"
      R"(ranks?: ([0-9.]+) ms\))");
  ASSERT_TRUE(std::regex_search(text, m, header)) << text;
  EXPECT_EQ(std::stoul(m[1]), iterations);
  EXPECT_EQ(std::stoul(m[2]), ranks);
  const double mean_ms = std::stod(m[3]);
  double replayed_ns = 0;
  size_t count = 0;
  // Each iteration's (top kernels have a "replayed_ns" too).
  const std::regex replayed(R"("replayed_start_ns":"?-?\d+"?,"replayed_ns":(\d+))");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), replayed);
       it != std::sregex_iterator(); ++it) {
    replayed_ns += std::stod((*it)[1]);
    ++count;
  }
  ASSERT_EQ(count, iterations);
  EXPECT_NEAR(mean_ms, replayed_ns / static_cast<double>(count) / 1e6, 0.0005);
  // The classes: the indented lines up to "top items".
  const size_t from = text.find('\n', text.find("critical path (replayed")) + 1;
  const size_t to = text.find("  top items", from);
  ASSERT_NE(to, std::string::npos);
  double classes_ms = 0;
  size_t classes = 0;
  const std::regex row(R"(^  .*? ([0-9.]+) ms +[0-9.]+ %$)");
  for (const std::string& line : Lines(text.substr(from, to - from))) {
    std::smatch r;
    ASSERT_TRUE(std::regex_match(line, r, row)) << line;
    classes_ms += std::stod(r[1]);
    ++classes;
  }
  EXPECT_NEAR(classes_ms, mean_ms, 0.0005 * static_cast<double>(classes + 1));
}

TEST(ReplayReportTest, ExampleFirstScreen) {
  const std::string example = std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank";
  const std::string text = ReplayText({example});
  // The example's traces name no host: one line for its eight ranks, no "host ?".
  const auto clocks = LinesStartingWith(text, "clock:");
  ASSERT_EQ(clocks.size(), 1u) << text;
  EXPECT_EQ(clocks[0].rfind("clock: host not recorded for ranks 0-7 (each aligned on its own)", 0),
            0u)
      << clocks[0];
  EXPECT_EQ(text.find("host ?"), std::string::npos);
  ExpectValidationCountMatchesItsList(text);
  ExpectCriticalPathIsPerIteration(text, ReplayText({example, "--json"}), 8, 8);
  EXPECT_NE(text.find("top kernels (sum over 8 iterations of 8 ranks)"), std::string::npos);
}

TEST(ReplayReportTest, SingleHostTraceFirstScreen) {
  TempDir dir;
  auto imported = kineto::ImportKineto(
      {{std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/hta-single-rank/rank0.json.gz"},
       dir.File("out"),
       "",
       1});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  const std::string trace = imported->front().output_path;
  const std::string text = ReplayText({trace});
  const auto clocks = LinesStartingWith(text, "clock:");
  ASSERT_EQ(clocks.size(), 1u) << text;
  EXPECT_EQ(clocks[0], "clock: one host (name not recorded; rank 0): nothing to align");
  ExpectValidationCountMatchesItsList(text);
  ExpectCriticalPathIsPerIteration(text, ReplayText({trace, "--json"}), 5, 1);
}

// Four ranks on two named hosts, and more validation issues than diagnostics kept.
TEST(ReplayReportTest, NamedHostsAndIssuesNotListed) {
  Job job;
  job.job_id = "hosts";
  for (int32_t r = 0; r < 4; ++r) {
    ::lumos::modeler::testing::RankBuilder(&job, r, 4)
        .Api(schema::ApiKind::kLaunchKernel, "cudaLaunchKernel", 0, 5, 1)
        .Kernel("k", 7, 10, 10, 1)
        .Step("ProfilerStep#1", 0, 30);
    ::lumos::modeler::testing::MoveToHost(&job, static_cast<size_t>(r), r < 2 ? "node-a" : "node-b",
                                          0);
  }
  ReplayReport report;
  report.job_id = job.job_id;
  report.alignment = AlignClocks(job);
  ExecutionGraph graph = BuildGraph(job, report.alignment.rank_offset_ns);
  report.graph = &graph;
  graph.diagnostics.push_back({0, 0, "a note from building the graph"});
  report.first_validation_diagnostic = graph.diagnostics.size();
  graph.diagnostics.push_back({kWholeJob, 0, "first issue"});
  graph.diagnostics.push_back({kWholeJob, 0, "second issue"});
  report.validation_issues = 5;
  const SimResult sim = Simulate(graph, MeasuredScenario(graph));
  report.iterations = AnalyzeIterations(job, graph, sim, {});
  std::FILE* out = std::tmpfile();
  WriteTextReport(report, out);
  const std::string text = ::lumos::modeler::testing::ReadAll(out);
  std::fclose(out);
  const auto clocks = LinesStartingWith(text, "clock:");
  ASSERT_EQ(clocks.size(), 2u) << text;
  EXPECT_EQ(clocks[0].rfind("clock: host node-a (ranks 0-1): offset", 0), 0u) << clocks[0];
  EXPECT_EQ(clocks[1].rfind("clock: host node-b (ranks 2-3): offset", 0), 0u) << clocks[1];
  // The note stays with the graph, above the validation header; two issues of five listed.
  EXPECT_LT(text.find("a note from building the graph"), text.find("validation: 5 issue(s)"));
  EXPECT_NE(text.find("validation: 5 issue(s)\n  first issue\n  second issue\n"
                      "  ... and 3 more not listed\n"),
            std::string::npos)
      << text;
  ExpectValidationCountMatchesItsList(text);
  EXPECT_NE(text.find("critical path (replayed; mean per iteration over 4 iterations of 4 ranks: "
                      "0.030 ms)"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace lumos::modeler
