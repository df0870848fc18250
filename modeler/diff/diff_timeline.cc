#include "modeler/diff/diff_timeline.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "modeler/io/json_writer.h"
#include "modeler/io/output_file.h"

namespace lumos::modeler::diff {
namespace {

// Per rank, its iterations in time order.
std::map<int32_t, std::vector<const IterationReport*>> ByRank(const RunProfile& p) {
  std::map<int32_t, std::vector<const IterationReport*>> out;
  for (const IterationReport& it : p.iterations) out[it.rank].push_back(&it);
  for (auto& [rank, list] : out) {
    std::stable_sort(list.begin(), list.end(),
                     [](const IterationReport* x, const IterationReport* y) {
                       return x->measured_start_ns < y->measured_start_ns;
                     });
  }
  return out;
}

}  // namespace

StatusOr<Alignment> AlignRuns(const RunProfile& a, const RunProfile& b) {
  const auto ra = ByRank(a), rb = ByRank(b);
  if (ra.empty() || rb.empty()) return Status::Error("a run without iterations: nothing to align");
  Alignment out;
  for (const auto& [rank, list_b] : rb) {
    auto in_a = ra.find(rank);
    if (in_a == ra.end()) continue;
    std::map<std::string_view, const IterationReport*> names_a;
    for (const IterationReport* it : in_a->second) names_a.try_emplace(it->name, it);
    for (const IterationReport* it : list_b) {
      auto match = names_a.find(it->name);
      if (match == names_a.end()) continue;
      out.rank = rank;
      out.iteration = it->name;
      out.a_start_ns = match->second->measured_start_ns;
      out.b_start_ns = it->measured_start_ns;
      return out;
    }
    // No name in common: each run's first iteration of this rank.
    out.rank = rank;
    out.iteration = in_a->second.front()->name;
    out.a_start_ns = in_a->second.front()->measured_start_ns;
    out.b_start_ns = list_b.front()->measured_start_ns;
    return out;
  }
  // No rank in common: each run's first iteration of its lowest rank.
  out.rank = ra.begin()->first;
  out.iteration = ra.begin()->second.front()->name;
  out.a_start_ns = ra.begin()->second.front()->measured_start_ns;
  out.b_start_ns = rb.begin()->second.front()->measured_start_ns;
  return out;
}

Status WriteDiffTimeline(const RunProfile& a, const RunProfile& b, const Alignment& alignment,
                         const std::string& path, bool force) {
  struct Side {
    const RunProfile* p;
    const char* label;
    int64_t shift;
  };
  const Side sides[2] = {{&a, "A", 0}, {&b, "B", alignment.b_shift_ns()}};
  int64_t origin = INT64_MAX;
  for (const Side& s : sides) {
    for (const Node& n : s.p->graph->nodes) origin = std::min(origin, n.start_ns + s.shift);
    for (const IterationReport& it : s.p->iterations) {
      origin = std::min(origin, it.measured_start_ns + s.shift);
    }
  }
  if (origin == INT64_MAX) origin = 0;
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<io::OutputFile> file,
                         io::OutputFile::Create(path, {.force = force}));
  io::JsonWriter w([&file](std::string_view chunk) { return file->Write(chunk); });
  w.BeginObject(true);
  w.KeyString(io::kOutputMarkerKey, "diff timeline");
  w.KeyString("displayTimeUnit", "ns");
  w.Key("metadata");
  w.BeginObject();
  w.Key("lumos_diff");
  w.BeginObject();
  w.KeyInt("b_shift_ns", alignment.b_shift_ns());
  w.KeyString("aligned_iteration", alignment.iteration);
  w.KeyInt("aligned_rank", alignment.rank);
  w.KeyInt("time_origin_ns", origin);
  w.EndObject();
  w.EndObject();
  w.Key("traceEvents");
  w.BeginArray(true);
  // pid: side k's rank index i is 1 + 2 * i + k... A's ranks first: pid = k * ranks_a + i + 1.
  const int64_t base[2] = {1, 1 + static_cast<int64_t>(a.graph->ranks.size())};
  for (int k = 0; k < 2; ++k) {
    const Side& s = sides[k];
    const ExecutionGraph& g = *s.p->graph;
    std::map<int32_t, uint32_t> index_of;
    for (uint32_t i = 0; i < g.ranks.size(); ++i) {
      index_of.emplace(g.ranks[i], i);
      const int64_t pid = base[k] + i;
      w.BeginObject();
      w.KeyString("ph", "M");
      w.KeyString("name", "process_name");
      w.KeyInt("pid", pid);
      w.Key("args");
      w.BeginObject();
      w.KeyString("name", std::string(s.label) + "/rank " + std::to_string(g.ranks[i]));
      w.EndObject();
      w.EndObject();
      w.BeginObject();
      w.KeyString("ph", "M");
      w.KeyString("name", "process_sort_index");
      w.KeyInt("pid", pid);
      w.Key("args");
      w.BeginObject();
      w.KeyInt("sort_index", pid);
      w.EndObject();
      w.EndObject();
      w.BeginObject();
      w.KeyString("ph", "M");
      w.KeyString("name", "thread_name");
      w.KeyInt("pid", pid);
      w.KeyInt("tid", 0);
      w.Key("args");
      w.BeginObject();
      w.KeyString("name", "iterations");
      w.EndObject();
      w.EndObject();
    }
    for (const IterationReport& it : s.p->iterations) {
      auto at = index_of.find(it.rank);
      if (at == index_of.end()) continue;
      w.BeginObject();
      w.KeyString("ph", "X");
      w.KeyString("name", it.name);
      w.KeyInt("pid", base[k] + at->second);
      w.KeyInt("tid", 0);
      w.Key("ts");
      w.Micros(static_cast<uint64_t>(it.measured_start_ns + s.shift - origin));
      w.Key("dur");
      w.Micros(static_cast<uint64_t>(std::max<int64_t>(0, it.measured_ns())));
      w.EndObject();
    }
    for (uint32_t p = 0; p < g.processors.size(); ++p) {
      const Processor& processor = g.processors[p];
      const int64_t pid = base[k] + processor.rank_index;
      w.BeginObject();
      w.KeyString("ph", "M");
      w.KeyString("name", "thread_name");
      w.KeyInt("pid", pid);
      w.KeyInt("tid", p + 1);
      w.Key("args");
      w.BeginObject();
      w.KeyString("name", (processor.gpu ? "stream " : "thread ") + std::to_string(processor.id));
      w.EndObject();
      w.EndObject();
      for (uint32_t n : processor.nodes) {
        const Node& node = g.nodes[n];
        w.BeginObject();
        w.KeyString("ph", "X");
        w.KeyString("name", node.name.empty() ? std::string_view("?") : node.name);
        w.KeyInt("pid", pid);
        w.KeyInt("tid", p + 1);
        w.Key("ts");
        w.Micros(static_cast<uint64_t>(node.start_ns + s.shift - origin));
        w.Key("dur");
        w.Micros(static_cast<uint64_t>(std::max<int64_t>(0, node.duration_ns)));
        w.EndObject();
      }
      if (!w.status().ok()) break;
    }
  }
  w.EndArray();
  w.EndObject();
  LUMOS_RETURN_IF_ERROR(w.Finish());
  return file->Commit();
}

}  // namespace lumos::modeler::diff
