#include "modeler/summarize/window_summary.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/models/collectives/collective_model.h"
#include "modeler/models/kernels/kernel_class.h"
#include "modeler/trace/packet_util.h"
#include "schema/lumos/trace.pb.h"

namespace lumos::modeler::summarize {
namespace {

namespace pb = ::lumos::trace;

// Nearest rank: the smallest value with at least p of the values at or below it.
int64_t Percentile(std::vector<int64_t>* values, double p) {
  const size_t n = values->size();
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, n);
  auto at = values->begin() + static_cast<ptrdiff_t>(rank - 1);
  std::nth_element(values->begin(), at, values->end());
  return *at;
}

struct DurationStats {
  int64_t count = 0, total = 0, mean = 0, p50 = 0, p90 = 0, max = 0;
};

DurationStats StatsOf(std::vector<int64_t>* values) {
  DurationStats s;
  s.count = static_cast<int64_t>(values->size());
  if (values->empty()) return s;
  for (int64_t v : *values) s.total += v;
  s.mean = static_cast<int64_t>(
      std::llround(static_cast<double>(s.total) / static_cast<double>(s.count)));
  s.max = *std::max_element(values->begin(), values->end());
  s.p90 = Percentile(values, 0.9);
  s.p50 = Percentile(values, 0.5);
  return s;
}

struct KernelKey {
  const char* name;  // Interned in the job's pool: equal names, equal pointers.
  uint32_t grid[3], block[3];
  bool operator==(const KernelKey& o) const {
    return name == o.name && std::equal(grid, grid + 3, o.grid) &&
           std::equal(block, block + 3, o.block);
  }
};
struct KernelKeyHash {
  size_t operator()(const KernelKey& k) const {
    size_t h = std::hash<const char*>()(k.name);
    for (uint32_t v : k.grid) h = h * 1000003u ^ v;
    for (uint32_t v : k.block) h = h * 1000003u ^ v;
    return h;
  }
};
struct KernelSamples {
  std::string_view name;
  std::vector<int64_t> durations;
  uint32_t ranks = 0;
  int64_t last_rank_index = -1;
};

// ProfilerStep#N: N; else none (the row takes the rank's ordinal).
std::optional<int64_t> StepNumber(std::string_view name) {
  constexpr std::string_view kStep = "ProfilerStep#";
  if (name.substr(0, kStep.size()) != kStep || name.size() == kStep.size()) return std::nullopt;
  int64_t n = 0;
  for (char c : name.substr(kStep.size())) {
    if (c < '0' || c > '9' || n > (INT64_MAX - 9) / 10) return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

Value Dim(uint32_t v) { return v == 0 ? Value(Null{}) : Value(static_cast<int64_t>(v)); }

std::vector<Value> Common(const TraceWindow& w) {
  return {kSummaryVersion,
          w.job,
          w.stamp,
          w.start_realtime_ns != 0 ? Value(Timestamp{w.start_realtime_ns}) : Value(Null{}),
          std::string(EnumShortName(static_cast<pb::WindowTrigger>(w.trigger))),
          w.directory};
}

}  // namespace

StatusOr<WindowRows> SummarizeWindow(const TraceWindow& window, const SummaryOptions& options) {
  GraphBuilder builder;
  std::unordered_map<KernelKey, KernelSamples, KernelKeyHash> kernels;
  LoadOptions load;
  load.keep_events = false;
  load.job_id = window.job;
  load.on_rank_count = [&builder](size_t ranks) { builder.ExpectRanks(ranks); };
  load.on_rank = [&](const RankTrace& rank, uint32_t index) {
    builder.AddRank(rank, index);
    for (const schema::KernelEvent& k : rank.kernels) {
      const KernelKey key{
          k.name.data(), {k.grid.x, k.grid.y, k.grid.z}, {k.block.x, k.block.y, k.block.z}};
      KernelSamples& s = kernels[key];
      s.name = k.name;
      s.durations.push_back(static_cast<int64_t>(k.duration_ns));
      if (s.last_rank_index != index) {
        ++s.ranks;
        s.last_rank_index = index;
      }
    }
  };
  load.keep_range = [&options](std::string_view name, bool step) {
    return MayMarkIteration(name, step, options.analysis);
  };
  StatusOr<Job> loaded = LoadJob(window.paths, load);
  if (!loaded.ok()) return loaded.status();
  const Job& job = *loaded;
  WindowRows out;
  out.input_problems = job.input_problems;
  out.ranks = job.ranks.size();
  out.events = job.events_read;
  const ClockAlignment alignment = AlignClocks(job);
  const ExecutionGraph graph = builder.Finish(alignment.rank_offset_ns);
  if (graph.nodes.empty()) {
    return Status::Error("no API calls or GPU ops in the window: nothing to summarize");
  }
  const std::vector<Value> common = Common(window);
  auto row = [&common](std::initializer_list<Value> own) {
    std::vector<Value> r = common;
    r.insert(r.end(), own);
    return r;
  };

  // Iterations, per rank in rank order, each rank's in time order.
  std::map<int32_t, const RankTrace*> by_rank;
  for (const RankTrace& r : job.ranks) by_rank[r.rank] = &r;
  std::map<int32_t, int64_t> ordinal;
  const std::vector<IterationReport> iterations = AnalyzeMeasured(job, graph, options.analysis);
  // The window's first instant: its first event, or an iteration range opening before it.
  int64_t origin_ns = graph.origin_ns;
  for (const IterationReport& it : iterations)
    origin_ns = std::min(origin_ns, it.measured_start_ns);
  for (const IterationReport& it : iterations) {
    const RankTrace* rank = by_rank[it.rank];
    const int64_t index = ordinal[it.rank]++;
    const Breakdown& b = it.measured;
    out.rows[static_cast<int>(Table::kIterations)].push_back(row({
        rank->host,
        static_cast<int64_t>(it.rank),
        rank->device.empty() ? Value(Null{}) : Value(rank->device),
        StepNumber(it.name).value_or(index),
        it.name,
        it.measured_start_ns - origin_ns,
        it.measured_ns(),
        b.exposed_compute_ns,
        b.overlapped_ns,
        b.exposed_comm_ns,
        b.other_ns,
        b.exposed_compute_ns + b.overlapped_ns + b.exposed_comm_ns,
    }));
  }

  // Kernels, largest total first (ties by name, grid, block: deterministic).
  struct KernelRow {
    const KernelKey* key;
    KernelSamples* samples;
    DurationStats stats;
  };
  std::vector<KernelRow> kernel_rows;
  kernel_rows.reserve(kernels.size());
  for (auto& [key, samples] : kernels)
    kernel_rows.push_back({&key, &samples, StatsOf(&samples.durations)});
  std::sort(kernel_rows.begin(), kernel_rows.end(), [](const KernelRow& a, const KernelRow& b) {
    if (a.stats.total != b.stats.total) return a.stats.total > b.stats.total;
    if (a.samples->name != b.samples->name) return a.samples->name < b.samples->name;
    return std::tie(a.key->grid[0], a.key->grid[1], a.key->grid[2], a.key->block[0],
                    a.key->block[1], a.key->block[2]) < std::tie(b.key->grid[0], b.key->grid[1],
                                                                 b.key->grid[2], b.key->block[0],
                                                                 b.key->block[1], b.key->block[2]);
  });
  std::unordered_map<const char*, std::string> classes;  // Per distinct name.
  for (const KernelRow& k : kernel_rows) {
    auto [cls, added] = classes.try_emplace(k.key->name);
    if (added) cls->second = models::KernelClassName(models::ClassifyKernel(k.samples->name));
    const DurationStats& s = k.stats;
    out.rows[static_cast<int>(Table::kKernels)].push_back(row({
        std::string(k.samples->name),
        cls->second,
        Dim(k.key->grid[0]),
        Dim(k.key->grid[1]),
        Dim(k.key->grid[2]),
        Dim(k.key->block[0]),
        Dim(k.key->block[1]),
        Dim(k.key->block[2]),
        static_cast<int64_t>(k.samples->ranks),
        s.count,
        s.total,
        s.mean,
        s.p50,
        s.p90,
        s.max,
    }));
  }

  // Collectives: one sample per complete operation.
  std::unordered_map<uint64_t, uint32_t> comm_size;
  for (const RankTrace& r : job.ranks) {
    for (const CommunicatorInfo& c : r.communicators) comm_size.try_emplace(c.comm_id, c.comm_size);
  }
  using CollectiveKey = std::tuple<int, int, uint64_t, uint32_t, uint32_t>;  // op, dtype, ...
  struct CollectiveSamples {
    std::vector<int64_t> transfers;
    std::string gpu;  // The first member's device.
  };
  std::map<CollectiveKey, CollectiveSamples> collectives;
  for (const CollectiveGroup& g : graph.collectives) {
    if (!g.complete || g.operations != 1 || g.transfer_ns <= 0 || g.nodes.empty()) {
      ++out.collectives_left_out;
      continue;
    }
    auto size = comm_size.find(g.comm_id);
    const uint32_t ranks = size != comm_size.end() && size->second > 0
                               ? size->second
                               : static_cast<uint32_t>(g.nodes.size());
    std::set<std::string_view> hosts;
    bool hosts_known = true;
    for (uint32_t n : g.nodes) {
      const std::string& host = job.ranks[graph.nodes[n].rank_index].host;
      hosts_known = hosts_known && !host.empty();
      hosts.insert(host);
    }
    const std::optional<models::CollectiveClass> cls = models::ClassOf(g.op);
    const uint64_t bytes = cls ? models::ModelBytes(*cls, g.bytes, ranks) : g.bytes;
    const CollectiveKey key{static_cast<int>(g.op), static_cast<int>(g.data_type), bytes, ranks,
                            hosts_known ? static_cast<uint32_t>(hosts.size()) : 0};
    CollectiveSamples& s = collectives[key];
    if (s.transfers.empty()) s.gpu = job.ranks[graph.nodes[g.nodes.front()].rank_index].device;
    s.transfers.push_back(g.transfer_ns);
  }
  std::map<std::string, std::unique_ptr<models::CollectiveTarget>> targets;  // Per GPU name.
  for (auto& [key, samples] : collectives) {
    const auto op = static_cast<schema::CollectiveOp>(std::get<0>(key));
    const auto dtype = static_cast<schema::DataType>(std::get<1>(key));
    const uint64_t bytes = std::get<2>(key);
    const uint32_t ranks = std::get<3>(key), nodes = std::get<4>(key);
    const DurationStats s = StatsOf(&samples.transfers);
    const std::optional<models::CollectiveClass> cls = models::ClassOf(op);
    const double factor = cls ? models::BusBandwidthFactor(*cls, ranks) : 0.0;
    // bytes / ns = GB/s (1e9 bytes per second, as nccl-tests).
    auto gbps = [&](int64_t ns) -> Value {
      if (bytes == 0 || ns <= 0) return Null{};
      return static_cast<double>(bytes) / static_cast<double>(ns);
    };
    auto bus = [&](const Value& algbw) -> Value {
      const auto* v = std::get_if<double>(&algbw);
      if (v == nullptr || factor <= 0) return Null{};
      return *v * factor;
    };
    Value expected_ns = Null{}, expected_busbw = Null{}, expected_source = Null{};
    const models::GpuSpec* gpu = options.specs != nullptr && !samples.gpu.empty()
                                     ? options.specs->FindGpu(samples.gpu)
                                     : nullptr;
    if (gpu != nullptr && cls && bytes > 0) {
      auto [target, added] = targets.try_emplace(gpu->name);
      if (added) {
        StatusOr<std::unique_ptr<models::CollectiveTarget>> made =
            models::MakeCollectiveTarget(options.calibrations, *gpu, options.network);
        if (made.ok()) target->second = std::move(made).value();
      }
      if (target->second != nullptr) {
        const models::CollectiveTarget& t = *target->second;
        models::CollectiveQuery query;
        query.op = op;
        query.data_type = dtype;
        query.bytes = bytes;
        query.ranks = ranks;
        const uint32_t fewest = t.domain > 0 ? (ranks + t.domain - 1) / t.domain : 1;
        query.nodes = std::max(nodes, fewest);
        const models::CollectivePredictor& predictor = query.nodes > 1 ? *t.multi : *t.single;
        const models::CollectivePrediction p = predictor.Predict(query);
        if (p.source != models::CostSource::kNone && p.duration_ns > 0) {
          expected_ns = p.duration_ns;
          expected_busbw = bus(gbps(p.duration_ns));
          expected_source = models::CollectiveSourceText(p, t.calibration);
        }
      }
    }
    const Value algbw = gbps(s.p50);
    out.rows[static_cast<int>(Table::kCollectives)].push_back(row({
        std::string(EnumShortName(static_cast<pb::CollectiveOp>(op))),
        std::string(EnumShortName(static_cast<pb::DataType>(dtype))),
        bytes > 0 ? Value(static_cast<int64_t>(bytes)) : Value(Null{}),
        static_cast<int64_t>(ranks),
        nodes > 0 ? Value(static_cast<int64_t>(nodes)) : Value(Null{}),
        s.count,
        s.total,
        s.p50,
        s.p90,
        s.max,
        algbw,
        bus(algbw),
        expected_ns,
        expected_busbw,
        expected_source,
    }));
  }
  return out;
}

}  // namespace lumos::modeler::summarize
