// Runs nccl_allreduce_workload under lumos-run on a real GPU and checks the trace exactly: one
// Communicator (rank 0 of 1, device 0), kAllReduces collectives on it with seq numbers
// 0..kAllReduces-1, op ALLREDUCE, float32 sum, count and bytes as issued, and the workload's
// NVTX ranges. Once with every channel (each all-reduce recorded once, by the profiler plugin or,
// where NCCL's one-rank shortcut gives the plugin no Coll event, by the wrappers), once with the
// LD_PRELOAD wrappers as the only NCCL route. Skipped (GTEST_SKIP) without a GPU.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "cuda_tests/nccl_allreduce_workload.h"
#include "cuda_tests/workload_run.h"
#include "schema/enums.h"

namespace lumos::cuda_tests {
namespace {

void CheckAllReduceTrace(const std::string& env) {
  ::lumos::testing::TempDir dir;
  WorkloadRun run = RunUnderLumos(dir, WORKLOAD_PATH, env);
  if (run.skipped) GTEST_SKIP() << "no GPU: " << run.result.out;
  ASSERT_EQ(run.result.exit_code, 0) << run.result.out << run.result.err;
  ASSERT_NE(run.result.out.find("nccl_allreduce_workload: ok"), std::string::npos)
      << run.result.out;
  ASSERT_FALSE(run.trace_path.empty());

  std::vector<modeler::pb::Communicator> communicators;
  std::vector<modeler::pb::NcclCollective> collectives;
  int allreduce_ranges = 0;
  std::vector<std::string> failures;
  modeler::pb::TraceHeader header;
  modeler::pb::Trailer trailer;
  ReadTrace(run.trace_path, [&](const modeler::pb::TracePacket& p,
                                const modeler::PacketContext& context) {
    if (p.has_header()) header = p.header();
    if (p.has_trailer()) trailer = p.trailer();
    if (p.has_communicator()) communicators.push_back(p.communicator());
    if (p.has_collective()) collectives.push_back(p.collective());
    // NCCL's own NVTX ranges (domain "NCCL") come through the agent too; count ours only.
    if (p.has_nvtx() && p.nvtx().kind() == modeler::pb::NVTX_KIND_PUSH_POP &&
        context.String(p.nvtx().name_iid()) == kAllReduceRange &&
        context.String(p.nvtx().domain_iid()).empty()) {
      ++allreduce_ranges;
    }
    if (p.has_loss() && Int(p.loss().source()) == Int(schema::LossSource::kChannelFailed)) {
      failures.push_back(p.loss().detail());
    }
  });
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_EQ(allreduce_ranges, kAllReduces);
  // The rank the NCCL world communicator gives (here 0 of 1) names the file and is in the
  // trailer; with the CUPTI channels on, the header has the loaded CUPTI's version.
  EXPECT_TRUE(trailer.has_rank());
  EXPECT_EQ(trailer.rank(), 0);
  EXPECT_EQ(trailer.world_size(), 1);
  EXPECT_NE(run.trace_path.find(".rank0.pb.zst"), std::string::npos) << run.trace_path;
  EXPECT_GT(header.cupti_version(), 0u);  // Both runs have the CUPTI channels on.

  ASSERT_EQ(communicators.size(), 1u);
  const modeler::pb::Communicator& comm = communicators[0];
  EXPECT_NE(comm.comm_id(), 0u);
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.comm_size(), 1u);
  EXPECT_EQ(comm.device_id(), 0u);

  ASSERT_EQ(collectives.size(), static_cast<size_t>(kAllReduces));
  std::set<uint64_t> seq_numbers;
  for (const modeler::pb::NcclCollective& c : collectives) {
    EXPECT_EQ(c.comm_id(), comm.comm_id());
    EXPECT_EQ(Int(c.op()), Int(schema::CollectiveOp::kAllReduce));
    EXPECT_EQ(Int(c.data_type()), Int(schema::DataType::kFloat32));
    EXPECT_EQ(Int(c.reduce_op()), Int(schema::ReduceOp::kSum));
    EXPECT_EQ(c.count(), static_cast<uint64_t>(kAllReduceElements));
    EXPECT_EQ(c.bytes(), static_cast<uint64_t>(kAllReduceBytes));
    seq_numbers.insert(c.seq_number());
  }
  std::set<uint64_t> expected;
  for (uint64_t i = 0; i < kAllReduces; ++i) expected.insert(i);
  EXPECT_EQ(seq_numbers, expected);  // 0..K-1, each once.
}

TEST(NcclAllReduceTest, EveryRouteRecordsEachAllReduceOnce) { CheckAllReduceTrace(""); }

TEST(NcclAllReduceTest, WrappersAloneRecordEachAllReduce) {
  CheckAllReduceTrace("LUMOS_CHANNELS=cupti_activity,cupti_callback,nccl_wrappers,nvtx");
}

}  // namespace
}  // namespace lumos::cuda_tests
