#include "modeler/diff/run_profile.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>
#include <unordered_map>

#include "modeler/graph/clock_alignment.h"
#include "modeler/models/collectives/collective_model.h"
#include "modeler/trace/packet_util.h"
#include "schema/lumos/trace.pb.h"

namespace lumos::modeler::diff {
namespace {

namespace pb = ::lumos::trace;

// A kernel's key while loading: its name interned in the job's pool (equal names, equal
// pointers), so hashing never touches the text.
struct RawKey {
  const char* name;
  std::array<uint32_t, 3> grid, block;
  std::array<uint64_t, 4> shape;
  bool operator==(const RawKey& o) const {
    return name == o.name && grid == o.grid && block == o.block && shape == o.shape;
  }
};
struct RawKeyHash {
  size_t operator()(const RawKey& k) const {
    size_t h = std::hash<const char*>()(k.name);
    for (uint32_t v : k.grid) h = h * 1000003u ^ v;
    for (uint32_t v : k.block) h = h * 1000003u ^ v;
    for (uint64_t v : k.shape) h = h * 1000003u ^ std::hash<uint64_t>()(v);
    return h;
  }
};

// Which iteration of its rank a time falls in: index into `ranges`, or -1.
int64_t IterationAt(const std::vector<std::pair<int64_t, int64_t>>& ranges, int64_t t) {
  auto it =
      std::upper_bound(ranges.begin(), ranges.end(), t,
                       [](int64_t v, const std::pair<int64_t, int64_t>& r) { return v < r.first; });
  if (it == ranges.begin()) return -1;
  --it;
  return t < it->second ? it - ranges.begin() : -1;
}

void Add(const Breakdown& b, Breakdown* sum) {
  sum->exposed_compute_ns += b.exposed_compute_ns;
  sum->overlapped_ns += b.overlapped_ns;
  sum->exposed_comm_ns += b.exposed_comm_ns;
  sum->other_ns += b.other_ns;
}

std::string MethodOf(std::string_view name) {
  if (name == "whole trace") return "whole trace";
  if (name.find("(detected") != std::string_view::npos) return "detected";
  return "ranges";
}

}  // namespace

std::string ShapeText(const std::array<uint64_t, 4>& shape) {
  if (shape[0] == 0 && shape[1] == 0 && shape[2] == 0) return "";
  std::string s =
      std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" + std::to_string(shape[2]);
  if (shape[3] > 1) s += "x" + std::to_string(shape[3]);
  return s;
}

int64_t Median(std::vector<int64_t> values) {
  if (values.empty()) return 0;
  const size_t at = (values.size() + 1) / 2 - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(at), values.end());
  return values[at];
}

StatusOr<RunProfile> ProfileRun(const std::vector<std::string>& paths,
                                const ProfileOptions& options) {
  GraphOptions graph_options;
  graph_options.record_sources = true;
  GraphBuilder builder(graph_options);
  std::unordered_map<RawKey, uint32_t, RawKeyHash> key_ids;
  std::vector<RawKey> keys;
  std::vector<std::vector<uint32_t>> kernel_key;  // Per rank index, per kernel.
  LoadOptions load;
  load.keep_events = false;
  load.job_id = options.job_id;
  load.on_rank_count = [&](size_t ranks) {
    builder.ExpectRanks(ranks);
    kernel_key.reserve(ranks);
  };
  load.on_rank = [&](const RankTrace& rank, uint32_t index) {
    builder.AddRank(rank, index);
    if (kernel_key.size() <= index) kernel_key.resize(index + 1);
    std::vector<uint32_t>& ids = kernel_key[index];
    ids.reserve(rank.kernels.size());
    for (size_t i = 0; i < rank.kernels.size(); ++i) {
      const schema::KernelEvent& k = rank.kernels[i];
      RawKey key{k.name.data(),
                 {k.grid.x, k.grid.y, k.grid.z},
                 {k.block.x, k.block.y, k.block.z},
                 {0, 0, 0, 0}};
      if (const schema::GemmCallEvent* g = rank.GemmOf(i); g != nullptr) {
        key.shape = {g->m, g->n, g->k, g->batch_count};
      }
      auto [at, added] = key_ids.try_emplace(key, static_cast<uint32_t>(keys.size()));
      if (added) keys.push_back(key);
      ids.push_back(at->second);
    }
  };
  load.keep_range = [&options](std::string_view name, bool step) {
    return MayMarkIteration(name, step, options.analysis);
  };
  StatusOr<Job> loaded = LoadJob(paths, load);
  if (!loaded.ok()) return loaded.status();
  auto job = std::make_unique<Job>(std::move(loaded).value());
  const ClockAlignment alignment = AlignClocks(*job);
  auto graph = std::make_unique<ExecutionGraph>(builder.Finish(alignment.rank_offset_ns));
  if (graph->nodes.empty()) {
    return Status::Error("no API calls or GPU ops in the traces: nothing to compare");
  }
  RunProfile out;
  out.job_id = job->job_id;
  out.files = paths.size();
  out.input_problems = job->input_problems;
  std::vector<IterationReport> iterations =
      AnalyzeMeasured(*job, *graph, options.analysis, &out.iteration_choice);
  if (iterations.empty()) return Status::Error("no iterations found: nothing to compare");

  // Per rank index: its iterations' [start, end), in time order, and its profile.
  const size_t rank_count = graph->ranks.size();
  std::unordered_map<int32_t, uint32_t> index_of;
  for (uint32_t i = 0; i < rank_count; ++i) index_of.emplace(graph->ranks[i], i);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> ranges(rank_count);
  std::vector<RankProfile> ranks(rank_count);
  std::vector<std::vector<int64_t>> rank_times(rank_count);
  std::set<std::string> methods;
  for (const IterationReport& it : iterations) {
    auto at = index_of.find(it.rank);
    if (at == index_of.end()) continue;
    ranges[at->second].emplace_back(it.measured_start_ns, it.measured_end_ns);
    rank_times[at->second].push_back(it.measured_ns());
    RankProfile& r = ranks[at->second];
    ++r.iterations;
    r.iteration_ns += it.measured_ns();
    Add(it.measured, &r.breakdown);
    Add(it.measured, &out.breakdown);
    out.iteration_ns.push_back(it.measured_ns());
    methods.insert(MethodOf(it.name));
  }
  out.rank_iterations = out.iteration_ns.size();
  for (const std::string& m : methods) {
    out.iteration_method += (out.iteration_method.empty() ? "" : " + ") + m;
  }
  for (auto& r : ranges) std::sort(r.begin(), r.end());
  out.host_calls = HostCallSequences(*graph, ranges);

  // Collectives: each group's key (communicator size from the ranks' communicators, else its
  // members), and whether all its members lie inside iterations.
  std::unordered_map<uint64_t, uint32_t> comm_size;
  for (const RankTrace& r : job->ranks) {
    for (const CommunicatorInfo& c : r.communicators) comm_size.try_emplace(c.comm_id, c.comm_size);
  }
  std::vector<CollectiveStat*> group_stat(graph->collectives.size(), nullptr);
  for (size_t g = 0; g < graph->collectives.size(); ++g) {
    const CollectiveGroup& group = graph->collectives[g];
    auto size = comm_size.find(group.comm_id);
    const uint32_t members = size != comm_size.end() && size->second > 0
                                 ? size->second
                                 : static_cast<uint32_t>(group.nodes.size());
    const std::optional<models::CollectiveClass> cls = models::ClassOf(group.op);
    const uint64_t bytes = cls ? models::ModelBytes(*cls, group.bytes, members) : group.bytes;
    CollectiveKey key{std::string(EnumShortName(static_cast<pb::CollectiveOp>(group.op))), bytes,
                      members};
    CollectiveStat& stat = out.collectives[key];
    group_stat[g] = &stat;
    bool inside =
        group.complete && group.operations == 1 && group.transfer_ns > 0 && !group.nodes.empty();
    for (uint32_t n : group.nodes) {
      const Node& node = graph->nodes[n];
      inside = inside && IterationAt(ranges[node.rank_index], node.start_ns) >= 0;
    }
    if (inside) {
      ++stat.transfer.count;
      stat.transfer.total_ns += group.transfer_ns;
    }
  }

  // GPU ops and API calls inside iterations.
  std::vector<TimeStat> kernel_stats(keys.size());
  for (uint32_t n = 0; n < graph->nodes.size(); ++n) {
    const Node& node = graph->nodes[n];
    if (IterationAt(ranges[node.rank_index], node.start_ns) < 0) continue;
    RankProfile& r = ranks[node.rank_index];
    if (node.kind == NodeKind::kApiCall) {
      (node.sync != kNoNode ? out.host.sync_ns : out.host.api_ns) += node.duration_ns;
      continue;
    }
    if (node.collective != kNoNode) {
      TimeStat& t = group_stat[node.collective]->time;
      ++t.count;
      t.total_ns += node.duration_ns;
      r.collective_ns += node.duration_ns;
      continue;
    }
    if (node.kind != NodeKind::kKernel) continue;
    const std::vector<uint32_t>& ids = kernel_key[node.rank_index];
    const uint32_t source = graph->node_source[n];
    if (source >= ids.size()) continue;
    TimeStat& t = kernel_stats[ids[source]];
    ++t.count;
    t.total_ns += node.duration_ns;
    r.kernel_ns += node.duration_ns;
  }
  // Host gaps: between consecutive API calls of a thread, both in the same iteration.
  for (const Processor& p : graph->processors) {
    if (p.gpu) continue;
    const auto& rr = ranges[p.rank_index];
    int64_t previous_iteration = -1;
    int64_t previous_end = 0;
    for (uint32_t n : p.nodes) {
      const Node& node = graph->nodes[n];
      const int64_t it = IterationAt(rr, node.start_ns);
      if (it >= 0 && it == previous_iteration) {
        out.host.gap_ns += std::max<int64_t>(0, node.start_ns - previous_end);
      }
      previous_iteration = it;
      previous_end = node.end_ns();
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    if (kernel_stats[i].count == 0) continue;
    KernelKey key{std::string(keys[i].name), keys[i].grid, keys[i].block, keys[i].shape};
    TimeStat& t = out.kernels[key];
    t.count += kernel_stats[i].count;
    t.total_ns += kernel_stats[i].total_ns;
  }
  // Collective keys no member of which ran inside an iteration say nothing about one.
  for (auto it = out.collectives.begin(); it != out.collectives.end();) {
    it = it->second.time.count == 0 ? out.collectives.erase(it) : std::next(it);
  }
  for (uint32_t i = 0; i < rank_count; ++i) {
    RankProfile& r = ranks[i];
    r.rank = graph->ranks[i];
    r.host = job->ranks[i].host;
    r.median_iteration_ns = Median(rank_times[i]);
  }
  std::sort(ranks.begin(), ranks.end(),
            [](const RankProfile& a, const RankProfile& b) { return a.rank < b.rank; });
  out.ranks = std::move(ranks);
  if (options.keep_graph) {
    out.job = std::move(job);
    out.graph = std::move(graph);
    out.iterations = std::move(iterations);
  }
  return out;
}

}  // namespace lumos::modeler::diff
