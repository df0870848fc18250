// Design: test support. Writes a traced job as the agent records one, through the real trace
// writer: one file per rank, each rank on a host of its own group, every rank running the same
// NCCL collectives in turn (an API call launching the NCCL kernel and the collective's record,
// with op, count, dtype, bytes, algorithm, protocol and channels), so the replay and the cost
// models see exactly the transfer times given here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schema/enums.h"

namespace lumos::testing {

struct TracedCollective {
  schema::CollectiveOp op = schema::CollectiveOp::kAllReduce;
  schema::DataType data_type = schema::DataType::kBfloat16;
  uint64_t bytes = 0;       // Per rank, as the record holds it (NcclCollective.bytes).
  int64_t transfer_ns = 0;  // From the last rank's start to the common end.
  schema::NcclAlgorithm algorithm = schema::NcclAlgorithm::kRing;
  schema::NcclProtocol protocol = schema::NcclProtocol::kSimple;
  uint32_t channels = 16;
};

struct CollectiveJob {
  std::string job_id = "traced";
  int32_t ranks = 8;
  int32_t ranks_per_host = 8;                    // Hosts "node0", "node1", ...
  std::string device = "NVIDIA H100 80GB HBM3";  // The CUDA device name in every header.
  std::vector<TracedCollective> collectives;
};

// Writes `dir`/<job_id>.rank<R>.pb.zst for every rank; returns the paths.
std::vector<std::string> WriteCollectiveJob(const std::string& dir, const CollectiveJob& job);

}  // namespace lumos::testing
