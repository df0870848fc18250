// Design: where the collective model's calibration points come from.
// - A measured table (../shared/data/costs/nccl_*.csv, NVIDIA's aiconfigurator data): a CSV
//   with a header naming at least the columns op, dtype, ranks, bytes and latency_us (gpu,
//   elements and nodes are read when present). op: all_reduce, all_gather, reduce_scatter,
//   alltoall / all_to_all, broadcast, reduce, send, recv, sendrecv; dtype: half / float16 / fp16,
//   bfloat16 / bf16, float / float32 / fp32, double / float64, int8, uint8, int32, uint32,
//   int64, uint64, fp8 / e4m3, e5m2; bytes in nccl-tests' convention (ModelBytes). One origin
//   per distinct gpu value. A line that does not parse is an error naming file and line.
// - A traced job (modeler/graph/job.h): one point per collective operation whose records all
//   ranks hold (CollectiveGroup::complete), with the transfer time the replay uses
//   (CollectiveGroup::transfer_ns: the latest start to the earliest end across the ranks, the
//   waiting for peers left out) and what the records say (op, data type, bytes, algorithm,
//   protocol, channels). Nodes: the distinct host names of the members (0, not known, when a
//   member's host is unnamed). A send/recv operation all of a communicator's ranks (more than
//   two) run together is an all-to-all (PyTorch's all_to_all as grouped send/recv). Operations NCCL
//   ran in one kernel together, or whose transfer is not positive (clocks that disagree), are
//   counted and left out. A record without a size (old PyTorch profiler traces) still gives its
//   point, with bytes 0 (it fits nothing).
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "modeler/graph/job.h"
#include "modeler/models/collective_fit.h"

namespace lumos::modeler::models {

StatusOr<CalibrationSet> ReadCollectiveTable(const std::string& path);

// The names a table's op and dtype columns take (above), case-insensitive; nullopt otherwise.
std::optional<schema::CollectiveOp> CollectiveOpFromTableName(std::string_view name);
std::optional<schema::DataType> DataTypeFromTableName(std::string_view name);

struct JobCalibrationStats {
  uint64_t operations = 0;  // Collective groups in the job's graph.
  uint64_t incomplete = 0;  // Some rank's record missing.
  uint64_t fused = 0;       // Several operations in one kernel.
  uint64_t no_transfer = 0;
  uint64_t points = 0;
};

CalibrationSet CalibrationFromJob(const Job& job, JobCalibrationStats* stats = nullptr);

}  // namespace lumos::modeler::models
