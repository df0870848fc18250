// lumos-model diff as a user runs it: the real binary. A real trace diffed with itself changes
// nothing anywhere; a synth gpt job against the same job with one kernel scaled and one rank
// slowed names that kernel first and that rank, with the sums the test takes from the two
// runs' raw events itself; the timeline holds both runs, B shifted onto A's iteration.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/job.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/param_names.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

std::string SharedTraces() { return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces"; }
std::string Example() { return std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"; }

::lumos::testing::CommandResult Diff(const std::string& args) {
  return RunCommand(LumosModelBinary() + " diff " + args);
}

int64_t IntOf(simdjson::dom::element e) {
  if (e.is_string()) return std::stoll(std::string(std::string_view(e)));  // Beyond 2^53.
  return e.is_uint64() ? static_cast<int64_t>(uint64_t(e)) : int64_t(e);
}

// What the test counts itself, from a run's raw events: per rank, its kernels (all of them,
// NCCL's too) whose start lies in one of its ProfilerStep ranges, and how many ranges.
struct RawRun {
  std::map<int32_t, int64_t> kernel_ns;  // Per rank.
  int64_t named_ns = 0;                  // Kernels whose name has `name_part`.
  uint64_t named_count = 0;
  uint64_t rank_iterations = 0;
  std::map<int32_t, int64_t> first_step_ns;  // Per rank, with its clock offset.
};

RawRun CountRaw(const std::string& dir, std::string_view name_part) {
  RawRun out;
  StatusOr<std::vector<std::string>> paths = ExpandTracePaths({dir});
  EXPECT_TRUE(paths.ok());
  StatusOr<Job> job = LoadJob(*paths);
  EXPECT_TRUE(job.ok()) << job.status().message();
  const ClockAlignment alignment = AlignClocks(*job);
  for (size_t i = 0; i < job->ranks.size(); ++i) {
    const RankTrace& r = job->ranks[i];
    std::vector<std::pair<int64_t, int64_t>> steps;
    for (const schema::HostRangeEvent& h : r.host_ranges) {
      if (h.name.rfind("ProfilerStep#", 0) != 0) continue;
      steps.emplace_back(h.start_ns, h.start_ns + static_cast<int64_t>(h.duration_ns));
    }
    std::sort(steps.begin(), steps.end());
    out.rank_iterations += steps.size();
    if (!steps.empty())
      out.first_step_ns[r.rank] = steps.front().first + alignment.rank_offset_ns[i];
    for (const schema::KernelEvent& k : r.kernels) {
      bool inside = false;
      for (const auto& [start, end] : steps)
        inside = inside || (k.start_ns >= start && k.start_ns < end);
      if (!inside) continue;
      out.kernel_ns[r.rank] += static_cast<int64_t>(k.duration_ns);
      if (k.name.find(name_part) != std::string_view::npos) {
        out.named_ns += static_cast<int64_t>(k.duration_ns);
        ++out.named_count;
      }
    }
  }
  return out;
}

class SelfDiffTest : public ::testing::TestWithParam<const char*> {};

// Every shared real trace against itself: zero change in every row, every key in both.
TEST_P(SelfDiffTest, ChangesNothing) {
  const std::string input = SharedTraces() + "/" + GetParam();
  if (access(input.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << input;
  TempDir dir;
  const auto imported = RunCommand(LumosModelBinary() + " import kineto " + input + " -o " +
                                   dir.File("run") + " --zstd-level 1");
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const auto r = Diff(dir.File("run") + " " + dir.File("run") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(std::string_view(doc["format"]), "lumos-diff");
  EXPECT_GT(IntOf(doc["a"]["rank_iterations"]), 0);
  EXPECT_EQ(std::string_view(doc["headline"]).rfind("B is as fast as A per iteration", 0), 0u);
  EXPECT_EQ(IntOf(doc["iteration"]["delta_median_ns"]), 0);
  EXPECT_EQ(double(doc["iteration"]["a_mean_ns"]), double(doc["iteration"]["b_mean_ns"]));
  for (const char* part : {"breakdown", "host"}) {
    for (auto [key, value] : simdjson::dom::object(doc[part])) {
      EXPECT_EQ(double(value["delta_ns"]), 0.0) << part << " " << key;
    }
  }
  // The same calls at the same pace (a trace too short to compare has none).
  if (!doc["host_pace"].is_null()) {
    EXPECT_EQ(double(doc["host_pace"]["ratio"]), 1.0);
    EXPECT_GE(IntOf(doc["host_pace"]["matched_gaps"]), 20);
  }
  size_t rows = 0;
  for (const char* table : {"kernels", "collectives"}) {
    for (simdjson::dom::element row : simdjson::dom::array(doc[table])) {
      ++rows;
      EXPECT_EQ(std::string_view(row["status"]), "both");
      EXPECT_EQ(IntOf(row["a_count"]), IntOf(row["b_count"]));
      EXPECT_EQ(IntOf(row["a_total_ns"]), IntOf(row["b_total_ns"]));
      EXPECT_EQ(double(row["delta_ns_per_iteration"]), 0.0);
    }
  }
  EXPECT_GT(rows, 0u);
  for (simdjson::dom::element rank : simdjson::dom::array(doc["ranks"])) {
    EXPECT_EQ(double(rank["delta_compute_ns_per_iteration"]), 0.0);
    EXPECT_EQ(IntOf(rank["a"]["median_iteration_ns"]), IntOf(rank["b"]["median_iteration_ns"]));
  }
  const auto text = Diff(dir.File("run") + " " + dir.File("run") + " --top 3");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("\nB is as fast as A per iteration"), std::string::npos) << text.out;
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, SelfDiffTest,
                         ::testing::ValuesIn(::lumos::testing::kSharedTraces),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return ::lumos::testing::TraceParamName(info.param);
                         });

// B: flash attention forward twice as long everywhere, rank 3's kernels 1.3 times as long.
TEST(DiffCommandTest, NamesTheScaledKernelFirstAndTheSlowRank) {
  TempDir dir;
  const std::string synth = LumosModelBinary() + " synth gpt --set layers=2,iterations=3 -o ";
  ASSERT_EQ(RunCommand(synth + dir.File("a")).exit_code, 0);
  ASSERT_EQ(
      RunCommand(synth + dir.File("b") + " --scale kernel:flash_fwd=4 --slow-rank 3=1.3").exit_code,
      0);
  const RawRun a = CountRaw(dir.File("a"), "flash_fwd");
  const RawRun b = CountRaw(dir.File("b"), "flash_fwd");
  ASSERT_EQ(a.rank_iterations, 12u);  // 4 ranks x 3 iterations.
  ASSERT_GT(a.named_count, 0u);

  const auto r = Diff(dir.File("a") + " " + dir.File("b") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_GT(IntOf(doc["iteration"]["delta_median_ns"]), 0);
  EXPECT_EQ(IntOf(doc["a"]["rank_iterations"]), 12);
  // The kernel: first by contribution, its sums the raw ones, per iteration = sum / 12.
  simdjson::dom::element top = simdjson::dom::array(doc["kernels"]).at(0);
  EXPECT_NE(std::string_view(top["name"]).find("flash_fwd"), std::string_view::npos)
      << std::string_view(top["name"]);
  EXPECT_EQ(static_cast<uint64_t>(IntOf(top["a_count"])), a.named_count);
  EXPECT_EQ(static_cast<uint64_t>(IntOf(top["b_count"])), b.named_count);
  EXPECT_EQ(IntOf(top["a_total_ns"]), a.named_ns);
  EXPECT_EQ(IntOf(top["b_total_ns"]), b.named_ns);
  EXPECT_NEAR(double(top["delta_ns_per_iteration"]),
              static_cast<double>(b.named_ns - a.named_ns) / 12.0, 0.1);
  // x4 everywhere, x1.3 more on one rank of four: between 4 and 4 x 1.3.
  const double ratio = static_cast<double>(b.named_ns) / static_cast<double>(a.named_ns);
  EXPECT_GT(ratio, 4.0 * 0.999);
  EXPECT_LT(ratio, 4.0 * 1.3);
  // Nothing got faster: the other kernels changed only on rank 3, by its 1.3.
  for (simdjson::dom::element row : simdjson::dom::array(doc["kernels"])) {
    if (std::string_view(row["name"]).find("flash_fwd") != std::string_view::npos) continue;
    EXPECT_GE(double(row["delta_ns_per_iteration"]), 0.0) << std::string_view(row["name"]);
  }
  // The rank: 3 first, computing longer; its kernel and collective sums the raw ones.
  simdjson::dom::array ranks = doc["ranks"];
  ASSERT_EQ(ranks.size(), 4u);
  simdjson::dom::element slow = ranks.at(0);
  EXPECT_EQ(IntOf(slow["rank"]), 3);
  EXPECT_GT(double(slow["delta_compute_ns_per_iteration"]), 0.0);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_GT(double(slow["delta_compute_ns_per_iteration"]),
              5 * double(ranks.at(i)["delta_compute_ns_per_iteration"]));
  }
  for (simdjson::dom::element rank : ranks) {
    const auto id = static_cast<int32_t>(IntOf(rank["rank"]));
    EXPECT_EQ(IntOf(rank["a"]["kernel_total_ns"]) + IntOf(rank["a"]["collective_total_ns"]),
              a.kernel_ns.at(id));
    EXPECT_EQ(IntOf(rank["b"]["kernel_total_ns"]) + IntOf(rank["b"]["collective_total_ns"]),
              b.kernel_ns.at(id));
  }
  // The text: the headline says slower, names the rank; the kernel table's first row is it.
  const auto text = Diff(dir.File("a") + " " + dir.File("b") + " --top 2");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("\nB is +"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("% slower per iteration"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("; rank 3 computes +"), std::string::npos) << text.out;
  const size_t table = text.out.find("\nkernels by |B - A|");
  ASSERT_NE(table, std::string::npos) << text.out;
  const size_t first_row = text.out.find('\n', text.out.find('\n', table + 1) + 1) + 1;
  const std::string row = text.out.substr(first_row, text.out.find('\n', first_row) - first_row);
  EXPECT_NE(row.find("flash::flash_fwd_kernel"), std::string::npos) << text.out;
  EXPECT_EQ(row.find("  +"), row.find_first_not_of(' ') - 2) << row;  // A positive change.
}

// Both runs in one trace: A/rank R and B/rank R, B's first matched iteration where A's is.
TEST(DiffCommandTest, TimelineHoldsBothRunsAlignedAtAnIteration) {
  TempDir dir;
  ASSERT_EQ(
      RunCommand(LumosModelBinary() + " synth gpt --set layers=1 -o " + dir.File("a")).exit_code,
      0);
  // B: the bundled real 8-rank DLRM job, on a clock of its own.
  const auto r = Diff(dir.File("a") + " " + Example() + " --timeline " + dir.File("t.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: ranks only in B: 4, 5, 6, 7"), std::string::npos) << r.out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(dir.File("t.json")).get(doc), simdjson::SUCCESS);
  const RawRun a = CountRaw(dir.File("a"), "-");
  const RawRun b = CountRaw(Example(), "-");
  simdjson::dom::element meta = doc["metadata"]["lumos_diff"];
  EXPECT_EQ(IntOf(meta["aligned_rank"]), 0);
  EXPECT_EQ(IntOf(meta["b_shift_ns"]), a.first_step_ns.at(0) - b.first_step_ns.at(0));
  std::map<int64_t, std::string> process;
  std::map<std::string, double> first_iteration;  // Per process: its earliest iteration.
  uint64_t slices = 0;
  for (simdjson::dom::element e : simdjson::dom::array(doc["traceEvents"])) {
    const std::string_view ph = e["ph"];
    if (ph == "M" && std::string_view(e["name"]) == "process_name") {
      process[IntOf(e["pid"])] = std::string(std::string_view(e["args"]["name"]));
    }
    if (ph != "X") continue;
    ++slices;
    if (IntOf(e["tid"]) != 0) continue;
    const std::string& p = process.at(IntOf(e["pid"]));
    const double ts = e["ts"];
    if (first_iteration.count(p) == 0 || ts < first_iteration[p]) first_iteration[p] = ts;
  }
  std::set<std::string> names;
  for (const auto& [pid, name] : process) names.insert(name);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(names.count("A/rank " + std::to_string(i)), 1u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(names.count("B/rank " + std::to_string(i)), 1u);
  EXPECT_EQ(names.size(), 12u);
  EXPECT_GT(slices, 1000u);
  ASSERT_EQ(first_iteration.count("A/rank 0"), 1u);
  ASSERT_EQ(first_iteration.count("B/rank 0"), 1u);
  EXPECT_EQ(first_iteration["A/rank 0"], first_iteration["B/rank 0"]);
}

TEST(DiffCommandTest, BadArgumentsAreUsageErrors) {
  TempDir dir;
  for (const std::string& args : {Example(), Example() + " " + Example() + " " + Example(),
                                  Example() + " " + Example() + " --top 0"}) {
    const auto r = Diff(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("lumos-model diff: "), std::string::npos) << r.err;
  }
  const auto three = Diff(Example() + " " + Example() + " " + Example());
  EXPECT_NE(three.err.find("exactly two inputs (A B) expected, got 3"), std::string::npos)
      << three.err;
  // A timeline that is one of the inputs is refused before anything is read or written.
  StatusOr<std::vector<std::string>> inputs = ExpandTracePaths({Example()});
  ASSERT_TRUE(inputs.ok());
  const auto same = Diff(Example() + " " + Example() + " --timeline " + inputs->front());
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_NE(same.err.find("is also an input"), std::string::npos) << same.err;
}

// A side that cannot be compared (here: it holds no job of that id) is one line naming it.
TEST(DiffCommandTest, ASideWithNothingToCompareIsOneLineNamingIt) {
  TempDir dir;
  ASSERT_EQ(
      RunCommand(LumosModelBinary() + " synth gpt --set layers=1 -o " + dir.File("a")).exit_code,
      0);
  const auto r = Diff(dir.File("a") + " " + Example() + " --job gpt_synth");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("lumos-model diff: B (" + Example() + "): ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  // --job-b names B's own job: then both load.
  const auto both = Diff(dir.File("a") + " " + Example() + " --job gpt_synth --job-b dlrm_kineto");
  EXPECT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.out.find("B: " + Example() + " (job dlrm_kineto, 8 rank(s)"), std::string::npos)
      << both.out;
}

}  // namespace
}  // namespace lumos::modeler
