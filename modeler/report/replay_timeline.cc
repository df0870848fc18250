#include "modeler/report/replay_timeline.h"

#include <algorithm>
#include <memory>

#include "modeler/export/json_writer.h"
#include "modeler/io/output_file.h"

namespace lumos::modeler {

Status WriteReplayTimeline(const ExecutionGraph& g, const SimResult& sim, const std::string& path) {
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<io::OutputFile> file, io::OutputFile::Create(path));
  internal::JsonWriter w([&file](std::string_view chunk) { return file->Write(chunk); });
  int64_t origin = INT64_MAX;
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    origin = std::min(origin, g.nodes[n].start_ns);
    if (sim.ran(n)) origin = std::min(origin, sim.start_ns[n]);
  }
  if (origin == INT64_MAX) origin = 0;
  w.BeginObject(true);
  w.KeyString("displayTimeUnit", "ns");
  w.Key("traceEvents");
  w.BeginArray(true);
  for (uint32_t rank = 0; rank < g.ranks.size(); ++rank) {
    for (int replayed = 0; replayed < 2; ++replayed) {
      w.BeginObject();
      w.KeyString("ph", "M");
      w.KeyString("name", "process_name");
      w.KeyInt("pid", 2 * rank + replayed);
      w.Key("args");
      w.BeginObject();
      w.KeyString("name",
                  "rank " + std::to_string(g.ranks[rank]) + (replayed ? " replayed" : " measured"));
      w.EndObject();
      w.EndObject();
    }
  }
  for (uint32_t p = 0; p < g.processors.size(); ++p) {
    const Processor& processor = g.processors[p];
    const std::string track =
        (processor.gpu ? "stream " : "thread ") + std::to_string(processor.id);
    for (int replayed = 0; replayed < 2; ++replayed) {
      w.BeginObject();
      w.KeyString("ph", "M");
      w.KeyString("name", "thread_name");
      w.KeyInt("pid", 2 * processor.rank_index + replayed);
      w.KeyInt("tid", p);
      w.Key("args");
      w.BeginObject();
      w.KeyString("name", track);
      w.EndObject();
      w.EndObject();
    }
    for (uint32_t n : processor.nodes) {
      const Node& node = g.nodes[n];
      for (int replayed = 0; replayed < 2; ++replayed) {
        int64_t start = node.start_ns, end = node.end_ns();
        if (replayed) {
          if (!sim.ran(n)) continue;
          start = sim.start_ns[n];
          end = sim.end_ns[n];
        }
        w.BeginObject();
        w.KeyString("ph", "X");
        w.KeyString("name", node.name.empty() ? std::string_view("?") : node.name);
        w.KeyInt("pid", 2 * processor.rank_index + replayed);
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

}  // namespace lumos::modeler
