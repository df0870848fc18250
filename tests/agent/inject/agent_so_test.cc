// The shipped .so is self-contained and exports only its entry points.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "tests/testing/run_command.h"

namespace lumos::agent {
namespace {

using ::lumos::testing::RunCommand;

TEST(AgentSoTest, NeedsOnlyTheCLibrary) {
  auto r = RunCommand(std::string("readelf -d ") + LUMOS_AGENT_SO_PATH);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> needed;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("(NEEDED)") == std::string::npos) continue;
    const size_t open = line.find('['), close = line.find(']');
    ASSERT_NE(open, std::string::npos);
    needed.insert(line.substr(open + 1, close - open - 1));
  }
  for (const std::string& lib : needed) {
    EXPECT_TRUE(lib == "libc.so.6" || lib == "libm.so.6" || lib.rfind("ld-linux", 0) == 0)
        << "unexpected NEEDED " << lib;
  }
  EXPECT_TRUE(needed.count("libc.so.6"));
}

// Preloading a library that needs a newer glibc than the job's stops the job at start-up, so
// the .so imports nothing newer than glibc 2.35 (Ubuntu 22.04), wherever it is built.
TEST(AgentSoTest, ImportsNothingNewerThanGlibc235) {
  auto r = RunCommand(std::string("objdump -T ") + LUMOS_AGENT_SO_PATH);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  int imports = 0;
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find("(GLIBC_2.");
    if (at == std::string::npos || line.find("*UND*") == std::string::npos) continue;
    ++imports;
    const int minor = std::stoi(line.substr(at + 9));
    EXPECT_LE(minor, 35) << line;
  }
  EXPECT_GT(imports, 10);
}

// zstd refers weakly to its tracing hooks; undefined, they would bind to a job's definitions
// and be handed the agent's zstd contexts.
TEST(AgentSoTest, LeavesNoZstdHookToTheJob) {
  auto r = RunCommand(std::string("nm -D ") + LUMOS_AGENT_SO_PATH);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.out.find("dlopen"), std::string::npos) << r.out;  // Imports are listed.
  EXPECT_EQ(r.out.find("ZSTD_"), std::string::npos) << r.out;
}

// libcupti is dlopen'd (the framework's copy when there is one), never a NEEDED entry.
TEST(AgentSoTest, DoesNotNeedCupti) {
  auto r = RunCommand(std::string("readelf -d ") + LUMOS_AGENT_SO_PATH);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.out.find("(NEEDED)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libcupti"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libcuda"), std::string::npos) << r.out;
}

TEST(AgentSoTest, ExportsOnlyEntryPoints) {
  // Defined dynamic symbols (undefined ones are what we import from libc).
  auto r = RunCommand(std::string("nm -D --defined-only ") + LUMOS_AGENT_SO_PATH);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> exported;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string address, type, name;
    fields >> address >> type >> name;
    if (name.empty() || type == "A") continue;  // Version nodes.
    exported.insert(name);
    // NCCL looks the plugin up as data symbols; the wrappers are functions.
    if (name.rfind("ncclProfiler_v", 0) == 0) {
      EXPECT_TRUE(type == "D" || type == "B") << line;
    }
    if (name.rfind("ncclComm", 0) == 0 || name.rfind("cublas", 0) == 0) {
      EXPECT_EQ(type, "T") << line;
    }
  }
  std::set<std::string> expected = {"InitializeInjection",
                                    "InitializeInjectionNvtx2",
                                    "ncclProfiler_v5",
                                    "ncclProfiler_v4",
                                    "ncclCommInitRank",
                                    "ncclCommInitRankConfig",
                                    "ncclCommInitRankScalable",
                                    "ncclCommInitAll",
                                    "ncclCommSplit",
                                    "ncclCommShrink",
                                    "ncclCommDestroy",
                                    "ncclCommAbort",
                                    "ncclAllReduce",
                                    "ncclReduce",
                                    "ncclBroadcast",
                                    "ncclBcast",
                                    "ncclReduceScatter",
                                    "ncclAllGather",
                                    "ncclAlltoAll",
                                    "ncclGather",
                                    "ncclScatter",
                                    "ncclSend",
                                    "ncclRecv",
                                    "ncclGroupStart",
                                    "ncclGroupEnd"};
  // The cuBLAS / cuBLASLt GEMM wrappers: every entry point as 32- and 64-bit (_64), functions.
  std::set<std::string> gemm = {"cublasLtMatmul"};
  for (const char* name :
       {"cublasSgemm_v2", "cublasDgemm_v2", "cublasCgemm_v2", "cublasZgemm_v2", "cublasHgemm",
        "cublasSgemmBatched", "cublasDgemmBatched", "cublasCgemmBatched", "cublasZgemmBatched",
        "cublasHgemmBatched", "cublasSgemmStridedBatched", "cublasDgemmStridedBatched",
        "cublasCgemmStridedBatched", "cublasZgemmStridedBatched", "cublasHgemmStridedBatched",
        "cublasSgemmEx", "cublasGemmEx", "cublasGemmBatchedEx", "cublasGemmStridedBatchedEx"}) {
    gemm.insert(name);
    gemm.insert(std::string(name) + "_64");
  }
  expected.insert(gemm.begin(), gemm.end());
  EXPECT_EQ(gemm.size(), 39u);
  EXPECT_EQ(exported, expected);
}

}  // namespace
}  // namespace lumos::agent
