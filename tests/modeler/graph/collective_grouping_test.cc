// Which NCCL records on different ranks the graph and the clock alignment treat as one
// operation (modeler/graph/collective_key.h), on hand-built jobs: NCCL's seq numbers count per
// communicator and function, the agent's send/recv numbers per direction, and neither may merge
// different operations.
#include <gtest/gtest.h>

#include "modeler/graph/collective_key.h"
#include "tests/testing/job_builder.h"

namespace lumos::modeler::testing {
namespace {

using schema::ApiKind;
using schema::CollectiveOp;

constexpr uint64_t kComm = 42;

// The FSDP pattern: each rank runs AllGather #0 then ReduceScatter #0 on one communicator (both
// seq 0: NCCL counts each function apart). Times in µs:
//   rank 0  ag [10,110)  rs [200,260)
//   rank 1  ag [60,110)  rs [230,260)
// Two groups: the all-gathers (transfer 110 - 60 = 50) and the reduce-scatters (260 - 230 = 30).
Job AllGatherThenReduceScatterJob() {
  Job job;
  job.job_id = "fsdp";
  const int64_t ag_start[] = {10, 60}, rs_start[] = {200, 230};
  for (int32_t rank = 0; rank < 2; ++rank) {
    RankBuilder(&job, rank, 2)
        .Communicator(kComm, rank, 2)
        .Api(ApiKind::kLaunchKernel, "launch_ag", 0, 5, 1)
        .Api(ApiKind::kLaunchKernel, "launch_rs", 5, 5, 2)
        .Kernel("ag", 5, ag_start[rank], 110 - ag_start[rank], 1)
        .Kernel("rs", 5, rs_start[rank], 260 - rs_start[rank], 2)
        .Collective(kComm, 0, 1, 5, ag_start[rank], 110 - ag_start[rank], 2)
        .Op(CollectiveOp::kAllGather)
        .Collective(kComm, 0, 2, 5, rs_start[rank], 260 - rs_start[rank], 2)
        .Op(CollectiveOp::kReduceScatter);
  }
  return job;
}

TEST(CollectiveGroupingTest, AllGatherAndReduceScatterWithOneSeqAreNotMerged) {
  const Job job = AllGatherThenReduceScatterJob();
  const Replayed r = Replay(job, {}, false, /*align=*/true);
  ASSERT_EQ(r.graph.collectives.size(), 2u);
  const uint32_t ag0 = NodeNamed(r.graph, 0, "ag"), ag1 = NodeNamed(r.graph, 1, "ag");
  const uint32_t rs0 = NodeNamed(r.graph, 0, "rs"), rs1 = NodeNamed(r.graph, 1, "rs");
  ASSERT_NE(r.graph.nodes[ag0].collective, kNoNode);
  ASSERT_NE(r.graph.nodes[rs0].collective, kNoNode);
  EXPECT_EQ(r.graph.nodes[ag0].collective, r.graph.nodes[ag1].collective);
  EXPECT_EQ(r.graph.nodes[rs0].collective, r.graph.nodes[rs1].collective);
  EXPECT_NE(r.graph.nodes[ag0].collective, r.graph.nodes[rs0].collective);
  const CollectiveGroup& ag = r.graph.collectives[r.graph.nodes[ag0].collective];
  const CollectiveGroup& rs = r.graph.collectives[r.graph.nodes[rs0].collective];
  EXPECT_EQ(ag.transfer_ns, 50 * kUs);
  EXPECT_EQ(rs.transfer_ns, 30 * kUs);
  EXPECT_TRUE(ag.complete);
  EXPECT_TRUE(rs.complete);
  EXPECT_EQ(r.graph.stats.collectives_inconsistent, 0u);
  EXPECT_EQ(r.sim.not_run, 0u);
  EXPECT_EQ(r.sim.end_ns[ag0], 110 * kUs);
  EXPECT_EQ(r.sim.end_ns[ag1], 110 * kUs);
  EXPECT_EQ(r.sim.end_ns[rs0], 260 * kUs);
  EXPECT_EQ(r.sim.end_ns[rs1], 260 * kUs);
}

TEST(CollectiveGroupingTest, ClockAlignmentMatchesAllGatherWithAllGather) {
  // Rank 1 on a host whose clock runs 1 ms ahead. Matching rank 0's all-gather with rank 1's
  // reduce-scatter too would give a median difference of 1.15 ms.
  Job job = AllGatherThenReduceScatterJob();
  MoveToHost(&job, 1, "other", 1000);
  const ClockAlignment alignment = AlignClocks(job);
  EXPECT_EQ(alignment.rank_offset_ns[0], 0);
  EXPECT_EQ(alignment.rank_offset_ns[1], -1000 * kUs);
  EXPECT_EQ(alignment.hosts[1].residual_ns, 0);
}

// Three ranks on communicator 7, whose comm ranks are not the global ones: global 0, 1, 2 are
// comm ranks 1, 2, 0. The agent numbers sends and receives per direction on each rank (seq),
// peers are comm ranks. Times in µs:
//   global 0 (c1)  send#0 to c2 [10,20)   send#1 to c0 [30,40)
//   global 1 (c2)  recv#0 from c1 [15,20)  send#0 to c0 [50,70)
//   global 2 (c0)  recv#0 from c1 [35,40)  recv#1 from c2 [60,70)
// Pairs: c1->c2 (transfer 5), c1->c0 (5), c2->c0 (10). Pairing by seq would couple global 1's
// send#0 with global 2's recv#0, which came from global 0.
constexpr uint64_t kP2pComm = 7;

Job PointToPointJob() {
  struct Op {
    const char* kernel;
    uint64_t seq;
    int64_t start_us, duration_us;
    CollectiveOp op;
    int32_t peer;  // A comm rank.
  };
  struct Rank {
    int32_t comm_rank;
    Op ops[2];
  };
  const Rank ranks[] = {
      {1,
       {{"send_to_g1", 0, 10, 10, CollectiveOp::kSend, 2},  //
        {"send_to_g2", 1, 30, 10, CollectiveOp::kSend, 0}}},
      {2,
       {{"recv_from_g0", 0, 15, 5, CollectiveOp::kRecv, 1},  //
        {"send_to_g2", 0, 50, 20, CollectiveOp::kSend, 0}}},
      {0,
       {{"recv_from_g0", 0, 35, 5, CollectiveOp::kRecv, 1},  //
        {"recv_from_g1", 1, 60, 10, CollectiveOp::kRecv, 2}}},
  };
  Job job;
  job.job_id = "p2p";
  for (int32_t global = 0; global < 3; ++global) {
    const Rank& rank = ranks[global];
    RankBuilder builder(&job, global, 3);
    builder.Communicator(kP2pComm, rank.comm_rank, 3);
    for (uint64_t i = 0; i < 2; ++i) {
      const Op& op = rank.ops[i];
      const uint64_t correlation = i + 1;
      builder.Api(ApiKind::kLaunchKernel, "launch", static_cast<int64_t>(5 * i), 5, correlation)
          .Kernel(op.kernel, 5, op.start_us, op.duration_us, correlation)
          .Collective(kP2pComm, op.seq, correlation, 5, op.start_us, op.duration_us, 3)
          .Op(op.op, op.peer);
    }
  }
  return job;
}

TEST(CollectiveGroupingTest, SendPairsWithTheReceiveFromItsSenderInPostingOrder) {
  const Job job = PointToPointJob();
  const Replayed r = Replay(job, {}, false, /*align=*/true);
  ASSERT_EQ(r.graph.collectives.size(), 3u);
  auto group_of = [&](uint32_t rank_index, std::string_view name) -> const CollectiveGroup& {
    const uint32_t node = NodeNamed(r.graph, rank_index, name);
    EXPECT_NE(r.graph.nodes[node].collective, kNoNode) << name;
    return r.graph.collectives.at(r.graph.nodes[node].collective);
  };
  auto expect_pair = [&](uint32_t from, std::string_view send, uint32_t to, std::string_view recv,
                         int64_t transfer_us) {
    const CollectiveGroup& group = group_of(from, send);
    EXPECT_EQ(&group, &group_of(to, recv)) << send << " -> " << recv;
    EXPECT_EQ(group.nodes.size(), 2u);
    EXPECT_TRUE(group.complete);
    EXPECT_EQ(group.transfer_ns, transfer_us * kUs);
  };
  expect_pair(0, "send_to_g1", 1, "recv_from_g0", 5);
  expect_pair(0, "send_to_g2", 2, "recv_from_g0", 5);
  expect_pair(1, "send_to_g2", 2, "recv_from_g1", 10);
  EXPECT_EQ(r.graph.stats.collectives_incomplete, 0u);
  EXPECT_EQ(r.graph.stats.collectives_inconsistent, 0u);
  EXPECT_EQ(r.sim.not_run, 0u);
}

TEST(CollectiveGroupingTest, PairOrdinalCountsPerPeerInSeqOrder) {
  // One rank's sends on one communicator: seq 0 to 3, seq 1 to 5, seq 2 to 3, recorded out of
  // order; its receive seq 0 from 3. Keys: 1->3 #0, 1->5 #0, 1->3 #1, 3->1 #0.
  Job job;
  RankBuilder(&job, 0, 8)
      .Communicator(kP2pComm, 1, 8)
      .Collective(kP2pComm, 2, 0, 5, 30, 1, 8)
      .Op(CollectiveOp::kSend, 3)
      .Collective(kP2pComm, 0, 0, 5, 10, 1, 8)
      .Op(CollectiveOp::kSend, 3)
      .Collective(kP2pComm, 1, 0, 5, 20, 1, 8)
      .Op(CollectiveOp::kSend, 5)
      .Collective(kP2pComm, 0, 0, 5, 40, 1, 8)
      .Op(CollectiveOp::kRecv, 3);
  const auto keys = CollectiveKeys(job.ranks[0]);
  ASSERT_EQ(keys.size(), 4u);
  for (const auto& key : keys) {
    ASSERT_TRUE(key.has_value());
    EXPECT_EQ(key->kind, CollectiveKey::Kind::kPointToPoint);
    EXPECT_EQ(key->comm_id, kP2pComm);
  }
  auto expect = [&](size_t i, int32_t sender, int32_t receiver, uint64_t ordinal) {
    EXPECT_EQ(keys[i]->sender, sender) << i;
    EXPECT_EQ(keys[i]->receiver, receiver) << i;
    EXPECT_EQ(keys[i]->ordinal, ordinal) << i;
  };
  expect(0, 1, 3, 1);
  expect(1, 1, 3, 0);
  expect(2, 1, 5, 0);
  expect(3, 3, 1, 0);
  EXPECT_EQ(keys[3]->Describe(), "send/recv (comm 7, rank 3 -> 1, #0)");

  // Without a Communicator record this rank's comm rank is unknown: no key, not a guess.
  job.ranks[0].communicators.clear();
  for (const auto& key : CollectiveKeys(job.ranks[0])) EXPECT_FALSE(key.has_value());
}

TEST(CollectiveGroupingTest, SendAndReceiveInOneKernelMakeOneGroupThatRuns) {
  // Two ranks exchange in one NCCL group: one kernel each runs a send to and a receive from the
  // other (both records carry the kernel's correlation id). Pairs 0->1 and 1->0 share both
  // kernels: one group of two members, or neither kernel could end.
  Job job;
  job.job_id = "exchange";
  const int64_t start[] = {10, 40};
  for (int32_t rank = 0; rank < 2; ++rank) {
    RankBuilder(&job, rank, 2)
        .Communicator(kComm, rank, 2)
        .Api(ApiKind::kLaunchKernel, "launch", 0, 5, 1)
        .Kernel("sendrecv", 5, start[rank], 100 - start[rank], 1)
        .Collective(kComm, 0, 1, 5, start[rank], 100 - start[rank], 2)
        .Op(CollectiveOp::kSend, 1 - rank)
        .Collective(kComm, 0, 1, 5, start[rank], 100 - start[rank], 2)
        .Op(CollectiveOp::kRecv, 1 - rank);
  }
  const Replayed r = Replay(job);
  ASSERT_EQ(r.graph.collectives.size(), 1u);
  EXPECT_EQ(r.graph.collectives[0].nodes.size(), 2u);
  EXPECT_TRUE(r.graph.collectives[0].complete);
  EXPECT_EQ(r.graph.collectives[0].transfer_ns, 60 * kUs);
  EXPECT_EQ(r.sim.not_run, 0u);
  EXPECT_EQ(r.sim.end_ns[NodeNamed(r.graph, 0, "sendrecv")], 100 * kUs);
  EXPECT_EQ(r.sim.end_ns[NodeNamed(r.graph, 1, "sendrecv")], 100 * kUs);
}

TEST(CollectiveGroupingTest, ImportedSendAndReceiveWithoutPeerPairBySeq) {
  // Imported traces have no peer: their send/recv kernels are numbered per communicator over
  // all operations, so (comm, seq) pairs them, whatever each side's op.
  Job job;
  job.job_id = "imported";
  const CollectiveOp ops[] = {CollectiveOp::kSend, CollectiveOp::kSendRecv};
  for (int32_t rank = 0; rank < 2; ++rank) {
    RankBuilder(&job, rank, 2)
        .Api(ApiKind::kLaunchKernel, "launch", 0, 5, 1)
        .Kernel("ncclKernel_SendRecv", 5, 10 + 20 * rank, 50 - 20 * rank, 1)
        .Collective(kComm, 3, 1, 5, 10 + 20 * rank, 50 - 20 * rank, 2)
        .Op(ops[rank]);
  }
  const Replayed r = Replay(job);
  ASSERT_EQ(r.graph.collectives.size(), 1u);
  EXPECT_EQ(r.graph.collectives[0].nodes.size(), 2u);
  EXPECT_TRUE(r.graph.collectives[0].complete);
  EXPECT_EQ(r.graph.collectives[0].transfer_ns, 30 * kUs);
}

}  // namespace
}  // namespace lumos::modeler::testing
