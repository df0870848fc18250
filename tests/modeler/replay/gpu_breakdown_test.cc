// GPU time by class and copies by direction on hand-built jobs whose sums are worked out by
// hand: an op counts whole in the iteration it starts in (not in one it only ends in), kernels
// by class, collectives by op, copies by direction with their bytes, memsets apart; per rank and
// for the job; the bandwidth against the link peak of the rank's GPU; text and JSON.
#include "modeler/replay/gpu_breakdown.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/replay/replay_report.h"
#include "tests/testing/job_builder.h"

namespace lumos::modeler::testing {
namespace {

using schema::ApiKind;

const ClassTime* FindClass(const std::vector<ClassTime>& v, std::string_view name) {
  for (const ClassTime& c : v) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const CopyTime* FindCopy(const std::vector<CopyTime>& v, std::string_view direction) {
  for (const CopyTime& c : v) {
    if (c.direction == direction) return &c;
  }
  return nullptr;
}

void AddCopy(Job* job, size_t rank, schema::CopyKind kind, uint64_t bytes, int64_t start_us,
             int64_t duration_us, uint64_t correlation) {
  schema::MemcpyEvent m;
  m.start_ns = start_us * kUs;
  m.duration_ns = static_cast<uint64_t>(duration_us * kUs);
  m.correlation_id = correlation;
  m.stream_id = 7;
  m.bytes = bytes;
  m.copy_kind = kind;
  job->ranks[rank].memcpys.push_back(m);
}

void AddMemset(Job* job, size_t rank, uint64_t bytes, int64_t start_us, int64_t duration_us,
               uint64_t correlation) {
  schema::MemsetEvent m;
  m.start_ns = start_us * kUs;
  m.duration_ns = static_cast<uint64_t>(duration_us * kUs);
  m.correlation_id = correlation;
  m.stream_id = 7;
  m.bytes = bytes;
  job->ranks[rank].memsets.push_back(m);
}

// Per rank, stream 7 (µs), two steps [0,100) and [100,200):
//   gemm [10,40)  elementwise [40,50)  all-reduce [50,70)  HtoD 1 MB [70,80)
//   memset 2 MB [80,81)  gemm [95,115) (starts in step 1, ends in step 2)  DtoH 3 MB [120,150)
// Rank 1 runs its second gemm 10 µs longer ([95,125), DtoH then [125,155)).
Job TwoRankJob() {
  Job job;
  job.job_id = "classes";
  for (int32_t rank = 0; rank < 2; ++rank) {
    const int64_t longer = rank == 1 ? 10 : 0;
    RankBuilder(&job, rank, 2)
        .Communicator(5, rank, 2)
        .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 0, 5, 1)
        .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 6, 2, 2)
        .Api(ApiKind::kLaunchKernel, "ncclAllReduce", 9, 2, 3)
        .Api(ApiKind::kMemcpyAsync, "cudaMemcpyAsync", 12, 2, 4)
        .Api(ApiKind::kMemsetAsync, "cudaMemsetAsync", 15, 2, 5)
        .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 90, 2, 6)
        .Api(ApiKind::kMemcpyAsync, "cudaMemcpyAsync", 110, 2, 7)
        .Api(ApiKind::kStreamSynchronize, "cudaStreamSynchronize", 112, 48, 0, 7)
        .Kernel("ampere_sgemm_128x64_nn", 7, 10, 30, 1)
        .Kernel("vectorized_elementwise_kernel", 7, 40, 10, 2)
        .Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 7, 50, 20, 3)
        .Collective(5, 1, 3, 7, 50, 20, 2)
        .Kernel("ampere_sgemm_128x64_nn", 7, 95, 20 + longer, 6)
        .Step("ProfilerStep#1", 0, 100)
        .Step("ProfilerStep#2", 100, 100);
    AddCopy(&job, rank, schema::CopyKind::kHtod, 1'000'000, 70, 10, 4);
    AddMemset(&job, rank, 2'000'000, 80, 1, 5);
    AddCopy(&job, rank, schema::CopyKind::kDtoh, 3'000'000, 120 + longer, 30, 7);
    job.ranks[rank].device = "NVIDIA H100 80GB HBM3";
  }
  return job;
}

TEST(GpuBreakdownTest, OpsCountWholeInTheIterationTheyStartIn) {
  const Job job = TwoRankJob();
  const Replayed r = Replay(job);
  ASSERT_EQ(r.sim.not_run, 0u);
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 4u);
  const IterationReport& first = iterations[0];
  ASSERT_EQ(first.rank, 0);
  ASSERT_EQ(first.name, "ProfilerStep#1");
  // gemm: [10,40) and the one starting at 95, whole (20 µs) though it ends in step 2.
  const ClassTime* gemm = FindClass(first.gpu_classes, "gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->count, 2u);
  EXPECT_EQ(gemm->measured_ns, 50 * kUs);
  EXPECT_EQ(gemm->replayed_ns, 50 * kUs);
  const ClassTime* elementwise = FindClass(first.gpu_classes, "elementwise");
  ASSERT_NE(elementwise, nullptr);
  EXPECT_EQ(elementwise->measured_ns, 10 * kUs);
  const ClassTime* all_reduce = FindClass(first.gpu_classes, "communication AllReduce");
  ASSERT_NE(all_reduce, nullptr);
  EXPECT_EQ(all_reduce->count, 1u);
  EXPECT_EQ(all_reduce->measured_ns, 20 * kUs);
  EXPECT_EQ(FindClass(first.gpu_classes, "memcpy")->measured_ns, 10 * kUs);
  EXPECT_EQ(FindClass(first.gpu_classes, "memset")->measured_ns, 1 * kUs);
  // Largest first.
  EXPECT_STREQ(first.gpu_classes.front().name, "gemm");
  // Copies: HtoD and the memset in step 1; the DtoH in step 2 only.
  ASSERT_EQ(first.copies.size(), 2u);
  EXPECT_STREQ(first.copies[0].direction, "HtoD");
  EXPECT_EQ(first.copies[0].bytes, 1'000'000u);
  EXPECT_EQ(first.copies[0].measured_ns, 10 * kUs);
  EXPECT_STREQ(first.copies[1].direction, "memset");
  EXPECT_EQ(first.copies[1].bytes, 2'000'000u);
  const IterationReport& second = iterations[1];
  ASSERT_EQ(second.name, "ProfilerStep#2");
  EXPECT_EQ(FindClass(second.gpu_classes, "gemm"), nullptr);
  ASSERT_EQ(second.copies.size(), 1u);
  EXPECT_STREQ(second.copies[0].direction, "DtoH");
  EXPECT_EQ(second.copies[0].bytes, 3'000'000u);

  // Per rank and for the job: rank 1's gemm is 10 µs longer.
  std::vector<ClassTime> job_classes;
  const std::vector<RankClasses> per_rank = SumClassesPerRank(iterations, &job_classes);
  ASSERT_EQ(per_rank.size(), 2u);
  EXPECT_EQ(FindClass(per_rank[0].classes, "gemm")->measured_ns, 50 * kUs);
  EXPECT_EQ(FindClass(per_rank[1].classes, "gemm")->measured_ns, 60 * kUs);
  EXPECT_EQ(FindClass(job_classes, "gemm")->measured_ns, 110 * kUs);
  EXPECT_EQ(FindClass(job_classes, "gemm")->count, 4u);
  std::vector<CopyTime> job_copies;
  const std::vector<RankCopies> rank_copies = SumCopiesPerRank(iterations, &job_copies);
  ASSERT_EQ(rank_copies.size(), 2u);
  EXPECT_EQ(FindCopy(job_copies, "DtoH")->bytes, 6'000'000u);
  EXPECT_EQ(FindCopy(job_copies, "DtoH")->measured_ns, 60 * kUs);
  // Directions in a fixed order, not by text or by first appearance.
  ASSERT_EQ(job_copies.size(), 3u);
  EXPECT_STREQ(job_copies[0].direction, "HtoD");
  EXPECT_STREQ(job_copies[1].direction, "DtoH");
  EXPECT_STREQ(job_copies[2].direction, "memset");
}

TEST(GpuBreakdownTest, PeaksComeFromTheRanksGpu) {
  const models::GpuSpec* h100 = models::SpecTable::Builtin().FindGpu("NVIDIA H100 80GB HBM3");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(PeakFor(h100, "HtoD").bytes_per_s,
            h100->host_bytes_per_s.value_or(models::kDefaultHostBytesPerS));
  EXPECT_EQ(PeakFor(h100, "DtoD").bytes_per_s, h100->hbm_bytes_per_s / 2);
  EXPECT_EQ(PeakFor(h100, "memset").bytes_per_s, h100->hbm_bytes_per_s);
  ASSERT_TRUE(h100->nvlink_bytes_per_s.has_value());
  EXPECT_EQ(PeakFor(h100, "PtoP").bytes_per_s, *h100->nvlink_bytes_per_s / 2);
  EXPECT_EQ(PeakFor(h100, "HtoH").bytes_per_s, 0);
  EXPECT_EQ(PeakFor(nullptr, "HtoD").bytes_per_s, 0);
}

TEST(GpuBreakdownTest, ReportsShowClassesAndBandwidth) {
  const Job job = TwoRankJob();
  const Replayed r = Replay(job);
  ReplayReport report;
  report.job_id = job.job_id;
  report.ranks = {0, 1};
  report.devices = {job.ranks[0].device, job.ranks[1].device};
  report.graph = &r.graph;
  report.iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  std::FILE* text = std::tmpfile();
  ASSERT_NE(text, nullptr);
  WriteTextReport(report, text);
  const std::string t = ReadAll(text);
  std::fclose(text);
  EXPECT_NE(t.find("GPU time by class"), std::string::npos) << t;
  // gemm: 4 ops, 0.110 ms measured; rank 1 spent the most on it (0.060 ms).
  EXPECT_NE(t.find("0.050-0.060 (max rank 1)"), std::string::npos) << t;
  EXPECT_NE(t.find("communication AllReduce"), std::string::npos) << t;
  EXPECT_NE(t.find("copies and memsets"), std::string::npos) << t;
  EXPECT_NE(t.find("H100-SXM5-80GB"), std::string::npos) << t;
  // DtoH: 6 MB in 60 µs = 100 GB/s on both ranks.
  EXPECT_NE(t.find("100.00 (rank 0)"), std::string::npos) << t;
  std::FILE* json = std::tmpfile();
  ASSERT_NE(json, nullptr);
  ASSERT_TRUE(WriteJsonReport(report, json).ok());
  const std::string j = ReadAll(json);
  std::fclose(json);
  EXPECT_NE(j.find("\"gpu_time_by_class\""), std::string::npos);
  EXPECT_NE(j.find("\"direction\":\"DtoH\",\"count\":2,\"bytes\":6000000,\"measured_ns\":60000"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"peak_link\":\"host link\""), std::string::npos) << j;
}

}  // namespace
}  // namespace lumos::modeler::testing
