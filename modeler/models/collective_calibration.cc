// Calibration points from measured tables and traced jobs; see collective_calibration.h.
#include "modeler/models/collective_calibration.h"

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

constexpr uint64_t kMaxTableBytes = 256ull << 20;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '"')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '"')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    fields.push_back(Trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ParseUint(std::string_view s, uint64_t* out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

bool ParseMicros(std::string_view s, int64_t* ns) {
  double us = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), us);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(us) ||
      us <= 0 || us > 1e12) {
    return false;
  }
  *ns = std::llround(us * 1000.0);
  return *ns > 0;
}

StatusOr<std::string> ReadWhole(const std::string& path) {
  LUMOS_ASSIGN_OR_RETURN(InputFile file, OpenInputFile(path));
  if (file.size_bytes > kMaxTableBytes) {
    close(file.fd);
    return ErrorStatus("%s: %llu bytes, more than a table of collectives can be (%llu)",
                       path.c_str(), static_cast<unsigned long long>(file.size_bytes),
                       static_cast<unsigned long long>(kMaxTableBytes));
  }
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(file.fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close(file.fd);
      return ErrorStatus("%s: %s", path.c_str(), strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxTableBytes) {
      close(file.fd);
      return ErrorStatus("%s: more than %llu bytes", path.c_str(),
                         static_cast<unsigned long long>(kMaxTableBytes));
    }
  }
  close(file.fd);
  return text;
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

StatusOr<CalibrationSet> ReadCollectiveTable(const std::string& path) {
  LUMOS_ASSIGN_OR_RETURN(std::string text, ReadWhole(path));
  CalibrationSet set;
  std::map<std::string, uint32_t> origin_of_gpu;
  std::vector<std::string_view> header;
  int col_op = -1, col_dtype = -1, col_ranks = -1, col_bytes = -1, col_latency = -1, col_gpu = -1,
      col_nodes = -1;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t eol = text.find('\n', pos);
    const std::string_view line(text.data() + pos,
                                (eol == std::string::npos ? text.size() : eol) - pos);
    pos = eol == std::string::npos ? text.size() : eol + 1;
    ++line_no;
    if (Trim(line).empty()) continue;
    const std::vector<std::string_view> fields = SplitFields(line);
    auto error = [&](const std::string& what) {
      return ErrorStatus("%s:%zu: %s", path.c_str(), line_no, what.c_str());
    };
    if (header.empty()) {
      header = fields;
      for (size_t i = 0; i < fields.size(); ++i) {
        const std::string name = Lower(fields[i]);
        int* col = name == "op"           ? &col_op
                   : name == "dtype"      ? &col_dtype
                   : name == "ranks"      ? &col_ranks
                   : name == "bytes"      ? &col_bytes
                   : name == "latency_us" ? &col_latency
                   : name == "gpu"        ? &col_gpu
                   : name == "nodes"      ? &col_nodes
                                          : nullptr;
        if (col) *col = static_cast<int>(i);
      }
      for (const auto& [col, name] :
           {std::pair{col_op, "op"}, std::pair{col_dtype, "dtype"}, std::pair{col_ranks, "ranks"},
            std::pair{col_bytes, "bytes"}, std::pair{col_latency, "latency_us"}}) {
        if (col < 0) return error(std::string("the header has no column '") + name + "'");
      }
      continue;
    }
    if (fields.size() != header.size()) {
      return error("has " + std::to_string(fields.size()) + " fields, the header " +
                   std::to_string(header.size()));
    }
    auto field = [&](int col) { return fields[static_cast<size_t>(col)]; };
    CalibrationPoint p;
    const std::optional<CollectiveOp> op = CollectiveOpFromTableName(field(col_op));
    if (!op) return error("unknown op '" + std::string(field(col_op)) + "'");
    p.op = *op;
    const std::optional<DataType> type = DataTypeFromTableName(field(col_dtype));
    if (!type) return error("unknown dtype '" + std::string(field(col_dtype)) + "'");
    p.data_type = *type;
    uint64_t ranks = 0, nodes = 0;
    if (!ParseUint(field(col_ranks), &ranks) || ranks == 0 || ranks > (1u << 24)) {
      return error("ranks '" + std::string(field(col_ranks)) + "' is not a rank count");
    }
    p.ranks = static_cast<uint32_t>(ranks);
    if (col_nodes >= 0 && (!ParseUint(field(col_nodes), &nodes) || nodes == 0 || nodes > ranks)) {
      return error("nodes '" + std::string(field(col_nodes)) + "' is not a node count");
    }
    p.nodes = static_cast<uint32_t>(nodes);
    if (!ParseUint(field(col_bytes), &p.bytes) || p.bytes == 0) {
      return error("bytes '" + std::string(field(col_bytes)) + "' is not a size");
    }
    if (!ParseMicros(field(col_latency), &p.time_ns)) {
      return error("latency_us '" + std::string(field(col_latency)) + "' is not a time");
    }
    const std::string gpu = col_gpu >= 0 ? std::string(field(col_gpu)) : std::string();
    auto [it, added] = origin_of_gpu.try_emplace(gpu, static_cast<uint32_t>(set.origins.size()));
    if (added)
      set.origins.push_back(std::filesystem::path(path).filename().string() +
                            (gpu.empty() ? "" : " (" + gpu + ")"));
    p.origin = it->second;
    set.points.push_back(p);
  }
  if (header.empty()) return ErrorStatus("%s: empty (no header)", path.c_str());
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
