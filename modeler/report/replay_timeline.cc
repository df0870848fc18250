#include "modeler/report/replay_timeline.h"

#include <algorithm>
#include <memory>

#include "modeler/export/json_writer.h"
#include "modeler/io/output_file.h"

namespace lumos::modeler {

Status WriteTimelines(const std::vector<TimelineSide>& sides, const std::string& path) {
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<io::OutputFile> file, io::OutputFile::Create(path));
  internal::JsonWriter w([&file](std::string_view chunk) { return file->Write(chunk); });
  const auto count = static_cast<int64_t>(sides.size());
  auto ran = [](const TimelineSide& side, uint32_t n) {
    return side.sim == nullptr || side.sim->ran(n);
  };
  auto start_of = [](const TimelineSide& side, uint32_t n) {
    return side.sim == nullptr ? side.graph->nodes[n].start_ns : side.sim->start_ns[n];
  };
  auto end_of = [](const TimelineSide& side, uint32_t n) {
    return side.sim == nullptr ? side.graph->nodes[n].end_ns() : side.sim->end_ns[n];
  };
  int64_t origin = INT64_MAX;
  for (const TimelineSide& side : sides) {
    for (uint32_t n = 0; n < side.graph->nodes.size(); ++n) {
      if (ran(side, n)) origin = std::min(origin, start_of(side, n));
    }
  }
  if (origin == INT64_MAX) origin = 0;
  w.BeginObject(true);
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
    const TimelineSide& side = sides[k];
    const ExecutionGraph& g = *side.graph;
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
        if (!ran(side, n)) continue;
        const Node& node = g.nodes[n];
        const int64_t start = start_of(side, n), end = end_of(side, n);
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
  w.EndArray();
  w.EndObject();
  LUMOS_RETURN_IF_ERROR(w.Finish());
  return file->Commit();  // On failure `file` goes, with its temporary file.
}

Status WriteReplayTimeline(const ExecutionGraph& g, const SimResult& sim, const std::string& path) {
  return WriteTimelines({{&g, nullptr, "measured"}, {&g, &sim, "replayed"}}, path);
}

}  // namespace lumos::modeler
