#include "modeler/replay/replay_timeline.h"

#include <algorithm>
#include <memory>

#include "modeler/analysis/critical_path.h"
#include "modeler/export/counter_tracks.h"
#include "modeler/io/json_writer.h"
#include "modeler/io/output_file.h"

namespace lumos::modeler {
namespace {

// Where a side puts its nodes: measured times without a simulation, else the simulation's.
struct SideTimes {
  const TimelineSide& side;
  bool ran(uint32_t n) const { return side.sim == nullptr || side.sim->ran(n); }
  int64_t start(uint32_t n) const {
    return side.sim == nullptr ? side.graph->nodes[n].start_ns : side.sim->start_ns[n];
  }
  int64_t end(uint32_t n) const {
    return side.sim == nullptr ? side.graph->nodes[n].end_ns() : side.sim->end_ns[n];
  }
};

// The counter tracks of one side (modeler/export/counter_tracks.h), rank by rank.
void WriteCounters(const TimelineSide& side, int64_t count, int64_t k, int64_t origin,
                   io::JsonWriter* w) {
  const ExecutionGraph& g = *side.graph;
  const SideTimes times{side};
  std::vector<internal::RankCounters> ranks(g.ranks.size());
  for (const Processor& p : g.processors) {
    if (!p.gpu) continue;
    for (uint32_t n : p.nodes) {
      if (!times.ran(n)) continue;
      const uint32_t launch = g.nodes[n].launch;
      const bool launched = launch != kNoNode && times.ran(launch);
      ranks[p.rank_index].ops.push_back(
          {launched ? times.start(launch) : times.start(n), times.start(n), times.end(n)});
    }
  }
  for (const CollectiveGroup& c : g.collectives) {
    int64_t first = INT64_MAX;
    size_t members = 0;
    for (uint32_t n : c.nodes) {
      if (!times.ran(n)) continue;
      first = std::min(first, times.start(n));
      ++members;
    }
    if (members < 2) continue;
    for (uint32_t n : c.nodes) {
      if (!times.ran(n)) continue;
      ranks[g.nodes[n].rank_index].arrivals.push_back(
          {times.start(n), times.end(n), static_cast<double>(times.start(n) - first) / 1e3});
    }
  }
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    internal::WriteRankCounters(std::move(ranks[r]), count * r + k, origin, w);
  }
}

// The critical path of one side's iterations: process `pid`, a track per rank.
void WriteCriticalPath(const TimelineSide& side, int64_t pid, int64_t origin, io::JsonWriter* w) {
  const ExecutionGraph& g = *side.graph;
  w->BeginObject();
  w->KeyString("ph", "M");
  w->KeyString("name", "process_name");
  w->KeyInt("pid", pid);
  w->Key("args");
  w->BeginObject();
  w->KeyString("name", "critical path " + side.label);
  w->EndObject();
  w->EndObject();
  std::vector<int32_t> named;
  for (const IterationReport& it : *side.iterations) {
    if (std::find(named.begin(), named.end(), it.rank) == named.end()) {
      named.push_back(it.rank);
      w->BeginObject();
      w->KeyString("ph", "M");
      w->KeyString("name", "thread_name");
      w->KeyInt("pid", pid);
      w->KeyInt("tid", it.rank);
      w->Key("args");
      w->BeginObject();
      w->KeyString("name", "rank " + std::to_string(it.rank));
      w->EndObject();
      w->EndObject();
    }
    if (side.sim == nullptr) continue;
    for (const CriticalSegment& s : CriticalSegments(g, *side.sim, it)) {
      w->BeginObject();
      w->KeyString("ph", "X");
      w->KeyString("name", CriticalSegmentName(g, s));
      w->KeyInt("pid", pid);
      w->KeyInt("tid", it.rank);
      w->Key("ts");
      w->Micros(static_cast<uint64_t>(std::max<int64_t>(0, s.begin_ns - origin)));
      w->Key("dur");
      w->Micros(static_cast<uint64_t>(std::max<int64_t>(0, s.end_ns - s.begin_ns)));
      if (s.node < g.nodes.size()) {
        w->Key("args");
        w->BeginObject();
        w->KeyInt("on_rank", g.ranks[g.nodes[s.node].rank_index]);
        w->EndObject();
      }
      w->EndObject();
    }
  }
}

}  // namespace

Status WriteTimelines(const std::vector<TimelineSide>& sides, const std::string& path, bool force) {
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<io::OutputFile> file,
                         io::OutputFile::Create(path, {.force = force}));
  io::JsonWriter w([&file](std::string_view chunk) { return file->Write(chunk); });
  const auto count = static_cast<int64_t>(sides.size());
  int64_t origin = INT64_MAX;
  for (const TimelineSide& side : sides) {
    const SideTimes times{side};
    for (uint32_t n = 0; n < side.graph->nodes.size(); ++n) {
      if (times.ran(n)) origin = std::min(origin, times.start(n));
    }
  }
  // The critical path starts at its iteration's start, which may lie before every node (a
  // ProfilerStep range opens before its first call): from the earliest of them too, so no
  // slice is cut at 0.
  for (const TimelineSide& side : sides) {
    if (side.iterations == nullptr) continue;
    for (const IterationReport& it : *side.iterations) {
      origin = std::min(origin, it.replayed_start_ns);  // The path tiles [start, end).
    }
  }
  if (origin == INT64_MAX) origin = 0;
  w.BeginObject(true);
  w.KeyString(io::kOutputMarkerKey, "timeline");
  w.KeyString("displayTimeUnit", "ns");
  w.Key("traceEvents");
  w.BeginArray(true);
  for (int64_t k = 0; k < count; ++k) {
    const ExecutionGraph& g = *sides[k].graph;
    for (uint32_t rank = 0; rank < g.ranks.size(); ++rank) {
      w.BeginObject();
      w.KeyString("ph", "M");
      w.KeyString("name", "process_name");
      w.KeyInt("pid", count * rank + k);
      w.Key("args");
      w.BeginObject();
      w.KeyString("name", "rank " + std::to_string(g.ranks[rank]) + " " + sides[k].label);
      w.EndObject();
      w.EndObject();
    }
  }
  for (int64_t k = 0; k < count; ++k) {
    const SideTimes times{sides[k]};
    const ExecutionGraph& g = *sides[k].graph;
    for (uint32_t p = 0; p < g.processors.size(); ++p) {
      const Processor& processor = g.processors[p];
      const int64_t pid = count * processor.rank_index + k;
      w.BeginObject();
      w.KeyString("ph", "M");
      w.KeyString("name", "thread_name");
      w.KeyInt("pid", pid);
      w.KeyInt("tid", p);
      w.Key("args");
      w.BeginObject();
      w.KeyString("name", (processor.gpu ? "stream " : "thread ") + std::to_string(processor.id));
      w.EndObject();
      w.EndObject();
      for (uint32_t n : processor.nodes) {
        if (!times.ran(n)) continue;
        const Node& node = g.nodes[n];
        const int64_t start = times.start(n), end = times.end(n);
        w.BeginObject();
        w.KeyString("ph", "X");
        w.KeyString("name", node.name.empty() ? std::string_view("?") : node.name);
        w.KeyInt("pid", pid);
        w.KeyInt("tid", p);
        w.Key("ts");
        w.Micros(static_cast<uint64_t>(start - origin));
        w.Key("dur");
        w.Micros(static_cast<uint64_t>(std::max<int64_t>(0, end - start)));
        w.EndObject();
      }
    }
  }
  int64_t ranks = 0;
  for (const TimelineSide& side : sides) {
    ranks = std::max(ranks, static_cast<int64_t>(side.graph->ranks.size()));
  }
  for (int64_t k = 0; k < count; ++k) {
    WriteCounters(sides[k], count, k, origin, &w);
    if (sides[k].iterations != nullptr) {
      WriteCriticalPath(sides[k], count * ranks + k, origin, &w);
    }
  }
  w.EndArray();
  w.EndObject();
  LUMOS_RETURN_IF_ERROR(w.Finish());
  return file->Commit();  // On failure `file` goes, with its temporary file.
}

Status WriteReplayTimeline(const ExecutionGraph& g, const SimResult& sim,
                           const std::vector<IterationReport>* iterations, const std::string& path,
                           bool force) {
  return WriteTimelines({{&g, nullptr, "measured", nullptr}, {&g, &sim, "replayed", iterations}},
                        path, force);
}

}  // namespace lumos::modeler
