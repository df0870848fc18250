// Calibration points from measured tables and traced jobs; see collective_calibration.h.
#include "modeler/models/collectives/collective_calibration.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "base/input_file.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"

namespace lumos::modeler::models {
namespace {

using schema::CollectiveOp;
using schema::DataType;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<CollectiveOp> CollectiveOpFromTableName(std::string_view name) {
  static const std::map<std::string, CollectiveOp, std::less<>> kOps = {
      {"all_reduce", CollectiveOp::kAllReduce},
      {"allreduce", CollectiveOp::kAllReduce},
      {"all_gather", CollectiveOp::kAllGather},
      {"allgather", CollectiveOp::kAllGather},
      {"reduce_scatter", CollectiveOp::kReduceScatter},
      {"reducescatter", CollectiveOp::kReduceScatter},
      {"alltoall", CollectiveOp::kAllToAll},
      {"all_to_all", CollectiveOp::kAllToAll},
      {"broadcast", CollectiveOp::kBroadcast},
      {"reduce", CollectiveOp::kReduce},
      {"send", CollectiveOp::kSend},
      {"recv", CollectiveOp::kRecv},
      {"sendrecv", CollectiveOp::kSendRecv},
      {"send_recv", CollectiveOp::kSendRecv},
  };
  auto it = kOps.find(Lower(name));
  if (it == kOps.end()) return std::nullopt;
  return it->second;
}

std::optional<DataType> DataTypeFromTableName(std::string_view name) {
  static const std::map<std::string, DataType, std::less<>> kTypes = {
      {"half", DataType::kFloat16},
      {"float16", DataType::kFloat16},
      {"fp16", DataType::kFloat16},
      {"bfloat16", DataType::kBfloat16},
      {"bf16", DataType::kBfloat16},
      {"float", DataType::kFloat32},
      {"float32", DataType::kFloat32},
      {"fp32", DataType::kFloat32},
      {"double", DataType::kFloat64},
      {"float64", DataType::kFloat64},
      {"int8", DataType::kInt8},
      {"uint8", DataType::kUint8},
      {"int32", DataType::kInt32},
      {"uint32", DataType::kUint32},
      {"int64", DataType::kInt64},
      {"uint64", DataType::kUint64},
      {"fp8", DataType::kFloat8E4m3},
      {"e4m3", DataType::kFloat8E4m3},
      {"float8_e4m3", DataType::kFloat8E4m3},
      {"e5m2", DataType::kFloat8E5m2},
      {"float8_e5m2", DataType::kFloat8E5m2},
  };
  auto it = kTypes.find(Lower(name));
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

constexpr uint64_t kMaxRanks = 1u << 24;

StatusOr<std::vector<CollectiveRow>> ReadCollectiveRows(const io::CsvTable& table,
                                                        Latency latency) {
  const int gpu = table.Column("gpu");
  const int op = table.Column("op");
  const int dtype = table.Column("dtype");
  const int ranks = table.Column("ranks");
  const int nodes = table.Column("nodes");
  const int elements = table.Column("elements");
  const int bytes = table.Column("bytes");
  const int latency_us = latency == Latency::kRequired ? table.Column("latency_us") : -1;
  if (op < 0 || dtype < 0 || ranks < 0 || bytes < 0) {
    return ErrorStatus("%s: not a collective table (needs op, dtype, ranks and bytes columns)",
                       table.path.c_str());
  }
  if (latency == Latency::kRequired && (latency_us < 0 || gpu < 0)) {
    return ErrorStatus("%s: a measured collective table needs gpu and latency_us columns",
                       table.path.c_str());
  }
  std::vector<CollectiveRow> rows;
  rows.reserve(table.rows.size());
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const std::vector<std::string>& f = table.rows[i];
    auto fail = [&](const Status& status) {
      return ErrorStatus("%s: %s", table.Where(i).c_str(), status.message().c_str());
    };
    CollectiveRow row;
    row.row = i;
    if (gpu >= 0) row.gpu = f[gpu];
    if (latency == Latency::kRequired && row.gpu.empty()) return fail(ErrorStatus("gpu: empty"));
    const std::optional<schema::CollectiveOp> parsed_op = CollectiveOpFromTableName(f[op]);
    if (!parsed_op) {
      return fail(ErrorStatus(
          "op: unknown '%s' (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, "
          "reduce, send, recv, sendrecv)",
          f[op].c_str()));
    }
    row.op = *parsed_op;
    const std::optional<DataType> parsed_type = DataTypeFromTableName(f[dtype]);
    if (!parsed_type) {
      return fail(ErrorStatus(
          "dtype: unknown '%s' (half, bfloat16, float, double, int8, uint8, int32, uint32, "
          "int64, uint64, fp8, e5m2)",
          f[dtype].c_str()));
    }
    row.data_type = *parsed_type;
    StatusOr<uint64_t> n = io::ParseWholeNumber(f[ranks], "ranks", kMaxRanks);
    if (!n.ok()) return fail(n.status());
    row.ranks = static_cast<uint32_t>(*n);
    StatusOr<uint64_t> size = io::ParseWholeNumber(f[bytes], "bytes", uint64_t{1} << 62);
    if (!size.ok()) return fail(size.status());
    row.bytes = *size;
    if (elements >= 0 && !f[elements].empty()) {
      StatusOr<uint64_t> count = io::ParseWholeNumber(f[elements], "elements", uint64_t{1} << 62);
      if (!count.ok()) return fail(count.status());
      const uint64_t each = schema::DataTypeBytes(row.data_type);
      if (*count * each != row.bytes) {
        return fail(ErrorStatus("bytes %llu is not elements %llu x %llu (%s)",
                                static_cast<unsigned long long>(row.bytes),
                                static_cast<unsigned long long>(*count),
                                static_cast<unsigned long long>(each), f[dtype].c_str()));
      }
    }
    if (nodes >= 0 && !f[nodes].empty()) {
      StatusOr<uint64_t> count = io::ParseWholeNumber(f[nodes], "nodes", kMaxRanks);
      if (!count.ok()) return fail(count.status());
      if (*count > row.ranks) {
        return fail(ErrorStatus("nodes: %llu is more than the %u ranks",
                                static_cast<unsigned long long>(*count), row.ranks));
      }
      row.nodes = static_cast<uint32_t>(*count);
    }
    if (latency_us >= 0) {
      StatusOr<int64_t> ns = ParseMicroseconds(f[latency_us]);
      if (!ns.ok()) return fail(ns.status());
      row.latency_ns = *ns;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

CalibrationPoint PointOf(const CollectiveRow& row) {
  CalibrationPoint p;
  p.op = row.op;
  p.data_type = row.data_type;
  p.ranks = row.ranks;
  p.nodes = row.nodes;
  p.bytes = row.bytes;
  p.time_ns = row.latency_ns;
  return p;
}

StatusOr<CalibrationSet> ReadCollectiveTable(const std::string& path) {
  LUMOS_ASSIGN_OR_RETURN(io::CsvTable table, io::ReadCsv(path));
  LUMOS_ASSIGN_OR_RETURN(std::vector<CollectiveRow> rows,
                         ReadCollectiveRows(table, Latency::kRequired));
  CalibrationSet set;
  std::map<std::string, uint32_t> origin_of_gpu;
  for (const CollectiveRow& row : rows) {
    auto [it, added] =
        origin_of_gpu.try_emplace(row.gpu, static_cast<uint32_t>(set.origins.size()));
    if (added) {
      set.origins.push_back(std::filesystem::path(table.path).filename().string() + " (" + row.gpu +
                            ")");
    }
    CalibrationPoint p = PointOf(row);
    p.origin = it->second;
    set.points.push_back(p);
  }
  return set;
}

CalibrationSet CalibrationFromJob(const Job& job, JobCalibrationStats* stats) {
  JobCalibrationStats local;
  JobCalibrationStats& s = stats ? *stats : local;
  s = JobCalibrationStats();
  CalibrationSet set;
  set.origins.push_back("job " + job.job_id);
  const ClockAlignment alignment = AlignClocks(job);
  const ExecutionGraph graph = BuildGraph(job, alignment.rank_offset_ns);
  for (const CollectiveGroup& group : graph.collectives) {
    ++s.operations;
    if (!group.complete) {
      ++s.incomplete;
      continue;
    }
    if (group.operations > 1) {
      ++s.fused;
      continue;
    }
    if (group.transfer_ns <= 0) {
      ++s.no_transfer;
      continue;
    }
    const std::optional<CollectiveClass> c = ClassOf(group.op);
    if (!c) continue;
    std::set<std::string_view> hosts;
    bool unnamed = false;
    for (uint32_t node : group.nodes) {
      const std::string& host = job.ranks[graph.nodes[node].rank_index].host;
      if (host.empty()) unnamed = true;
      hosts.insert(host);
    }
    CalibrationPoint p;
    p.op = group.op;
    if (*c == CollectiveClass::kSendRecv && group.nodes.size() > 2) {
      // One send/recv operation on every rank of the communicator (a grouped exchange, as
      // PyTorch's all_to_all is): an all-to-all.
      p.op = schema::CollectiveOp::kAllToAll;
    }
    p.data_type = group.data_type;
    p.ranks = static_cast<uint32_t>(group.nodes.size());
    p.nodes = unnamed ? 0 : static_cast<uint32_t>(hosts.size());
    p.bytes = ModelBytes(*ClassOf(p.op), group.bytes, p.ranks);
    p.time_ns = group.transfer_ns;
    p.algorithm = group.algorithm;
    p.protocol = group.protocol;
    p.channels = group.channels;
    p.origin = 0;
    set.points.push_back(p);
    ++s.points;
  }
  return set;
}

}  // namespace lumos::modeler::models
