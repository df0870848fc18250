// The inputs of `costs fit` (modeler/models/costs/cost_inputs.h): tables and traces from files,
// directories and patterns; traced jobs (the bundled DLRM import, jobs written by the real trace
// writer as the agent records them) calibrating the collective model on the GPU their headers
// name, and saying what they calibrated.
#include "modeler/models/costs/cost_inputs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "modeler/models/costs/cost_queries.h"
#include "tests/testing/collective_job.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::models {
namespace {

namespace fs = std::filesystem;
using ::lumos::testing::CollectiveJob;
using ::lumos::testing::TempDir;
using ::lumos::testing::TracedCollective;
using ::lumos::testing::WriteCollectiveJob;
using ::lumos::testing::WriteFileBytes;
using schema::CollectiveOp;
using schema::DataType;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return lines;
}

std::string Example() { return std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"; }
std::string Costs(const std::string& name) {
  return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/costs/" + name;
}

// 16 ranks on 2 hosts of 8 H100s: all-reduces of 1, 4 and 16 MiB and an all-gather.
CollectiveJob TwoNodes() {
  CollectiveJob job;
  job.job_id = "two-nodes";
  job.ranks = 16;
  job.ranks_per_host = 8;
  job.collectives = {
      {CollectiveOp::kAllReduce, DataType::kBfloat16, 1 << 20, 60'000},
      {CollectiveOp::kAllReduce, DataType::kBfloat16, 4 << 20, 150'000},
      {CollectiveOp::kAllReduce, DataType::kBfloat16, 16 << 20, 520'000},
      {CollectiveOp::kAllGather, DataType::kBfloat16, 1 << 20, 400'000},
  };
  return job;
}

TEST(CostInputsTest, FilesDirectoriesAndPatternsGiveTablesAndTraces) {
  TempDir dir;
  fs::create_directories(dir.File("sub"));
  WriteFileBytes(dir.File("b.csv"), "x\n");
  WriteFileBytes(dir.File("sub/a.csv"), "x\n");
  WriteFileBytes(dir.File("notes.txt"), "x\n");
  CollectiveJob job;
  job.ranks = 2;
  job.collectives = {{CollectiveOp::kAllReduce, DataType::kBfloat16, 4096, 20'000}};
  WriteCollectiveJob(dir.path(), job);
  std::vector<std::string> problems;
  auto inputs = ExpandCostInputs({dir.path()}, &problems);
  ASSERT_TRUE(inputs.ok()) << inputs.status().message();
  EXPECT_EQ(inputs->tables, (std::vector<std::string>{dir.File("b.csv"), dir.File("sub/a.csv")}));
  EXPECT_EQ(inputs->traces, (std::vector<std::string>{dir.File("traced.rank0.pb.zst"),
                                                      dir.File("traced.rank1.pb.zst")}));
  EXPECT_TRUE(problems.empty());
  // A pattern, files by name (the same trace twice is read once), a missing trace is a problem
  // (the rest is used) and a missing table an error (tables are all or nothing).
  auto named = ExpandCostInputs({dir.File("*.csv"), dir.File("traced.rank1.pb.zst"),
                                 dir.File("traced.rank1.pb.zst"), dir.File("gone.pb.zst")},
                                &problems);
  ASSERT_TRUE(named.ok()) << named.status().message();
  EXPECT_EQ(named->tables, std::vector<std::string>{dir.File("b.csv")});
  EXPECT_EQ(named->traces, std::vector<std::string>{dir.File("traced.rank1.pb.zst")});
  EXPECT_EQ(problems,
            std::vector<std::string>{dir.File("gone.pb.zst") + ": no such file or directory"});
  auto missing = ExpandCostInputs({dir.File("gone.csv")}, &problems);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), dir.File("gone.csv") + ": no such file or directory");
  fs::create_directories(dir.File("empty"));
  auto empty = ExpandCostInputs({dir.File("empty")}, &problems);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(),
            dir.File("empty") + ": no *.csv table or *.pb.zst trace inside");
}

// The bundled DLRM import: PyTorch's profiler recorded no message sizes, so it calibrates
// nothing, and says so in one line.
TEST(TraceCalibrationTest, TheDlrmImportCalibratesNothingAndSaysSo) {
  std::vector<std::string> problems;
  auto inputs = ExpandCostInputs({Example()}, &problems);
  ASSERT_TRUE(inputs.ok());
  auto jobs = ReadTraceCalibrations(inputs->traces, SpecTable::Builtin(), &problems);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  EXPECT_TRUE(problems.empty());
  ASSERT_EQ(jobs->size(), 1u);
  const TraceCalibration& job = jobs->front();
  EXPECT_EQ(job.ranks, 8u);
  EXPECT_EQ(job.device, "Tesla V100-SXM2-32GB");
  ASSERT_NE(job.gpu, nullptr);
  EXPECT_EQ(job.gpu->name, "V100-SXM2-32GB");
  EXPECT_EQ(job.sized, 0u);
  EXPECT_EQ(job.Describe(),
            "job dlrm_kineto (8 rank(s), Tesla V100-SXM2-32GB): 8 collective operation(s) (2 "
            "without a transfer time), none with a message size: calibrates nothing; GEMM: "
            "no kernel with a GEMM shape; kernels: 1956 GPU record(s), 1816 without work: 140 "
            "sample(s) on V100-SXM2-32GB (memcpy DtoD 8, memcpy DtoH pageable 16, memcpy HtoD "
            "pageable 64, memcpy HtoD pinned 40, memset 12)");
  // Its copies and memsets are the samples: every one with bytes and a duration.
  uint64_t samples = 0;
  for (const TraceCalibration::KernelSamples& k : job.kernel_samples) {
    samples += k.samples.size();
    for (const KernelSample& s : k.samples) {
      EXPECT_GT(s.work.bytes, 0);
      EXPECT_GT(s.duration_ns, 0);
    }
  }
  EXPECT_EQ(samples, 140u);
}

// A job as the agent records it: every collective a point with the replay's transfer time on
// the GPU of its headers; ranks on two hosts span two nodes.
TEST(TraceCalibrationTest, AnAgentTraceCalibratesTheCollectiveModelOnItsGpu) {
  TempDir dir;
  const CollectiveJob two = TwoNodes();
  WriteCollectiveJob(dir.path(), two);
  CollectiveJob one = TwoNodes();
  one.job_id = "one-node";
  one.ranks = 8;
  WriteCollectiveJob(dir.path(), one);
  std::vector<std::string> problems;
  auto inputs = ExpandCostInputs({dir.path()}, &problems);
  ASSERT_TRUE(inputs.ok());
  ASSERT_EQ(inputs->traces.size(), 24u);
  auto jobs = ReadTraceCalibrations(inputs->traces, SpecTable::Builtin(), &problems);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  EXPECT_TRUE(problems.empty());
  ASSERT_EQ(jobs->size(), 2u);  // By job id.
  const TraceCalibration& single = (*jobs)[0];
  const TraceCalibration& spread = (*jobs)[1];
  EXPECT_EQ(single.job_id, "one-node");
  EXPECT_EQ(spread.job_id, "two-nodes");
  EXPECT_EQ(spread.hosts, 2u);
  ASSERT_NE(spread.gpu, nullptr);
  EXPECT_EQ(spread.gpu->name, "H100-SXM5-80GB");
  EXPECT_EQ(spread.sized, 4u);
  EXPECT_EQ(spread.multi_node, 4u);
  ASSERT_EQ(spread.collectives.points.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const CalibrationPoint& p = spread.collectives.points[i];
    EXPECT_EQ(p.ranks, 16u);
    EXPECT_EQ(p.nodes, 2u);
    EXPECT_EQ(p.time_ns, two.collectives[i].transfer_ns);
    EXPECT_EQ(p.protocol, schema::NcclProtocol::kSimple);
    EXPECT_EQ(p.channels, 16u);
  }
  EXPECT_EQ(spread.collectives.points[3].bytes, 16u << 20);  // The gathered output: 16 x 1 MiB.
  EXPECT_EQ(spread.Describe(),
            "job two-nodes (16 rank(s) on 2 hosts, NVIDIA H100 80GB HBM3): 4 collective "
            "operation(s): 4 calibration point(s) for the collective model on H100-SXM5-80GB (4 "
            "across hosts: measurements only); GEMM: no kernel with a GEMM shape");

  // Fitted with the H100 table: one H100 calibration holding both; the traced cases answer as
  // measured, their own transfer times.
  inputs->tables = {Costs("nccl_h100.csv")};
  FitLog log;
  const SpecTable& specs = SpecTable::Builtin();
  auto model = FitCostInputs(*inputs, specs, *specs.FindNetwork("ib400"), &log);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(log.notes.size(), 2u);
  ASSERT_EQ(model->collectives.size(), 1u);
  const CollectiveCalibration& h100 = model->collectives[0];
  EXPECT_EQ(h100.model.origins, (std::vector<std::string>{"job one-node", "job two-nodes",
                                                          "nccl_h100.csv (H100-SXM5-80GB)"}));
  EXPECT_EQ(h100.MultiNodeMeasurements(), 4u);
  EXPECT_EQ(h100.FittedPoints(), 504u + 4u);  // The table's and the single node's.
  auto queries = io::ParseCsv(
      "op,dtype,ranks,bytes\n"
      "all_reduce,bfloat16,16,4194304\n"
      "all_gather,bfloat16,16,16777216\n"
      "all_reduce,bfloat16,8,1048576\n"
      "all_reduce,bfloat16,16,8388608\n",
      "q.csv");
  ASSERT_TRUE(queries.ok());
  auto out = PredictCostQueries(*model, *queries, specs.FindGpu("H100-SXM5-80GB"), specs,
                                specs.FindNetwork("ib400"));
  ASSERT_TRUE(out.ok()) << out.status().message();
  const std::vector<std::string> lines = Lines(out->csv);
  ASSERT_EQ(lines.size(), 5u) << out->csv;
  EXPECT_EQ(lines[1], "all_reduce,bfloat16,16,4194304,150.000,measured");
  EXPECT_EQ(lines[2], "all_gather,bfloat16,16,16777216,400.000,measured");
  EXPECT_EQ(lines[3], "all_reduce,bfloat16,8,1048576,60.000,measured");
  // Between two measured sizes across nodes: interpolated, between their times.
  ASSERT_EQ(lines[4].rfind("all_reduce,bfloat16,16,8388608,", 0), 0u) << lines[4];
  EXPECT_EQ(lines[4].substr(lines[4].rfind(',')), ",interpolated");
  const double between = std::stod(lines[4].substr(31));
  EXPECT_GT(between, 150.0);
  EXPECT_LT(between, 520.0);
  // Over another network than the traced one, the same case is the formula's.
  auto ib800 = PredictCostQueries(*model, *queries, specs.FindGpu("H100-SXM5-80GB"), specs,
                                  specs.FindNetwork("ib800"));
  ASSERT_TRUE(ib800.ok());
  EXPECT_NE(ib800->csv.find("all_reduce,bfloat16,16,4194304,"), std::string::npos);
  EXPECT_EQ(ib800->csv.find("4194304,150.000,measured"), std::string::npos);
  EXPECT_NE(ib800->csv.find("all_reduce,bfloat16,8,1048576,60.000,measured"), std::string::npos);
}

TEST(TraceCalibrationTest, AGpuTheSpecsDoNotKnowIsAnErrorNamingTheTrace) {
  TempDir dir;
  CollectiveJob job;
  job.ranks = 2;
  job.device = "NVIDIA H20";
  job.collectives = {{CollectiveOp::kAllReduce, DataType::kBfloat16, 4096, 20'000}};
  const std::vector<std::string> paths = WriteCollectiveJob(dir.path(), job);
  std::vector<std::string> problems;
  auto jobs = ReadTraceCalibrations(paths, SpecTable::Builtin(), &problems);
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().message().rfind(paths[0] + ": job traced: gpu 'NVIDIA H20' is not in "
                                                     "the specs (known: V100-SXM2-32GB, ",
                                          0),
            0u)
      << jobs.status().message();
  // A --specs file that names it places the job.
  SpecTable specs = SpecTable::Builtin();
  ASSERT_TRUE(specs
                  .Add("gpu H20\n  device NVIDIA H20\n  sms 78\n  tflops bf16 148\n"
                       "  hbm_gb_per_s 4000\n  nvlink_gb_per_s 900\n  nvlink_domain_gpus 8\n",
                       "h20.txt")
                  .ok());
  auto placed = ReadTraceCalibrations(paths, specs, &problems);
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  EXPECT_EQ(placed->front().gpu->name, "H20");
}

TEST(TraceCalibrationTest, DamagedAndForeignFilesAreNamedAndTheRestIsUsed) {
  TempDir dir;
  CollectiveJob job;
  job.ranks = 2;
  job.collectives = {{CollectiveOp::kAllReduce, DataType::kBfloat16, 4096, 20'000}};
  std::vector<std::string> paths = WriteCollectiveJob(dir.path(), job);
  WriteFileBytes(dir.File("random.pb.zst"), std::string(4096, 'x'));
  paths.push_back(dir.File("random.pb.zst"));
  std::vector<std::string> problems;
  auto jobs = ReadTraceCalibrations(paths, SpecTable::Builtin(), &problems);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].rfind(dir.File("random.pb.zst") + ": byte offset 0: not a Lumos trace", 0),
            0u)
      << problems[0];
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(jobs->front().sized, 1u);
}

}  // namespace
}  // namespace lumos::modeler::models
