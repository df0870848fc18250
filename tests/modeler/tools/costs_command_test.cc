// `lumos-model costs fit|predict` as a user runs it: the real binary on the shared measured
// tables (../shared/data/costs) and real traces (examples/dlrm-8rank, the shared Kineto traces
// imported, jobs written by the real trace writer), its outputs (collective answers checked
// against CollectivePredictor on the model file it wrote), and one error line naming the row
// for each kind of bad query, with nothing written.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "modeler/models/collectives/collective_costs.h"
#include "modeler/models/collectives/collective_validation.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/query/cost_table.h"
#include "tests/testing/collective_job.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

namespace fs = std::filesystem;
using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

std::string Costs(const std::string& name) {
  return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/costs/" + name;
}

size_t Lines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

class CostsCommandTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>();
    const auto fit =
        RunCommand(LumosModelBinary() + " costs fit " + Costs("gemm_a100_bf16.csv") + " " +
                   Costs("nccl_h100.csv") + " " + Costs("nccl_a100.csv") + " -o " + Model());
    ASSERT_EQ(fit.exit_code, 0) << fit.err;
  }
  static void TearDownTestSuite() { dir_.reset(); }
  static std::string Model() { return dir_->File("a100.json"); }
  static std::string File(const std::string& name) { return dir_->File(name); }
  // Runs `costs predict MODEL QUERIES ARGS` on `queries` written to q.csv.
  static ::lumos::testing::CommandResult Predict(const std::string& queries,
                                                 const std::string& args,
                                                 const std::string& model = Model()) {
    WriteFileBytes(File("q.csv"), queries);
    return RunCommand(LumosModelBinary() + " costs predict " + model + " " + File("q.csv") + " " +
                      args);
  }
  static std::unique_ptr<TempDir> dir_;
};

std::unique_ptr<TempDir> CostsCommandTest::dir_;

TEST_F(CostsCommandTest, FitWritesAModelAndSaysWhatItHolds) {
  TempDir out;
  const auto r = RunCommand(LumosModelBinary() + " costs fit " + Costs("gemm_h100_bf16.csv") + " " +
                            Costs("gemm_h100_fp8.csv") + " -o " + out.File("m.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("m.json: 2 GEMM calibration(s), 0 collective calibration(s), 0 kernel "
                       "calibration(s) from 2 "
                       "table(s) and 0 traced job(s)\n"),
            std::string::npos);
  EXPECT_NE(r.out.find("GEMM H100-SXM5-80GB bf16: 35700 shapes, floor 2.535 us"), std::string::npos)
      << r.out;
  const std::string model = ReadFileBytes(out.File("m.json"));
  EXPECT_EQ(model.rfind("{\n  \"format\": \"lumos-cost-model\",\n  \"version\": 3,", 0), 0u);
  // A directory of tables is every *.csv inside it.
  fs::copy_file(Costs("gemm_a100_bf16.csv"), out.File("a.csv"));
  const auto dir =
      RunCommand(LumosModelBinary() + " costs fit " + out.path() + " -o " + out.File("d.json"));
  EXPECT_EQ(dir.exit_code, 0) << dir.err;
  EXPECT_NE(dir.out.find("1 GEMM calibration(s), 0 collective calibration(s), 0 kernel "
                         "calibration(s) from 1 table(s)"),
            std::string::npos)
      << dir.out;
}

TEST_F(CostsCommandTest, PredictKeepsEveryQueryColumnAndAddsPredictionAndSource) {
  const auto r = Predict(
      "note,m,n,k,dtype\n"
      "qkv,8192,8192,8192,bf16\n"
      "unseen,3000,8192,8192,bf16\n"
      "far,131072,4096,4096,bf16\n",
      "--gpu 'NVIDIA H100 80GB HBM3' --net ib400");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(Lines(r.out), 4u) << r.out;
  EXPECT_EQ(r.out.rfind("note,m,n,k,dtype,predicted_us,source\nqkv,8192,8192,8192,bf16,", 0), 0u)
      << r.out;
  EXPECT_NE(r.out.find(",scaled from A100-SXM4-80GB bf16 measured\n"), std::string::npos);
  EXPECT_NE(r.out.find("unseen,3000,8192,8192,bf16,"), std::string::npos);
  EXPECT_NE(r.out.find(",scaled from A100-SXM4-80GB bf16 interpolated\n"), std::string::npos);
  EXPECT_NE(r.out.find(",surface fitted on A100-SXM4-80GB bf16\n"), std::string::npos);
  // On its own GPU a measured shape is its measurement (gemm_a100_bf16.csv: 4188.501 us).
  const auto own = Predict("gpu,dtype,m,n,k\nA100-SXM4-80GB,bf16,8192,8192,8192\n", "");
  ASSERT_EQ(own.exit_code, 0) << own.err;
  EXPECT_EQ(own.out,
            "gpu,dtype,m,n,k,predicted_us,source\n"
            "A100-SXM4-80GB,bf16,8192,8192,8192,4188.501,measured\n");
}

TEST_F(CostsCommandTest, PredictToAFileWritesItThroughATemporaryFile) {
  const std::string out = File("p.csv");
  const auto r = Predict("m,n,k,dtype\n64,64,64,bf16\n", "--gpu B200 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(ReadFileBytes(out).rfind("m,n,k,dtype,predicted_us,source\n64,64,64,bf16,", 0), 0u);
}

struct BadQuery {
  const char* name;
  const char* queries;
  const char* args;
  int exit_code;
  // The start of the one stderr line after "lumos-model costs predict: "; one that starts with
  // ':' or ' ' follows the path of the queries.
  const char* error;
};

class CostsBadQueryTest : public CostsCommandTest,
                          public ::testing::WithParamInterface<BadQuery> {};

TEST_P(CostsBadQueryTest, IsOneErrorLineAndWritesNothing) {
  const BadQuery& bad = GetParam();
  WriteFileBytes(File("keep.csv"), "earlier output\n");
  const auto r = Predict(bad.queries, std::string(bad.args) + " -o " + File("keep.csv"));
  EXPECT_EQ(r.exit_code, bad.exit_code) << r.err;
  EXPECT_EQ(r.out, "");
  const bool after_path = bad.error[0] == ':' || bad.error[0] == ' ';
  const std::string prefix = std::string("lumos-model costs predict: ") +
                             (after_path ? File("q.csv") : std::string()) + bad.error;
  EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << r.err << "\nexpected: " << prefix;
  EXPECT_EQ(Lines(r.err), bad.exit_code == 2 ? 2u : 1u) << r.err;  // 2: the --help hint too.
  EXPECT_EQ(ReadFileBytes(File("keep.csv")), "earlier output\n");  // Untouched.
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, CostsBadQueryTest,
    ::testing::Values(
        BadQuery{"UnknownGpuInARow",
                 "gpu,m,n,k,dtype\nH100-SXM5-80GB,8,8,8,bf16\nTPUv5,8,8,8,bf16\n", "", 1,
                 ":3: gpu 'TPUv5' is not in the specs (known: V100-SXM2-32GB, "},
        BadQuery{"MalformedRow", "m,n,k,dtype\n8,8,8,bf16\n8,8,bf16\n", "--gpu B200", 1,
                 ":3: 3 fields, the header has 4"},
        BadQuery{"NotANumber", "m,n,k,dtype\n8,eight,8,bf16\n", "--gpu B200", 1,
                 ":2: n: 'eight' must be a whole number > 0"},
        BadQuery{"ZeroDimension", "m,n,k,dtype\n0,8,8,bf16\n", "--gpu B200", 1,
                 ":2: m: '0' must be a whole number > 0"},
        BadQuery{"TooLarge", "m,n,k,dtype\n8,8,4294967296,bf16\n", "--gpu B200", 1,
                 ":2: k = 4294967296: larger than 2^31"},
        BadQuery{"UnsupportedDtype", "m,n,k,dtype\n8,8,8,fp8\n", "--gpu V100-SXM2-32GB", 1,
                 ":2: V100-SXM2-32GB has no fp8 peak in the specs (not supported)"},
        BadQuery{"CollectiveUnknownGpuInARow",
                 "gpu,op,dtype,ranks,bytes\nB200,all_reduce,half,8,1024\nTPUv5,all_reduce,half,8,"
                 "1024\n",
                 "", 1, ":3: gpu 'TPUv5' is not in the specs (known: V100-SXM2-32GB, "},
        BadQuery{"CollectiveMalformedRow", "op,dtype,ranks,bytes\nall_reduce,half,8\n",
                 "--gpu B200", 1, ":2: 3 fields, the header has 4"},
        BadQuery{"CollectiveZeroRanks", "op,dtype,ranks,bytes\nall_reduce,half,0,1024\n",
                 "--gpu B200", 1, ":2: ranks: '0' must be a whole number > 0"},
        BadQuery{"CollectiveNegativeBytes", "op,dtype,ranks,bytes\nall_reduce,half,8,-1024\n",
                 "--gpu B200", 1, ":2: bytes: '-1024' must be a whole number > 0"},
        BadQuery{"CollectiveUnknownOp", "op,dtype,ranks,bytes\nall_sum,half,8,1024\n", "--gpu B200",
                 1, ":2: op: unknown 'all_sum' (all_reduce, "},
        BadQuery{"CollectiveMoreRanksThanNodesHold",
                 "op,dtype,ranks,nodes,bytes\nall_reduce,half,64,2,1024\n", "--gpu H100-SXM5-80GB",
                 1, ":2: 64 ranks on 2 node(s): more than the 8 GPUs of an NVLink domain of "},
        BadQuery{"CollectiveUnknownNetwork", "op,dtype,ranks,bytes\nall_reduce,half,64,1024\n",
                 "--gpu B200 --net ib1600", 2, "--net: unknown network 'ib1600' (known: ib100, "},
        BadQuery{"KernelUnknownClass",
                 "class,dtype,bytes,flops\nelementwise,fp32,8,\nsorting,fp32,8,\n", "--gpu B200", 1,
                 ":3: class: unknown 'sorting' ("},
        BadQuery{"KernelGemmClass", "class,dtype,bytes,flops\ngemm,fp32,8,8\n", "--gpu B200", 1,
                 ":2: class: unknown 'gemm' ("},
        BadQuery{"KernelNegativeBytes", "class,dtype,bytes,flops\nmemset,fp32,-8,\n", "--gpu B200",
                 1, ":2: bytes: '-8' must be a number >= 0"},
        BadQuery{"KernelMalformedRow", "class,dtype,bytes,flops\nmemset,fp32,8\n", "--gpu B200", 1,
                 ":2: 3 fields, the header has 4"},
        BadQuery{"KernelNoWork", "class,dtype,bytes,flops\nnorm,fp32,,\n", "--gpu B200", 1,
                 ":2: no work: give bytes or flops"},
        BadQuery{"KernelUnknownGpuInARow",
                 "class,dtype,bytes,flops,gpu\nnorm,fp32,8,,B200\nnorm,fp32,8,,TPUv5\n", "", 1,
                 ":3: gpu 'TPUv5' is not in the specs (known: V100-SXM2-32GB, "},
        BadQuery{"KernelShapeOnAnotherClass",
                 "class,dtype,bytes,flops,batch,heads,seq_q,head_dim\nnorm,fp32,8,,1,1,8,8\n",
                 "--gpu B200", 1, ":2: the attention columns (batch, heads, seq_q, ...) are for "},
        BadQuery{
            "KernelNoPeakForDtype",
            "class,dtype,batch,heads,seq_q,head_dim,bytes,flops\nattention,bf16,1,8,512,64,,\n",
            "--gpu V100-SXM2-32GB", 1, ":2: V100-SXM2-32GB has no bf16 peak in the specs"},
        BadQuery{"UnknownGpuOption", "m,n,k,dtype\n8,8,8,bf16\n", "--gpu TPUv5", 2,
                 "--gpu: gpu 'TPUv5' is not in the specs"},
        BadQuery{"UnknownNetwork", "m,n,k,dtype\n8,8,8,bf16\n", "--gpu B200 --net ib9000", 2,
                 "--net: unknown network 'ib9000' (known: ib100, "},
        BadQuery{"NoGpuAnywhere", "m,n,k,dtype\n8,8,8,bf16\n", "", 2,
                 " has no gpu column: "
                 "give --gpu NAME"}),
    [](const ::testing::TestParamInfo<BadQuery>& info) { return std::string(info.param.name); });

TEST_F(CostsCommandTest, ASpecsFileAddsAGpuAndAMalformedOneNamesItsLine) {
  WriteFileBytes(File("specs.txt"),
                 "gpu H20\n  device NVIDIA H20\n  sms 78\n  tflops bf16 148\n"
                 "  hbm_gb_per_s 4000\n");
  const auto r = Predict("m,n,k,dtype\n4096,4096,4096,bf16\n",
                         "--gpu 'NVIDIA H20' --specs " + File("specs.txt"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(",scaled from A100-SXM4-80GB bf16 measured\n"), std::string::npos);
  WriteFileBytes(File("bad_specs.txt"), "gpu H20\n  sms many\n");
  const auto bad =
      Predict("m,n,k,dtype\n8,8,8,bf16\n", "--gpu B200 --specs " + File("bad_specs.txt"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err, "lumos-model costs predict: " + File("bad_specs.txt") +
                         ":2: sms: 'many' is not a number > 0 (or 'unknown')\n");
}

TEST_F(CostsCommandTest, FitTakesBothKindsOfTableAndSaysWhatItFitted) {
  const auto both = RunCommand(LumosModelBinary() + " costs fit " + Costs("nccl_a100.csv") + " " +
                               Costs("gemm_a100_bf16.csv") + " -o " + File("b.json"));
  EXPECT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(both.err, "");
  EXPECT_NE(both.out.find("b.json: 1 GEMM calibration(s), 1 collective calibration(s), 0 kernel "
                          "calibration(s) from 2 "
                          "table(s) and 0 traced job(s)\n"),
            std::string::npos)
      << both.out;
  EXPECT_NE(both.out.find("  collectives A100-SXM4-80GB (ib400 between nodes): 504 points "
                          "fitted, 504 measurements (0 across nodes), from nccl_a100.csv "
                          "(A100-SXM4-80GB)\n"),
            std::string::npos)
      << both.out;
  const std::string model = ReadFileBytes(File("b.json"));
  EXPECT_NE(model.find("\"collectives\": [\n    {\"gpu\": \"A100-SXM4-80GB\", \"network\": "
                       "\"ib400\",\n     \"model\": {\"format\":\"lumos-collective-model\""),
            std::string::npos);
  const auto same = RunCommand(LumosModelBinary() + " costs fit " + Model() + " -o " + Model());
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_NE(same.err.find("is also an input"), std::string::npos);
}

// Traces as inputs: a job whose collectives carry no sizes (the bundled DLRM import, the
// shared HTA trace imported) calibrates nothing and says so; alone it is an error.
TEST_F(CostsCommandTest, ATraceWithoutSizesCalibratesOnlyItsCopiesAndMemsetsAndSaysSo) {
  const std::string example = std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank";
  const std::string note =
      "  job dlrm_kineto (8 rank(s), Tesla V100-SXM2-32GB): 8 collective operation(s) (2 "
      "without a transfer time), none with a message size: calibrates nothing; GEMM: no kernel "
      "with a GEMM shape; kernels: 1956 GPU record(s), 1816 without work: 140 sample(s) on "
      "V100-SXM2-32GB (memcpy DtoD 8, memcpy DtoH pageable 16, memcpy HtoD pageable 64, memcpy "
      "HtoD pinned 40, memset 12)\n";
  const auto with_table = RunCommand(LumosModelBinary() + " costs fit " + example + " " +
                                     Costs("nccl_h100.csv") + " -o " + File("t.json"));
  EXPECT_EQ(with_table.exit_code, 0) << with_table.err;
  EXPECT_EQ(with_table.err, "");
  EXPECT_NE(with_table.out.find("1 collective calibration(s), 5 kernel calibration(s) from 1 "
                                "table(s) and 1 traced job(s)\n" +
                                note),
            std::string::npos)
      << with_table.out;
  // Alone: the kernel model only; predict answers its copies by their class fit, the rest from
  // the roofline, each saying so.
  const auto alone =
      RunCommand(LumosModelBinary() + " costs fit " + example + " -o " + File("alone.json"));
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_EQ(alone.err, "");
  EXPECT_NE(alone.out.find("  kernels V100-SXM2-32GB memcpy HtoD pinned: 40 kernels, "),
            std::string::npos)
      << alone.out;
  const auto predicted = Predict(
      "class,dtype,bytes,flops\nmemcpy HtoD pinned,fp32,8388608,\nelementwise,fp32,4096,1024\n",
      "--gpu V100-SXM2-32GB", File("alone.json"));
  EXPECT_EQ(predicted.exit_code, 0) << predicted.err;
  EXPECT_NE(predicted.out.find("\nmemcpy HtoD pinned,fp32,8388608,,"), std::string::npos);
  EXPECT_NE(predicted.out.find(",class fit on V100-SXM2-32GB (memcpy HtoD pinned; 40 kernels)\n"
                               "elementwise,fp32,4096,1024,"),
            std::string::npos)
      << predicted.out;
  EXPECT_NE(predicted.out.find(",roofline only\n"), std::string::npos) << predicted.out;
  // A shared trace with sizes, but one rank of two: its collectives are incomplete.
  const std::string hta =
      std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/hta-single-rank/nccl_data.json.gz";
  if (access(hta.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << hta;
  TempDir out;
  const auto imported = RunCommand(LumosModelBinary() + " import kineto " + hta + " -o " +
                                   out.File("nccl_data.pb.zst"));
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const auto one_rank = RunCommand(LumosModelBinary() + " costs fit " + out.path() + " " +
                                   Costs("nccl_a100.csv") + " -o " + out.File("m.json"));
  EXPECT_EQ(one_rank.exit_code, 0) << one_rank.err;
  EXPECT_NE(one_rank.out.find("  job nccl_data (1 rank(s), NVIDIA A100-PG509-200): 21 collective "
                              "operation(s) (21 with a rank's record missing), none usable: "
                              "calibrates nothing;"),
            std::string::npos)
      << one_rank.out;
}

// The shared HTA control trace (A100, PyTorch profiler with record_shapes) imported: its traced
// GEMMs are points of the GEMM model on its GPU, as scripts/traced-gemms.py reads them from the
// JSON independently (counts, and the median of every shape); predict answers a traced shape as
// measured, its median; a table of the same GPU and dtype joins them, the trace's shapes
// winning.
TEST_F(CostsCommandTest, TracedGemmsArePointsOfTheirGpuAsTheJsonSays) {
  const std::string hta =
      std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/hta-single-rank/control.json.gz";
  if (access(hta.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << hta;
  if (RunCommand("python3 -c pass").exit_code != 0) GTEST_SKIP() << "no python3";
  TempDir out;
  const auto imported = RunCommand(LumosModelBinary() + " import kineto " + hta + " -o " +
                                   out.File("control.pb.zst"));
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const auto script =
      RunCommand("python3 " + std::string(LUMOS_SOURCE_DIR) + "/scripts/traced-gemms.py " + hta);
  ASSERT_EQ(script.exit_code, 0) << script.err;
  simdjson::dom::parser parser;
  simdjson::dom::element expected;
  ASSERT_EQ(parser.parse(script.out).get(expected), simdjson::SUCCESS) << script.out;
  const int64_t kernels = expected["kernels"].get_int64().value();
  const int64_t calls = expected["calls"].get_int64().value();
  const int64_t batched = expected["batched"].get_int64().value();
  const int64_t fp32 = expected["points"]["fp32"].get_int64().value();
  const int64_t tf32 = expected["points"]["tf32"].get_int64().value();
  EXPECT_EQ(kernels, 2388);  // inspect: "kernels with a GEMM shape: 2388 of 8568".
  const auto fit = RunCommand(LumosModelBinary() + " costs fit " + out.File("control.pb.zst") +
                              " -o " + out.File("m.json"));
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const std::string note =
      "GEMM: " + std::to_string(calls) + " call(s) (" + std::to_string(kernels) +
      " kernel(s)) (left out: " + std::to_string(batched) +
      " batched): " + std::to_string(fp32 + tf32) +
      " point(s) (one per shape, the median of its calls) on A100-SXM4-40GB fp32 " +
      std::to_string(fp32) + ", tf32 " + std::to_string(tf32) + "; kernels: ";
  EXPECT_NE(fit.out.find(note), std::string::npos) << fit.out;
  // fp32: fewer shapes than the surface has terms, so said and not fitted.
  EXPECT_NE(fit.out.find("  GEMM A100-SXM4-40GB fp32: " + std::to_string(fp32) +
                         " traced shape(s) (job control), fewer than the 20 the surface needs: "
                         "not fitted\n"),
            std::string::npos)
      << fit.out;
  auto model = models::ReadCostModel(out.File("m.json"));
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->gemm.calibrations().size(), 1u);
  const models::GemmCalibration& c = model->gemm.calibrations().front();
  EXPECT_EQ(c.gpu(), "A100-SXM4-40GB");
  EXPECT_EQ(c.dtype(), models::DType::kTf32);
  ASSERT_EQ(static_cast<int64_t>(c.points().size()), tf32);
  // Every traced tf32 shape is a point with the script's median; the queries of all of them
  // answer as measured, with that median; a table of those shapes at twice the time is
  // overruled by the trace.
  std::string queries = "m,n,k,dtype\n", doubled = "gpu,dtype,m,n,k,latency_us\n";
  std::string answers;
  size_t matched = 0;
  for (simdjson::dom::element row : expected["shapes"].get_array()) {
    std::string_view dtype = row.at(0).get_string().value();
    if (dtype != "tf32") continue;
    const int64_t m = row.at(1).get_int64().value(), n = row.at(2).get_int64().value(),
                  k = row.at(3).get_int64().value(), median = row.at(4).get_int64().value();
    for (const models::GemmPoint& p : c.points()) {
      if (p.shape.m == m && p.shape.n == n && p.shape.k == k && p.latency_ns == median) ++matched;
    }
    const std::string shape = std::to_string(m) + "," + std::to_string(n) + "," + std::to_string(k);
    queries += shape + ",tf32\n";
    doubled += "A100-SXM4-40GB,tf32," + shape + "," + models::FormatMicroseconds(2 * median) + "\n";
    answers += shape + ",tf32," + models::FormatMicroseconds(median) + ",measured\n";
  }
  EXPECT_EQ(static_cast<int64_t>(matched), tf32);
  WriteFileBytes(out.File("q.csv"), queries);
  const auto predicted = RunCommand(LumosModelBinary() + " costs predict " + out.File("m.json") +
                                    " " + out.File("q.csv") + " --gpu 'NVIDIA A100-PG509-200'");
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  EXPECT_EQ(predicted.out, "m,n,k,dtype,predicted_us,source\n" + answers);
  WriteFileBytes(out.File("doubled.csv"), doubled);
  const auto both = RunCommand(LumosModelBinary() + " costs fit " + out.File("doubled.csv") + " " +
                               out.File("control.pb.zst") + " -o " + out.File("both.json"));
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.out.find("  GEMM A100-SXM4-40GB tf32: " + std::to_string(tf32) + " shapes"),
            std::string::npos)
      << both.out;
  const auto again = RunCommand(LumosModelBinary() + " costs predict " + out.File("both.json") +
                                " " + out.File("q.csv") + " --gpu A100-SXM4-40GB");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, predicted.out);
}

// docs/validation.md, "GEMM model on traced kernels": scripts/validate-traced-gemms.sh on the
// HTA control trace through costs fit / predict. What holds, with a margin: (a) half the traced
// tf32 shapes predict the other half within a 20 % median error (measured 13.1 %) and 40 %
// time-weighted (29.8 %); (b) NVIDIA's A100 bf16 table predicts the traced tf32 GEMMs within
// 30 % median (21.6 %) and 40 % time-weighted (27.1 %).
TEST(TracedGemmValidationTest, HalfTheTracedShapesAndTheA100TablePredictTheTrace) {
  const std::string root = LUMOS_SOURCE_DIR;
  if (access((root + "/../shared/data/traces/hta-single-rank/control.json.gz").c_str(), R_OK) !=
      0) {
    GTEST_SKIP() << "no HTA control trace";
  }
  if (RunCommand("python3 -c pass").exit_code != 0) GTEST_SKIP() << "no python3";
  const auto run = RunCommand("LUMOS_MODEL=" + LumosModelBinary() + " bash " + root +
                              "/scripts/validate-traced-gemms.sh");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // "TITLE: N shapes, median X %, p90 Y %, time-weighted Z % (...)"
  auto figures = [&run](const std::string& title, double* median, double* weighted) {
    const size_t at = run.out.find(title + ": ");
    ASSERT_NE(at, std::string::npos) << run.out;
    const std::string line = run.out.substr(at, run.out.find('\n', at) - at);
    ASSERT_EQ(std::sscanf(line.c_str() + line.find(", median ") + 9, "%lf", median), 1) << line;
    ASSERT_EQ(std::sscanf(line.c_str() + line.find("time-weighted ") + 14, "%lf", weighted), 1)
        << line;
  };
  double median = 0, weighted = 0;
  figures("(a) tf32 half from the other half", &median, &weighted);
  EXPECT_LT(median, 20.0);
  EXPECT_LT(weighted, 40.0);
  figures("(b) tf32 from gemm_a100_bf16.csv", &median, &weighted);
  EXPECT_LT(median, 30.0);
  EXPECT_LT(weighted, 40.0);
}

// A job as the agent records it (sizes, algorithms, protocols): its collectives calibrate the
// collective model on the GPU of its headers, and the traced cases answer as measured, across
// nodes too when predict names the network the fit did.
TEST_F(CostsCommandTest, AnAgentTraceCalibratesTheCollectiveModel) {
  TempDir out;
  ::lumos::testing::CollectiveJob job;
  job.job_id = "llm";
  job.ranks = 16;
  job.ranks_per_host = 8;
  job.collectives = {
      {schema::CollectiveOp::kAllReduce, schema::DataType::kBfloat16, 8 << 20, 310'000},
      {schema::CollectiveOp::kReduceScatter, schema::DataType::kBfloat16, 1 << 20, 420'000},
  };
  fs::create_directories(out.File("run"));
  ::lumos::testing::WriteCollectiveJob(out.File("run"), job);
  const auto fit = RunCommand(LumosModelBinary() + " costs fit " + out.File("run") + " " +
                              Costs("nccl_h100.csv") + " --net ib800 -o " + out.File("m.json"));
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_NE(fit.out.find("  job llm (16 rank(s) on 2 hosts, NVIDIA H100 80GB HBM3): 2 collective "
                         "operation(s): 2 calibration point(s) for the collective model on "
                         "H100-SXM5-80GB (2 across hosts: measurements only); GEMM: no kernel "
                         "with a GEMM shape\n"),
            std::string::npos)
      << fit.out;
  EXPECT_NE(fit.out.find("collectives H100-SXM5-80GB (ib800 between nodes): 504 points fitted, "
                         "506 measurements (2 across nodes), from job llm, nccl_h100.csv"),
            std::string::npos)
      << fit.out;
  WriteFileBytes(out.File("q.csv"),
                 "op,dtype,ranks,bytes\nall_reduce,bfloat16,16,8388608\n"
                 "reduce_scatter,bfloat16,16,16777216\n");
  const std::string predict = LumosModelBinary() + " costs predict " + out.File("m.json") + " " +
                              out.File("q.csv") + " --gpu H100-SXM5-80GB";
  const auto same_net = RunCommand(predict + " --net ib800");
  EXPECT_EQ(same_net.exit_code, 0) << same_net.err;
  EXPECT_EQ(same_net.out,
            "op,dtype,ranks,bytes,predicted_us,source\n"
            "all_reduce,bfloat16,16,8388608,310.000,measured\n"
            "reduce_scatter,bfloat16,16,16777216,420.000,measured\n");
  const auto other_net = RunCommand(predict + " --net ib400");
  EXPECT_EQ(other_net.exit_code, 0) << other_net.err;
  EXPECT_NE(
      other_net.out.find("model only (H100-SXM5-80GB all_reduce fit; network never measured)\n"),
      std::string::npos)
      << other_net.out;
}

// Collective answers of the command are CollectivePredictor's on the model file it wrote, on the
// fabric of the row's GPU (its own calibration; another GPU's through the specs) and network.
TEST_F(CostsCommandTest, CollectiveQueriesAnswerAsThePredictorOnTheModelFile) {
  auto model = models::ReadCostModel(Model());
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->collectives.size(), 2u);
  const models::CollectiveCalibration& h100 = model->collectives[1];
  ASSERT_EQ(h100.gpu, "H100-SXM5-80GB");
  const models::SpecTable& specs = models::SpecTable::Builtin();
  const std::string queries =
      "gpu,op,dtype,ranks,nodes,bytes\n"
      "H100-SXM5-80GB,all_reduce,bfloat16,8,,1073741824\n"
      "H100-SXM5-80GB,all_reduce,bfloat16,8,2,1073741824\n"
      "B200,all_reduce,bfloat16,64,,1073741824\n";
  for (const char* net : {"ib400", "ib800"}) {
    const auto r = Predict(queries, std::string("--net ") + net);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(Lines(r.out), 4u) << r.out;
    const models::NetworkSpec& network = *specs.FindNetwork(net);
    models::CollectiveFabric across = h100.model.fabric;
    across.inter_bandwidth_gbps = network.bytes_per_s / 1e9;
    across.inter_latency_us = static_cast<double>(network.latency_ns) / 1000;
    across.name = "H100-SXM5-80GB over " + std::string(net);
    auto b200 = models::FabricFromSpecs(*specs.FindGpu("B200"), &network);
    ASSERT_TRUE(b200.ok());
    models::CollectiveQuery q;
    q.op = schema::CollectiveOp::kAllReduce;
    q.data_type = schema::DataType::kBfloat16;
    q.bytes = 1ull << 30;
    q.ranks = 8;
    q.nodes = 1;
    const int64_t one = models::CollectivePredictor(h100.model).Predict(q).duration_ns;
    q.nodes = 2;
    const int64_t two = models::CollectivePredictor(h100.model, across).Predict(q).duration_ns;
    q.ranks = 64;
    q.nodes = 8;
    const int64_t b200_64 = models::CollectivePredictor(h100.model, *b200).Predict(q).duration_ns;
    EXPECT_NE(r.out.find(",8,,1073741824," + models::FormatMicroseconds(one) + ",model only"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(",8,2,1073741824," + models::FormatMicroseconds(two) + ",model only"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(",64,,1073741824," + models::FormatMicroseconds(b200_64) + ",model only"),
              std::string::npos)
        << r.out;
    EXPECT_LT(one, two);  // The same ranks on two nodes: slower.
  }
}

// docs/validation.md's "8 ranks from 2 and 4" case as a user runs it (scripts/validate-
// collectives.sh): costs fit on the 2- and 4-rank rows of the real H100 table, costs predict on
// its 8-rank rows, every answer the library's validation answer for that row (to the rounding
// of the model file's parameters).
TEST_F(CostsCommandTest, TheValidationsMoreRanksCaseThroughTheCommandIsTheLibrarys) {
  const std::string table = ReadFileBytes(Costs("nccl_h100.csv"));
  std::string calibration, test;
  size_t line_no = 0;
  for (size_t start = 0; start < table.size(); ++line_no) {
    const size_t end = table.find('\n', start);
    const std::string line = table.substr(start, end - start + 1);
    start = end == std::string::npos ? table.size() : end + 1;
    if (line_no == 0) {
      ASSERT_EQ(line, "gpu,op,dtype,ranks,elements,bytes,latency_us\n");
      calibration = test = line;
      continue;
    }
    const size_t third = line.find(',', line.find(',', line.find(',') + 1) + 1);
    const std::string r = line.substr(third + 1, line.find(',', third + 1) - third - 1);
    (r == "8" ? test : calibration) += line;
  }
  TempDir out;
  WriteFileBytes(out.File("calibration.csv"), calibration);
  WriteFileBytes(out.File("test.csv"), test);
  const auto fit = RunCommand(LumosModelBinary() + " costs fit " + out.File("calibration.csv") +
                              " -o " + out.File("m.json"));
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const auto predicted = RunCommand(LumosModelBinary() + " costs predict " + out.File("m.json") +
                                    " " + out.File("test.csv"));
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  auto validation = models::ValidateCollectiveModel(Costs("nccl_h100.csv"), Costs("nccl_a100.csv"));
  ASSERT_TRUE(validation.ok()) << validation.status().message();
  const std::vector<models::ValidationRow>& rows = validation->cases[0].rows;
  ASSERT_EQ(rows.size(), 168u);
  ASSERT_EQ(Lines(predicted.out), 169u);
  std::vector<double> errors;
  size_t at = predicted.out.find('\n') + 1;
  for (const models::ValidationRow& row : rows) {
    const size_t end = predicted.out.find('\n', at);
    const std::string line = predicted.out.substr(at, end - at);
    at = end + 1;
    // ...,latency_us,predicted_us,source
    const size_t source = line.rfind(',');
    const size_t us = line.rfind(',', source - 1);
    const double ours = std::stod(line.substr(us + 1, source - us - 1)) * 1000;
    const double library = static_cast<double>(row.predicted.duration_ns);
    EXPECT_NEAR(ours, library, 1e-4 * library + 1) << line;
    errors.push_back(std::abs(ours - static_cast<double>(row.measured_ns)) /
                     static_cast<double>(row.measured_ns));
  }
  std::sort(errors.begin(), errors.end());
  const double median = (errors[83] + errors[84]) / 2;
  EXPECT_NEAR(median, validation->cases[0].ours.median, 1e-5);
  EXPECT_NEAR(100 * median, 4.3, 0.05);  // docs/validation.md.
}

// Nothing but traces that cannot be read: the one problem is the error (one line, exit 1), as
// for every command; several are each named, then the error.
TEST_F(CostsCommandTest, OnlyUnreadableTracesIsOneErrorPerTrace) {
  WriteFileBytes(File("random.pb.zst"), std::string(4096, 'x'));
  const auto missing = RunCommand(LumosModelBinary() + " costs fit " + File("gone.pb.zst") +
                                  " -o " + File("u.json"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_EQ(missing.err,
            "lumos-model costs fit: " + File("gone.pb.zst") + ": no such file or directory\n");
  const auto both = RunCommand(LumosModelBinary() + " costs fit " + File("gone.pb.zst") + " " +
                               File("random.pb.zst") + " -o " + File("u.json"));
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_EQ(Lines(both.err), 3u) << both.err;
  EXPECT_NE(both.err.find(File("random.pb.zst") + ": byte offset 0: not a Lumos trace"),
            std::string::npos)
      << both.err;
  EXPECT_NE(both.err.find("nothing to fit: none of the 2 inputs could be read\n"),
            std::string::npos)
      << both.err;
  EXPECT_FALSE(fs::exists(File("u.json")));
}

// The shared H200 traces (an agent before schema 2.4) name no device: fit refuses them and says
// how to name it; --gpu names it (a GPU the files name would win); an unknown --gpu is exit 2.
TEST_F(CostsCommandTest, GpuNamesTheDeviceOfTracesThatNameNone) {
  const std::string trace =
      std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch/est-base.pb.zst";
  const auto refused =
      RunCommand(LumosModelBinary() + " costs fit " + trace + " -o " + File("h200.json"));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("name no GPU device"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--gpu NAME"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(File("h200.json")));
  const auto named = RunCommand(LumosModelBinary() + " costs fit " + trace + " -o " +
                                File("h200.json") + " --gpu H200-SXM-141GB");
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_NE(named.out.find("job est-base (1 rank(s), H200-SXM-141GB)"), std::string::npos)
      << named.out;
  EXPECT_NE(named.out.find("1920 call(s)"), std::string::npos) << named.out;
  const auto unknown = RunCommand(LumosModelBinary() + " costs fit " + trace + " -o " +
                                  File("h200-2.json") + " --gpu nope");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--gpu gpu 'nope' is not in the specs"), std::string::npos)
      << unknown.err;
  EXPECT_FALSE(fs::exists(File("h200-2.json")));
}

// The attention class from one real H200 run whose attention problem the user gives (the trace
// does not record it): the main forward and backward kernels are its samples, the fit then
// scores another size of the same loop it never read (est-width: batch 4, head size 128, as
// the run; est-base: head size 64, which its kernels run less efficiently) far closer than the
// roofline alone (scripts/validate-attention.sh: -5.1 % and -25.3 %, roofline -57 % and -69 %).
TEST_F(CostsCommandTest, AttentionCalibratedFromATracedRunGivenItsShape) {
  const std::string data = std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch/";
  const auto fit = RunCommand(LumosModelBinary() + " costs fit " + data +
                              "gpt-lumos.pb.zst --gpu H200-SXM-141GB --attention "
                              "batch=8,heads=16,seq_q=1024,head_dim=128 -o " +
                              File("att.json"));
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_NE(fit.out.find("attention 320"), std::string::npos) << fit.out;
  EXPECT_NE(fit.out.find("kernels H200-SXM-141GB attention: 320 kernels"), std::string::npos)
      << fit.out;
  // Measured fwd + bwd means of the held-out runs (replay's GPU time by class): 172.2 us and
  // 120.2 us.
  const std::string header = "class,dtype,batch,heads,seq_q,head_dim,causal,backward,bytes,flops\n";
  auto pair = [&](const std::string& shape, const std::string& model) {
    const auto r =
        Predict(header + "attention,bf16," + shape + ",1,0,,\nattention,bf16," + shape + ",1,1,,\n",
                "--gpu H200-SXM-141GB", model);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    double sum = 0;
    for (size_t at = r.out.find('\n'); at != std::string::npos && at + 1 < r.out.size();
         at = r.out.find('\n', at + 1)) {
      const std::string row = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
      size_t comma = 0;
      for (int i = 0; i < 10; ++i) comma = row.find(',', comma) + 1;
      sum += std::stod(row.substr(comma));
    }
    return sum;
  };
  EXPECT_NEAR(pair("4,16,1024,128", File("att.json")) / 172.2, 1.0, 0.10);
  EXPECT_NEAR(pair("4,16,1024,64", File("att.json")) / 120.2, 1.0, 0.30);
  EXPECT_LT(pair("4,16,1024,64", Model()) / 120.2, 0.4);  // The roofline alone.
  for (const auto& [shape, says] : std::vector<std::pair<std::string, std::string>>{
           {"batch=8,heads=16,seq_q=1024", "give batch, heads, seq_q and head_dim"},
           {"batch=8,heads=16,seq_q=1024,head_dim=x", "'head_dim=x' must be KEY=N"},
           {"batch=8,heads=16,seq_q=1024,head_dim=128,window=4", "'window=4': keys"},
           {"batch=8,heads=16,seq_q=1024,head_dim=128,kv_heads=32", "kv"}}) {
    std::string command = LumosModelBinary() + " costs fit " + data;
    command += "gpt-lumos.pb.zst --gpu H200-SXM-141GB --attention " + shape;
    command += " -o " + File("never.json");
    const auto bad = RunCommand(command);
    EXPECT_EQ(bad.exit_code, 2) << shape;
    EXPECT_NE(bad.err.find(says), std::string::npos) << bad.err;
    EXPECT_FALSE(fs::exists(File("never.json")));
  }
}

// The traced GEMMs of one real H200 run (a sustained bf16 training loop: forward, input and
// weight gradients) written as a measured table, then predicted from NVIDIA's H100 bf16 table
// alone (short CUDA-graph bursts, carried to the H200 by its specs): the training kernels take
// what the table says, within 5 % each and 2 % in all (docs/validation.md, "Traced GEMMs against
// the tables").
TEST_F(CostsCommandTest, TracedGemmsWrittenAsATableAndTheH100TablePredictsThem) {
  const std::string trace =
      std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch/gpt-lumos.pb.zst";
  const auto fit =
      RunCommand(LumosModelBinary() + " costs fit " + trace + " --gpu H200-SXM-141GB -o " +
                 File("traced.json") + " --traced-gemms " + File("traced.csv"));
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const std::string table = ReadFileBytes(File("traced.csv"));
  ASSERT_EQ(table.rfind("gpu,dtype,m,n,k,latency_us\n", 0), 0u) << table;
  EXPECT_EQ(Lines(table), 9u) << table;  // Four layers' GEMMs: 8 shapes.
  EXPECT_NE(table.find("H200-SXM-141GB,bf16,8192,8192,2048,"), std::string::npos) << table;
  const auto tables = RunCommand(LumosModelBinary() + " costs fit " + Costs("gemm_h100_bf16.csv") +
                                 " -o " + File("h100.json"));
  ASSERT_EQ(tables.exit_code, 0) << tables.err;
  std::string queries = "gpu,dtype,m,n,k\n";
  std::vector<double> measured;
  for (size_t at = table.find('\n') + 1; at < table.size(); at = table.find('\n', at) + 1) {
    const std::string row = table.substr(at, table.find('\n', at) - at);
    const size_t last = row.rfind(',');
    queries += row.substr(0, last) + "\n";
    measured.push_back(std::stod(row.substr(last + 1)));
  }
  const auto predicted = Predict(queries, "", File("h100.json"));
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  double measured_sum = 0, predicted_sum = 0;
  size_t i = 0;
  for (size_t at = predicted.out.find('\n') + 1; at < predicted.out.size() && i < measured.size();
       at = predicted.out.find('\n', at) + 1, ++i) {
    const std::string row = predicted.out.substr(at, predicted.out.find('\n', at) - at);
    size_t comma = 0;
    for (int c = 0; c < 5; ++c) comma = row.find(',', comma) + 1;
    const double us = std::stod(row.substr(comma));
    EXPECT_NE(row.find("scaled from H100-SXM5-80GB bf16"), std::string::npos) << row;
    EXPECT_NEAR(measured[i] / us, 1.0, 0.05) << row;
    measured_sum += measured[i];
    predicted_sum += us;
  }
  EXPECT_EQ(i, measured.size());
  EXPECT_NEAR(measured_sum / predicted_sum, 1.0, 0.02);
  // One file for both outputs is refused before anything is read.
  const auto same =
      RunCommand(LumosModelBinary() + " costs fit " + trace + " --gpu H200-SXM-141GB -o " +
                 File("x.json") + " --traced-gemms " + File("x.json"));
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_NE(same.err.find("name the same file"), std::string::npos) << same.err;
  // The same file under another spelling, neither existing yet.
  const auto spelled =
      RunCommand(LumosModelBinary() + " costs fit " + trace + " --gpu H200-SXM-141GB -o " +
                 File("y.json") + " --traced-gemms " + File("sub/../y.json") + " --force");
  EXPECT_EQ(spelled.exit_code, 2);
  EXPECT_NE(spelled.err.find("name the same file"), std::string::npos) << spelled.err;
  EXPECT_FALSE(fs::exists(File("y.json")));
  // A table it may not replace: refused before the model file is written either.
  WriteFileBytes(File("mine.csv"), "not lumos-model's\n");
  const auto kept =
      RunCommand(LumosModelBinary() + " costs fit " + trace + " --gpu H200-SXM-141GB -o " +
                 File("z.json") + " --traced-gemms " + File("mine.csv"));
  EXPECT_EQ(kept.exit_code, 1);
  EXPECT_NE(kept.err.find("will not replace"), std::string::npos) << kept.err;
  EXPECT_EQ(ReadFileBytes(File("mine.csv")), "not lumos-model's\n");
  EXPECT_FALSE(fs::exists(File("z.json")));
}

TEST(CostsHelpTest, DocumentsGemmAndCollectiveQueriesAndEveryNetwork) {
  const auto help = RunCommand(LumosModelBinary() + " costs --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.err, "");
  for (const char* part :
       {"collectives (gpu, op, dtype, ranks, elements, bytes, latency_us; nodes", "Lumos traces",
        "GEMM kernels with a shape", "the median of its calls", "span nodes over --net",
        "scaled from GPU OP fit", "model only (NCCL's constants)", "--net NAME",
        "op,dtype,ranks,bytes", "--gpu B200 --net ib800"}) {
    EXPECT_NE(help.out.find(part), std::string::npos) << part << "\n" << help.out;
  }
  // Every network of the built-in specs is named.
  for (const models::NetworkSpec& network : models::SpecTable::Builtin().networks()) {
    EXPECT_NE(help.out.find(network.name + ","), std::string::npos) << network.name;
  }
  for (const char* sub : {"fit", "predict"}) {
    const auto r = RunCommand(LumosModelBinary() + " costs " + sub + " --help");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("--net NAME"), std::string::npos) << sub;
  }
}

}  // namespace
}  // namespace lumos::modeler
