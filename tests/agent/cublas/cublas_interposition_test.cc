// End to end: programs that reach (fake) cuBLAS / cuBLASLt in each way the agent must handle,
// under the real lumos-run, their traces read back with the modeler's reader. The fakes stand
// in for a GPU (fake_cublas/): they compute nothing, but take the calls with cuBLAS's own
// prototypes, versioned symbols and sonames, and cuBLASLt's descriptor objects.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "modeler/trace/trace_reader.h"
#include "tests/agent/cublas/cublas_sequence.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

namespace pb = ::lumos::trace;
using ::lumos::testing::ExpectedGemm;
using ::lumos::testing::ExpectedGemmCalls;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

struct Trace {
  std::vector<pb::GemmCall> gemm_calls;
  std::vector<int64_t> starts;
  pb::TraceHeader header;
  int files = 0;
};

Trace ReadTraces(const std::string& dir) {
  Trace trace;
  for (const std::string& name : ::lumos::testing::ListDir(dir)) {
    ++trace.files;
    auto reader = modeler::TraceReader::Open(dir + "/" + name);
    EXPECT_TRUE(reader.ok()) << reader.status().message();
    if (!reader.ok()) continue;
    trace.header = (*reader)->header();
    modeler::ReadResult read;
    Status status = (*reader)->ReadPackets(
        [&](const pb::TracePacket& packet, const modeler::PacketContext& context) {
          if (packet.has_gemm_call()) {
            trace.gemm_calls.push_back(packet.gemm_call());
            trace.starts.push_back(context.start_ns);
          }
          return Status::Ok();
        },
        &read);
    EXPECT_TRUE(status.ok()) << status.message();
    EXPECT_TRUE(read.has_trailer);
    EXPECT_TRUE(read.damage.ok()) << read.damage.message();
  }
  return trace;
}

// Runs `command` under lumos-run with the fake cuBLAS of `fake_dir` first on the library path.
::lumos::testing::CommandResult RunTraced(const std::string& dir, const std::string& env,
                                          const std::string& command,
                                          const std::string& fake_dir = FAKE_CUBLAS_DIR) {
  return RunCommand("LD_LIBRARY_PATH=" + fake_dir + " LUMOS_FLUSH_INTERVAL_MS=10 " + env + " " +
                    LUMOS_RUN_PATH + " -o " + dir + " -- " + command);
}

::lumos::testing::CommandResult RunUntraced(const std::string& command,
                                            const std::string& fake_dir = FAKE_CUBLAS_DIR) {
  return RunCommand("LD_LIBRARY_PATH=" + fake_dir + " " + command);
}

// What the sequence prints: each call's status as the fake returns it.
std::string ExpectedOutput() {
  std::string out;
  for (const ExpectedGemm& e : ExpectedGemmCalls()) {
    out += e.entry + " " + std::to_string(e.expected_status) + "\n";
  }
  return out;
}

int ExpectedLtRuns() {
  int runs = 0;
  for (const ExpectedGemm& e : ExpectedGemmCalls()) {
    runs += e.form == ::lumos::testing::GemmForm::kLtMatmul || e.runs_on_lt ? 1 : 0;
  }
  return runs;
}

std::string ExpectedCounts() {
  return "fake cublas gemm calls " +
         std::to_string(ExpectedGemmCalls().size() - 2) +  // Without the two cuBLASLt calls.
         ", cublasLt matmul calls " + std::to_string(ExpectedLtRuns()) + "\n";
}

// Every call of the sequence is one record, in call order, field by field. `helpers`: the
// fakes have the getters (else: what needs them is "not known").
void ExpectSequence(const Trace& trace, bool helpers) {
  const std::vector<ExpectedGemm>& expected = ExpectedGemmCalls();
  ASSERT_EQ(trace.gemm_calls.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const ExpectedGemm& e = expected[i];
    const pb::GemmCall& g = trace.gemm_calls[i];
    SCOPED_TRACE(e.entry + " (call " + std::to_string(i) + "): " + g.ShortDebugString());
    const bool lt = e.form == ::lumos::testing::GemmForm::kLtMatmul;
    EXPECT_EQ(g.api(), static_cast<pb::GemmApi>(e.api));
    EXPECT_EQ(g.return_code(), e.expected_status);
    EXPECT_NE(g.thread_id(), 0u);
    EXPECT_GT(trace.starts[i], 0);
    if (i > 0) {
      EXPECT_GE(trace.starts[i], trace.starts[i - 1]);
    }
    if (lt && !helpers) {
      // No getters: the call passed through; only what the arguments say is known.
      EXPECT_EQ(g.m(), 0u);
      EXPECT_EQ(g.batch_count(), 0u);
      EXPECT_EQ(g.a_type(), pb::DATA_TYPE_UNSPECIFIED);
      EXPECT_EQ(g.stream_id(), ::lumos::testing::kSequenceLtStream);
      continue;
    }
    EXPECT_EQ(g.m(), e.m < 0 ? 0u : static_cast<uint64_t>(e.m));
    EXPECT_EQ(g.n(), static_cast<uint64_t>(e.n));
    EXPECT_EQ(g.k(), static_cast<uint64_t>(e.k));
    EXPECT_EQ(g.batch_count(), static_cast<uint64_t>(e.batch));
    EXPECT_EQ(g.transa(), static_cast<pb::GemmTranspose>(e.record_transa));
    EXPECT_EQ(g.transb(), static_cast<pb::GemmTranspose>(e.record_transb));
    EXPECT_EQ(g.a_type(), static_cast<pb::DataType>(e.record_a));
    EXPECT_EQ(g.b_type(), static_cast<pb::DataType>(e.record_b));
    EXPECT_EQ(g.c_type(), static_cast<pb::DataType>(e.record_c));
    EXPECT_EQ(g.d_type(), static_cast<pb::DataType>(e.record_d));
    EXPECT_EQ(g.compute_type(), static_cast<pb::GemmComputeType>(e.record_compute));
    if (lt) {
      EXPECT_EQ(g.stream_id(), ::lumos::testing::kSequenceLtStream);
      EXPECT_EQ(g.math_mode(), pb::GEMM_MATH_MODE_UNSPECIFIED);  // No handle mode in cuBLASLt.
    } else if (helpers) {
      EXPECT_EQ(g.stream_id(), ::lumos::testing::kSequenceStream);
      EXPECT_EQ(g.math_mode(), pb::GEMM_MATH_MODE_TF32_TENSOR_OP);
    } else {
      EXPECT_EQ(g.stream_id(), 0u);
      EXPECT_EQ(g.math_mode(), pb::GEMM_MATH_MODE_UNSPECIFIED);
    }
    EXPECT_EQ(g.name_iid(), 0u);
    EXPECT_EQ(g.correlation_id(), 0u);
  }
}

// Case A: a program linked to libcublas / libcublasLt through their versioned symbols. Every
// entry point is recorded once (the cuBLASLt call the fake's cublasGemmEx makes inside is not
// a second record), and the program sees exactly what it sees without the agent.
TEST(CublasInterpositionTest, LinkedProgramRecordsEveryEntryPoint) {
  const auto untraced = RunUntraced(LINKED_WORKLOAD_PATH);
  ASSERT_EQ(untraced.exit_code, 0) << untraced.out;
  EXPECT_EQ(untraced.out, ExpectedOutput() + ExpectedCounts());
  TempDir dir;
  const auto traced = RunTraced(dir.path(), "", LINKED_WORKLOAD_PATH);
  ASSERT_EQ(traced.exit_code, 0) << traced.out;
  EXPECT_EQ(traced.out, untraced.out);
  Trace trace = ReadTraces(dir.path());
  EXPECT_EQ(trace.files, 1);
  ExpectSequence(trace, /*helpers=*/true);
  ASSERT_EQ(trace.header.capture_config().channels_size() > 0, true);
  bool cublas_channel = false;
  for (int c : trace.header.capture_config().channels()) {
    cublas_channel |= c == pb::CHANNEL_CUBLAS;
  }
  EXPECT_TRUE(cublas_channel);
}

// Case C, the PyTorch shape: cuBLAS NEEDed by a library dlopen'd RTLD_LOCAL, where RTLD_NEXT
// cannot see it: the wrappers find it through its soname (RTLD_NOLOAD).
TEST(CublasInterpositionTest, LocalScopeLibraryIsFoundByItsSoname) {
  const std::string command = std::string(LOADER_WORKLOAD_PATH) + " torch " FAKETORCH_CUBLAS_PATH;
  const auto untraced = RunUntraced(command);
  ASSERT_EQ(untraced.exit_code, 0) << untraced.out;
  EXPECT_EQ(untraced.out, ExpectedOutput() + ExpectedCounts());
  TempDir dir;
  const auto traced = RunTraced(dir.path(), "", command);
  ASSERT_EQ(traced.exit_code, 0) << traced.out;
  EXPECT_EQ(traced.out, untraced.out);
  ExpectSequence(ReadTraces(dir.path()), /*helpers=*/true);
}

// Fail open: a cuBLAS without the getters the record needs (cublasGetMathMode,
// cublasGetStream_v2, cuBLASLt's GetAttribute pair). Every call still reaches the library with
// its own result; the records keep what the arguments say and leave the rest "not known".
TEST(CublasInterpositionTest, MissingGettersLeaveFieldsUnknownAndCallsPassThrough) {
  const auto untraced = RunUntraced(LINKED_WORKLOAD_PATH, FAKE_CUBLAS_BARE_DIR);
  ASSERT_EQ(untraced.exit_code, 0) << untraced.out;
  EXPECT_EQ(untraced.out, ExpectedOutput() + ExpectedCounts());
  TempDir dir;
  const auto traced = RunTraced(dir.path(), "", LINKED_WORKLOAD_PATH, FAKE_CUBLAS_BARE_DIR);
  ASSERT_EQ(traced.exit_code, 0) << traced.out;
  EXPECT_EQ(traced.out, untraced.out);
  ExpectSequence(ReadTraces(dir.path()), /*helpers=*/false);
}

// The channel off: nothing is recorded, every call passes through (the agent does not even
// start: no other channel was reached, so there is no trace file).
TEST(CublasInterpositionTest, ChannelOffRecordsNothing) {
  TempDir dir;
  const auto traced =
      RunTraced(dir.path(), "LUMOS_CHANNELS=nvtx,nccl_wrappers", LINKED_WORKLOAD_PATH);
  ASSERT_EQ(traced.exit_code, 0) << traced.out;
  EXPECT_EQ(traced.out, ExpectedOutput() + ExpectedCounts());
  const Trace trace = ReadTraces(dir.path());
  EXPECT_EQ(trace.files, 0);
  EXPECT_TRUE(trace.gemm_calls.empty());
  // `lumos-run --channels` takes the new channel's name.
  TempDir only;
  const auto cublas_only =
      RunCommand("LD_LIBRARY_PATH=" FAKE_CUBLAS_DIR " " LUMOS_RUN_PATH " --channels cublas -o " +
                 only.path() + " -- " LINKED_WORKLOAD_PATH);
  ASSERT_EQ(cublas_only.exit_code, 0) << cublas_only.out;
  ExpectSequence(ReadTraces(only.path()), /*helpers=*/true);
}

// No libcublas in the process at all: the agent's exported cublasGemmEx / cublasLtMatmul (what
// dlsym(RTLD_DEFAULT) finds) have nothing to call: CUBLAS_STATUS_NOT_INITIALIZED, one warning.
TEST(CublasInterpositionTest, UnresolvableFunctionReturnsNotInitialized) {
  TempDir dir;
  const auto traced =
      RunTraced(dir.path(), "", std::string(LOADER_WORKLOAD_PATH) + " unresolved", "/nonexistent");
  ASSERT_EQ(traced.exit_code, 0) << traced.out;
  const std::string status = std::to_string(CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_NE(traced.out.find("cublasGemmEx returned " + status), std::string::npos) << traced.out;
  EXPECT_NE(traced.out.find("cublasLtMatmul returned " + status), std::string::npos) << traced.out;
  size_t warnings = 0;
  for (size_t at = traced.err.find("not found in any loaded"); at != std::string::npos;
       at = traced.err.find("not found in any loaded", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << traced.err;
  EXPECT_TRUE(ReadTraces(dir.path()).gemm_calls.empty());
}

// `lumos-model inspect` counts the GEMM calls (no kernels here: the fakes launch nothing).
TEST(CublasInterpositionTest, InspectCountsGemmCalls) {
  TempDir dir;
  ASSERT_EQ(RunTraced(dir.path(), "", LINKED_WORKLOAD_PATH).exit_code, 0);
  const auto inspect = RunCommand(std::string(LUMOS_MODEL_PATH) + " inspect " + dir.path());
  ASSERT_EQ(inspect.exit_code, 0) << inspect.out;
  EXPECT_NE(inspect.out.find("gemm_call " + std::to_string(ExpectedGemmCalls().size())),
            std::string::npos)
      << inspect.out;
  EXPECT_NE(inspect.out.find("kernels with a GEMM shape: 0 of 0"), std::string::npos)
      << inspect.out;
}

}  // namespace
}  // namespace lumos::agent
