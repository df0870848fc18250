// Bad input for `lumos-model replay`: missing ranks, a rank cut short, collectives whose seq
// numbers do not line up, events out of order, a clock that jumps. Each gives a diagnostic
// naming rank and time, what is sound is still replayed, and nothing crashes or hangs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "modeler/graph/job.h"
#include "modeler/replay/replay_cli.h"
#include "modeler/synth/job_synth.h"
#include "modeler/trace/trace_set.h"
#include "schema/writer/trace_file_writer.h"
#include "tests/testing/job_builder.h"
#include "tests/testing/sample_trace.h"
#include "tests/testing/trace_frames.h"

namespace lumos::modeler::testing {
namespace {

using lumos::testing::TempDir;
using schema::ApiKind;
namespace fs = std::filesystem;

std::string Example() { return std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"; }

int RunCli(const std::vector<std::string>& args, std::string* out, std::string* err) {
  std::FILE* o = std::tmpfile();
  std::FILE* e = std::tmpfile();
  const int code = RunReplayCommand(args, o, e);
  *out = ReadAll(o);
  *err = ReadAll(e);
  std::fclose(o);
  std::fclose(e);
  return code;
}

TEST(ReplayBadInputTest, MissingRankIsNamedAndTheOthersReplay) {
  TempDir dir;
  for (const auto& entry : fs::directory_iterator(Example())) {
    if (entry.path().filename().string().rfind("worker7_", 0) != 0) {
      fs::copy(entry.path(), dir.File(entry.path().filename().string()));
    }
  }
  std::string out, err;
  ASSERT_EQ(RunCli({dir.path()}, &out, &err), 0) << err;
  EXPECT_NE(out.find("ranks missing: 7"), std::string::npos) << out;
  EXPECT_NE(out.find("job dlrm_kineto: 7 rank(s)"), std::string::npos);
  EXPECT_NE(out.find("ProfilerStep#10"), std::string::npos);
}

TEST(ReplayBadInputTest, RankCutShortIsNamedAndReplayedAsFarAsItGoes) {
  // The example, repeated, in small frames, so a cut keeps some of them.
  TempDir dir;
  auto example = ExpandTracePaths({Example()});
  ASSERT_TRUE(example.ok());
  auto base = LoadJob(*example);
  ASSERT_TRUE(base.ok()) << base.status().message();
  SynthOptions options;
  options.iterations = 3;
  options.frame_bytes = 16 << 10;
  ASSERT_TRUE(SynthesizeJob(*base, options, dir.File("job")).ok());
  std::string victim;
  for (const auto& entry : fs::directory_iterator(dir.File("job"))) {
    if (entry.path().string().find(".rank2.") != std::string::npos) victim = entry.path();
  }
  ASSERT_FALSE(victim.empty());
  fs::resize_file(victim, fs::file_size(victim) * 6 / 10);
  std::string out, err;
  // Damaged input: exit 1 and one line on stderr naming the file; the report still comes, and
  // says what it was computed from.
  ASSERT_EQ(RunCli({dir.File("job")}, &out, &err), 1) << err;
  EXPECT_EQ(err.rfind("lumos-model replay: " + victim + ": byte offset ", 0), 0u) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(out.find("rank 2 is cut short"), std::string::npos) << out;
  EXPECT_NE(out.find("byte offset"), std::string::npos) << out;
  EXPECT_NE(out.find("mean |error|"), std::string::npos);
}

TEST(ReplayBadInputTest, DataAfterTheTrailerIsDamageButTheRankIsWhole) {
  TempDir dir;
  fs::copy(Example(), dir.path(), fs::copy_options::recursive);
  std::string victim;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    if (entry.path().filename().string().rfind("worker2_", 0) == 0) victim = entry.path();
  }
  {
    std::FILE* f = std::fopen(victim.c_str(), "ab");
    ASSERT_NE(f, nullptr);
    std::fputs("junk after the trailer", f);
    std::fclose(f);
  }
  std::string out, err;
  ASSERT_EQ(RunCli({dir.path()}, &out, &err), 1) << err;
  EXPECT_EQ(err.rfind("lumos-model replay: " + victim + ": byte offset ", 0), 0u) << err;
  // Every event of the rank precedes its trailer: it is not called cut short.
  EXPECT_NE(out.find("rank 2 has damage after its trailer (all its events are used)"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("rank 2 is cut short"), std::string::npos) << out;
  EXPECT_NE(out.find("job dlrm_kineto: 8 rank(s)"), std::string::npos) << out;
}

TEST(ReplayBadInputTest, UnreadableFileIsSkippedByName) {
  TempDir dir;
  fs::copy(Example(), dir.path(), fs::copy_options::recursive);
  std::string victim;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    if (entry.path().filename().string().rfind("worker2_", 0) == 0) victim = entry.path();
  }
  fs::resize_file(victim, 30);  // Its only frame, header included, is cut.
  std::string out, err;
  // Exit 1 with one line on stderr; the other ranks replay.
  ASSERT_EQ(RunCli({dir.path()}, &out, &err), 1) << err;
  EXPECT_EQ(err.rfind("lumos-model replay: " + victim + ": ", 0), 0u) << err;
  EXPECT_NE(err.find("(skipped)"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(out.find("skipped: " + victim), std::string::npos) << out;
  EXPECT_NE(out.find("ranks missing: 2"), std::string::npos) << out;
}

// Job::input_problems: one line per file that is skipped, cut short or never closed (what the
// commands exit 1 on), each naming the file; a sound file adds none.
TEST(ReplayBadInputTest, InputProblemsNameEachDamagedSkippedOrUnclosedFile) {
  TempDir dir;
  const std::string golden = std::string(LUMOS_SOURCE_DIR) + "/tests/data/schema_v1.0";
  const std::string bytes = lumos::testing::ReadFileBytes(golden + "/every_packet_kind.pb.zst");
  auto sound = LoadJob({golden + "/every_packet_kind.pb.zst"});
  ASSERT_TRUE(sound.ok()) << sound.status().message();
  EXPECT_TRUE(sound->input_problems.empty());
  // Cut inside the last frame (the trailer's): a damaged tail.
  lumos::testing::WriteFileBytes(dir.File("cut.pb.zst"), bytes.substr(0, bytes.size() - 7));
  lumos::testing::WriteFileBytes(dir.File("junk.pb.zst"), "not a trace");
  auto job = LoadJob({dir.File("cut.pb.zst"), dir.File("junk.pb.zst")});
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_EQ(job->input_problems.size(), 2u);
  EXPECT_EQ(job->input_problems[0].rfind(dir.File("junk.pb.zst") + ": byte offset 0: ", 0), 0u)
      << job->input_problems[0];
  EXPECT_NE(job->input_problems[0].find("(skipped)"), std::string::npos);
  EXPECT_EQ(job->input_problems[1].rfind(dir.File("cut.pb.zst") + ": byte offset ", 0), 0u)
      << job->input_problems[1];
  EXPECT_EQ(job->ranks.size(), 1u);
  EXPECT_GT(job->events_read, 0u);
  // Cut where the last frame (the trailer's) starts: intact, but never closed.
  const std::vector<size_t> frames = lumos::testing::FrameStarts(bytes);
  ASSERT_GE(frames.size(), 3u);
  lumos::testing::WriteFileBytes(dir.File("open.pb.zst"), bytes.substr(0, frames.back()));
  auto unclosed = LoadJob({dir.File("open.pb.zst")});
  ASSERT_TRUE(unclosed.ok()) << unclosed.status().message();
  ASSERT_EQ(unclosed->input_problems.size(), 1u);
  EXPECT_EQ(unclosed->input_problems[0].rfind(dir.File("open.pb.zst") + ": no trailer: ", 0), 0u)
      << unclosed->input_problems[0];
  EXPECT_EQ(unclosed->events_read, sound->events_read);
}

// Two ranks, three allreduces on comm 42 (size 2); rank 1 numbers them from 1: seq 0 and 3
// have one member each, seq 1 and 2 pair the wrong instances.
TEST(ReplayBadInputTest, SeqNumbersThatDoNotLineUpAreDiagnosed) {
  Job job;
  job.job_id = "toy";
  for (int32_t rank = 0; rank < 2; ++rank) {
    RankBuilder b(&job, rank, 2);
    for (uint64_t i = 0; i < 3; ++i) {
      const int64_t t = static_cast<int64_t>(i) * 100;
      b.Api(ApiKind::kLaunchKernel, "launch", t, 2, i + 1)
          .Kernel("ncclKernel_AllReduce", 5, t + 10, 50, i + 1)
          .Collective(42, i + static_cast<uint64_t>(rank), i + 1, 5, t + 10, 50, 2);
    }
  }
  ExecutionGraph graph = BuildGraph(job, {0, 0});
  EXPECT_EQ(graph.stats.collectives_incomplete, 2u);
  bool named = false;
  for (const GraphDiagnostic& d : graph.diagnostics) {
    named |= d.what.find("comm 42, seq 0") != std::string::npos &&
             d.what.find("only rank(s) 0 of 2") != std::string::npos && d.rank == 0 &&
             d.time_ns == 10 * kUs;
  }
  EXPECT_TRUE(named);
  const SimResult sim = Simulate(graph, MeasuredScenario(graph));
  EXPECT_EQ(sim.not_run, 0u);
}

TEST(ReplayBadInputTest, EventsOutOfOrderReplayLikeSortedOnes) {
  Job sorted;
  sorted.job_id = "toy";
  RankBuilder(&sorted, 0, 1)
      .Api(ApiKind::kLaunchKernel, "launch1", 0, 10, 1)
      .Api(ApiKind::kLaunchKernel, "launch2", 20, 10, 2)
      .Api(ApiKind::kStreamSynchronize, "sync", 40, 200, 0, 7)
      .Kernel("k1", 7, 15, 100, 1)
      .Kernel("k2", 7, 115, 100, 2);
  Job shuffled = sorted;
  RankTrace& r = shuffled.ranks[0];
  std::reverse(r.api_calls.begin(), r.api_calls.end());
  std::reverse(r.kernels.begin(), r.kernels.end());
  const Replayed a = Replay(sorted), b = Replay(shuffled);
  for (const char* name : {"launch1", "launch2", "sync", "k1", "k2"}) {
    const uint32_t x = NodeNamed(a.graph, 0, name), y = NodeNamed(b.graph, 0, name);
    EXPECT_EQ(a.sim.start_ns[x], b.sim.start_ns[y]) << name;
    EXPECT_EQ(a.sim.end_ns[x], b.sim.end_ns[y]) << name;
  }
}

// Two hosts, 40 allreduces 1 ms apart; host "b"'s clock runs 3 ms ahead, then jumps 5 ms
// further before the 21st.
TEST(ReplayBadInputTest, ClockJumpIsReportedWithItsTime) {
  Job job;
  job.job_id = "toy";
  for (int32_t rank = 0; rank < 2; ++rank) {
    RankBuilder b(&job, rank, 2);
    for (uint64_t i = 0; i < 40; ++i) {
      int64_t t = static_cast<int64_t>(i) * 1000;
      if (rank == 1) t += i < 20 ? 3000 : 8000;
      b.Api(ApiKind::kLaunchKernel, "launch", t, 2, i + 1)
          .Kernel("ncclKernel_AllReduce", 5, t + 10, 50, i + 1)
          .Collective(42, i, i + 1, 5, t + 10, 50, 2);
    }
    job.ranks.back().host = rank == 0 ? "a" : "b";
  }
  const ClockAlignment alignment = AlignClocks(job);
  ASSERT_EQ(alignment.hosts.size(), 2u);
  const HostAlignment& b = alignment.hosts[1];
  EXPECT_EQ(b.host, "b");
  EXPECT_EQ(b.jump_ns, 5000 * kUs);
  EXPECT_EQ(b.jump_at_ns, 20 * 1000 * kUs + 60 * kUs);  // Host a's end of the 21st.
  EXPECT_EQ(alignment.hosts[0].jump_ns, 0);
  // The offset fits one side (the median); the replay still runs everything.
  const Replayed r = Replay(job, {}, false, /*align=*/true);
  EXPECT_EQ(r.sim.not_run, 0u);
}

// A one-launch trace with the given header rank (none when rank < 0) and trailer rank (none
// when trailer_rank < 0), as the agent writes them (schema 2.1).
void WriteRankTrace(const std::string& path, int32_t rank, int32_t trailer_rank) {
  schema::HeaderInfo header = lumos::testing::SampleHeader(rank < 0 ? 0 : rank, 2);
  header.has_rank = rank >= 0;
  auto writer = schema::TraceFileWriter::Create(path, header, schema::WriterOptions{});
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  schema::ApiCallEvent launch;
  launch.start_ns = 1000;
  launch.duration_ns = 50;
  launch.thread_id = 7;
  launch.correlation_id = 1;
  launch.kind = ApiKind::kLaunchKernel;
  launch.name = "cudaLaunchKernel";
  (*writer)->Add(launch);
  schema::KernelEvent kernel;
  kernel.start_ns = 2000;
  kernel.duration_ns = 500;
  kernel.correlation_id = 1;
  kernel.stream_id = 7;
  kernel.name = "gemm_kernel";
  (*writer)->Add(kernel);
  schema::TrailerInfo trailer;
  if (trailer_rank >= 0) {
    trailer = {.has_rank = true, .has_world_size = true, .rank = trailer_rank, .world_size = 2};
  }
  ASSERT_TRUE((*writer)->Close(3000, trailer).ok());
}

std::vector<int32_t> RanksOf(const Job& job) {
  std::vector<int32_t> ranks;
  for (const RankTrace& r : job.ranks) ranks.push_back(r.rank);
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

bool AnyWarningHas(const Job& job, const std::string& text) {
  return std::any_of(job.warnings.begin(), job.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

// A launcher that set the same RANK on two processes (e.g. per node): the NCCL ranks the agent
// put in the trailers tell them apart, with a warning; without them it is one clear error.
TEST(ReplayBadInputTest, DuplicateHeaderRanksAreResolvedByTheTrailers) {
  TempDir dir;
  WriteRankTrace(dir.File("a.pb.zst"), 0, 0);
  WriteRankTrace(dir.File("b.pb.zst"), 0, 1);
  auto job = LoadJob({dir.File("a.pb.zst"), dir.File("b.pb.zst")});
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(RanksOf(*job), (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(AnyWarningHas(*job, "2 files claim rank 0 in their headers"));

  TempDir bare;
  WriteRankTrace(bare.File("a.pb.zst"), 0, -1);
  WriteRankTrace(bare.File("b.pb.zst"), 0, -1);
  auto refused = LoadJob({bare.File("a.pb.zst"), bare.File("b.pb.zst")});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("claims the same rank"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("no NCCL rank in its trailer"), std::string::npos)
      << refused.status().message();
}

// A header without a rank takes the trailer's; a header rank the trailer contradicts stays (it
// is unique) and the disagreement is reported.
TEST(ReplayBadInputTest, TrailerRankFillsAMissingHeaderRankAndDisagreementsAreReported) {
  TempDir dir;
  WriteRankTrace(dir.File("a.pb.zst"), -1, 1);
  WriteRankTrace(dir.File("b.pb.zst"), 0, 0);
  auto job = LoadJob({dir.File("a.pb.zst"), dir.File("b.pb.zst")});
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(RanksOf(*job), (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(AnyWarningHas(*job, "rank 1 from its trailer"));

  TempDir other;
  WriteRankTrace(other.File("a.pb.zst"), 1, 0);
  auto kept = LoadJob({other.File("a.pb.zst")});
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(RanksOf(*kept), (std::vector<int32_t>{1}));
  EXPECT_TRUE(AnyWarningHas(*kept, "1 in the header (the launcher's), 0 in the trailer"));
}

}  // namespace
}  // namespace lumos::modeler::testing
