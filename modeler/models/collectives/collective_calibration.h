// Design: where the collective model's calibration points come from.
// - A measured table (../shared/data/costs/nccl_*.csv, NVIDIA's aiconfigurator data), read as
//   modeler/io/csv_table.h reads CSV, by one reader for `costs fit`, its queries and the
//   validation alike (ReadCollectiveRows): a header naming at least the columns gpu, op, dtype,
//   ranks, bytes and latency_us (elements and nodes are read when present; elements must be
//   bytes / the dtype's size). op: all_reduce, all_gather, reduce_scatter, alltoall /
//   all_to_all, broadcast, reduce, send, recv, sendrecv; dtype: half / float16 / fp16, bfloat16
//   / bf16, float / float32 / fp32, double / float64, int8, uint8, int32, uint32, int64,
//   uint64, fp8 / e4m3, e5m2; bytes in nccl-tests' convention (ModelBytes). One origin per
//   distinct gpu value. A row that does not parse is one error naming file, line and column.
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
#include "modeler/io/csv_table.h"
#include "modeler/models/collectives/collective_fit.h"
#include "modeler/models/query/cost_table.h"

namespace lumos::modeler::models {

// One row of a collective table (Latency::kRequired: latency_us and gpu needed) or query table.
struct CollectiveRow {
  std::string gpu;  // As written; empty when the table has no gpu column or the cell is empty.
  schema::CollectiveOp op = schema::CollectiveOp::kUnspecified;
  schema::DataType data_type = schema::DataType::kUnspecified;
  uint32_t ranks = 0;
  uint32_t nodes = 0;  // 0: not given.
  uint64_t bytes = 0;
  int64_t latency_ns = -1;  // -1: a query.
  size_t row = 0;           // Index into io::CsvTable::rows.
};

// Every row, or one error naming the file and line ("q.csv:7: ranks: '0' must be ...").
StatusOr<std::vector<CollectiveRow>> ReadCollectiveRows(const io::CsvTable& table, Latency latency);

// The points of one row (origin 0).
CalibrationPoint PointOf(const CollectiveRow& row);

// A measured table (ReadCsv, then ReadCollectiveRows with latency_us and gpu required) as points,
// one origin per GPU named, in the order first named: "nccl_h100.csv (H100-SXM5-80GB)".
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
