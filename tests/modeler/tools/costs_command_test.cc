// `lumos-model costs fit|predict` as a user runs it: the real binary on the shared measured
// tables (../shared/data/costs), its outputs, and one error line naming the row for each kind
// of bad query, with nothing written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

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
    const auto fit = RunCommand(LumosModelBinary() + " costs fit " + Costs("gemm_a100_bf16.csv") +
                                " -o " + Model());
    ASSERT_EQ(fit.exit_code, 0) << fit.err;
  }
  static void TearDownTestSuite() { dir_.reset(); }
  static std::string Model() { return dir_->File("a100.json"); }
  static std::string File(const std::string& name) { return dir_->File(name); }
  // Runs `costs predict MODEL QUERIES ARGS` on `queries` written to q.csv.
  static ::lumos::testing::CommandResult Predict(const std::string& queries,
                                                 const std::string& args) {
    WriteFileBytes(File("q.csv"), queries);
    return RunCommand(LumosModelBinary() + " costs predict " + Model() + " " + File("q.csv") + " " +
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
  EXPECT_NE(r.out.find("m.json: 2 GEMM calibration(s) from 2 table(s)\n"), std::string::npos);
  EXPECT_NE(r.out.find("GEMM H100-SXM5-80GB bf16: 35700 shapes, floor 2.535 us"), std::string::npos)
      << r.out;
  const std::string model = ReadFileBytes(out.File("m.json"));
  EXPECT_EQ(model.rfind("{\n  \"format\": \"lumos-cost-model\",\n  \"version\": 1,", 0), 0u);
  // A directory of tables is every *.csv inside it.
  fs::copy_file(Costs("gemm_a100_bf16.csv"), out.File("a.csv"));
  const auto dir =
      RunCommand(LumosModelBinary() + " costs fit " + out.path() + " -o " + out.File("d.json"));
  EXPECT_EQ(dir.exit_code, 0) << dir.err;
  EXPECT_NE(dir.out.find("1 GEMM calibration(s) from 1 table(s)"), std::string::npos) << dir.out;
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
        BadQuery{"CollectiveQueries", "op,dtype,ranks,bytes\nall_reduce,half,8,1024\n",
                 "--gpu B200", 1, ": collective queries: the collective model is not part"},
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

TEST_F(CostsCommandTest, FitRefusesTracesAndSkipsCollectiveTablesForNow) {
  const auto trace = RunCommand(LumosModelBinary() + " costs fit " + std::string(LUMOS_SOURCE_DIR) +
                                "/examples/dlrm-8rank -o " + File("t.json"));
  EXPECT_EQ(trace.exit_code, 1);
  EXPECT_NE(trace.err.find("Lumos traces carry no GEMM shapes yet"), std::string::npos)
      << trace.err;
  const auto nccl = RunCommand(LumosModelBinary() + " costs fit " + Costs("nccl_h100.csv") +
                               " -o " + File("n.json"));
  EXPECT_EQ(nccl.exit_code, 1);
  EXPECT_EQ(nccl.err, "lumos-model costs fit: " + Costs("nccl_h100.csv") +
                          ": a collective table: the collective model is not part of costs fit "
                          "yet (GEMM tables only); skipped: nothing to fit\n");
  EXPECT_FALSE(fs::exists(File("t.json")));
  EXPECT_FALSE(fs::exists(File("n.json")));
  // Beside a GEMM table (the shared directory holds both): skipped, named, the rest fitted.
  const auto both = RunCommand(LumosModelBinary() + " costs fit " + Costs("nccl_a100.csv") + " " +
                               Costs("gemm_a100_bf16.csv") + " -o " + File("b.json"));
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_EQ(both.err, "lumos-model costs fit: " + Costs("nccl_a100.csv") +
                          ": a collective table: the collective model is not part of costs fit "
                          "yet (GEMM tables only); skipped\n");
  EXPECT_NE(both.out.find("1 GEMM calibration(s) from 1 table(s)"), std::string::npos);
  EXPECT_TRUE(fs::exists(File("b.json")));
  const auto same = RunCommand(LumosModelBinary() + " costs fit " + Model() + " -o " + Model());
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_NE(same.err.find("is also an input"), std::string::npos);
}

}  // namespace
}  // namespace lumos::modeler
