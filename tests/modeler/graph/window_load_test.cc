// A job's capture windows load as windows of its ranks, never as more ranks, and a window's file
// holds only its window (modeler/graph/window_clip.h), on the shared H200 windows: the periodic
// directory (one process, two windows of 3 steps, written by an agent that put every GPU op
// since its last flush into each file, some 56 years early) and the on-demand one.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "modeler/graph/job.h"
#include "schema/writer/trace_file_writer.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch/windows/" + dir)) {
    if (e.path().extension() == ".zst") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Every event of the rank lies in [begin, end], but GPU ops its calls launched.
void ExpectAllInside(const RankTrace& rank) {
  int64_t begin = INT64_MAX, end = INT64_MIN;
  for (const auto& n : rank.nvtx) {
    begin = std::min(begin, n.start_ns);
    end = std::max(end, n.start_ns + static_cast<int64_t>(n.duration_ns));
  }
  for (const auto& k : rank.kernels) EXPECT_GT(k.start_ns, 0);
  for (const auto& m : rank.memcpys) EXPECT_GT(m.start_ns, 0);
  for (const auto& a : rank.api_calls) EXPECT_GE(a.start_ns + 1'000'000'000, begin);
  EXPECT_LT(begin, end);
}

TEST(WindowLoadTest, OneProcessesTwoWindowsAreOneRankInTheFirstWindowSaidSo) {
  const std::vector<std::string> files = Files("periodic");
  ASSERT_EQ(files.size(), 2u);
  StatusOr<Job> job = LoadJob(files);
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_EQ(job->ranks.size(), 1u);
  EXPECT_EQ(job->ranks[0].path, files[0]);
  bool said = false;
  for (const std::string& w : job->warnings) {
    said = said || w.find(
                       "2 capture windows of job 'gpt-periodic' (20261204T144812Z, "
                       "20261204T144815Z): this is the first, 20261204T144812Z; choose "
                       "another with --window STAMP") != std::string::npos;
  }
  EXPECT_TRUE(said);
  const RankTrace& rank = job->ranks[0];
  // 9790 kernels in the file; a window of 3 steps holds about a thousand.
  EXPECT_GT(rank.outside_window, 8000u);
  EXPECT_LT(rank.kernels.size(), 1500u);
  EXPECT_GT(rank.kernels.size(), 500u);
  ExpectAllInside(rank);
}

TEST(WindowLoadTest, AWindowIsChosenByItsStampAndAnUnknownOneIsOneError) {
  const std::vector<std::string> files = Files("periodic");
  LoadOptions options;
  options.window = "20261204T144815Z";
  StatusOr<Job> job = LoadJob(files, options);
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_EQ(job->ranks.size(), 1u);
  EXPECT_EQ(job->ranks[0].path, files[1]);
  // This file's copies 56 years early are gone with the rest outside the window.
  ExpectAllInside(job->ranks[0]);
  options.window = "20261204T000000Z";
  job = LoadJob(files, options);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(),
            "no capture window '20261204T000000Z' of job 'gpt-periodic' in the input (windows: "
            "20261204T144812Z, 20261204T144815Z)");
}

TEST(WindowLoadTest, TheOnDemandWindowKeepsItsThreeSteps) {
  StatusOr<Job> job = LoadJob(Files("on-demand"));
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_EQ(job->ranks.size(), 1u);
  size_t steps = 0;
  for (const auto& n : job->ranks[0].nvtx) steps += n.name == "step" ? 1 : 0;
  EXPECT_EQ(steps, 3u);
  EXPECT_GT(job->ranks[0].outside_window, 0u);
  ExpectAllInside(job->ranks[0]);
}

// docs/fleet-capture.md's many hosts: the same `lumos-ctl capture --at AT` run on every host, so
// each host's processes got a request id of their own (lumos-ctl draws one per command), and
// all of them wrote the window of AT. It is one window of all ranks, not one per host.
TEST(WindowLoadTest, RanksOfOneWindowAskedForFromSeveralHostsAreOneWindow) {
  ::lumos::testing::TempDir dir;
  std::vector<std::string> files;
  for (int32_t rank = 0; rank < 2; ++rank) {
    schema::HeaderInfo header = ::lumos::testing::SampleHeader(rank, 2);
    header.has_capture_window = true;
    header.capture_window.trigger = schema::WindowTrigger::kOnDemand;
    header.capture_window.start_realtime_ns = 1'796'400'000'000'000'000;    // AT.
    header.capture_window.request_id = 1000 + static_cast<uint64_t>(rank);  // One per host.
    files.push_back(dir.File("rank" + std::to_string(rank) + ".pb.zst"));
    auto writer = schema::TraceFileWriter::Create(files.back(), header, schema::WriterOptions());
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    ASSERT_TRUE((*writer)->Close(1000, schema::TrailerInfo()).ok());
  }
  StatusOr<Job> job = LoadJob(files);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->ranks.size(), 2u);
  for (const std::string& w : job->warnings) {
    EXPECT_EQ(w.find("capture windows"), std::string::npos) << w;
  }
}

}  // namespace
}  // namespace lumos::modeler
