#include "modeler/export/chrome_trace_export.h"

#include <memory>

#include "modeler/export/counter_tracks.h"
#include "modeler/export/event_writer.h"
#include "modeler/export/export_index.h"
#include "modeler/export/flow_linker.h"
#include "modeler/export/names.h"
#include "modeler/export/track_layout.h"
#include "modeler/io/json_writer.h"
#include "modeler/io/output_file.h"
#include "modeler/trace/trace_reader.h"

namespace lumos::modeler {
namespace {

using internal::FileIndex;
using internal::Flow;
using internal::FlowStats;
using internal::ProcessLayout;
using io::JsonWriter;

constexpr int64_t kNsPerSecond = 1'000'000'000;

int64_t FloorToSecond(int64_t ns) {
  int64_t seconds = ns / kNsPerSecond;
  if (ns % kNsPerSecond < 0) --seconds;
  int64_t floored = 0;
  return __builtin_mul_overflow(seconds, kNsPerSecond, &floored) ? ns : floored;
}

int64_t TimeOrigin(const std::vector<FileIndex>& files) {
  bool any = false;
  int64_t min_ns = 0;
  for (const FileIndex& file : files) {
    if (file.has_events && (!any || file.min_start_ns < min_ns)) min_ns = file.min_start_ns;
    any = any || file.has_events;
  }
  return any ? FloorToSecond(min_ns) : 0;
}

void WriteDevices(JsonWriter* json, const pb::TraceHeader& h) {
  json->Key("devices");
  json->BeginArray();
  for (const pb::Device& d : h.devices()) {
    json->BeginObject();
    json->KeyUint("device_id", d.device_id());
    json->KeyString("name", d.name());
    json->KeyUint("sm_count", d.sm_count());
    json->KeyUint("sm_clock_khz", d.sm_clock_khz());
    json->KeyUint("memory_clock_khz", d.memory_clock_khz());
    json->KeyUint("memory_bytes", d.memory_bytes());
    json->KeyUint("memory_bus_width_bits", d.memory_bus_width_bits());
    json->KeyString("compute_capability",
                    std::to_string(d.compute_major()) + "." + std::to_string(d.compute_minor()));
    json->KeyString("pci_bus_id", d.pci_bus_id());
    json->KeyString("uuid", d.uuid());
    json->EndObject();
  }
  json->EndArray();
}

// The header of every file, its read result and the export's numbers, for tools and people.
void WriteMetadata(JsonWriter* json, const std::vector<FileIndex>& files,
                   const ExportReport& report, const FlowStats& flows, int64_t origin_ns) {
  json->Key("metadata");
  json->BeginObject();
  json->Key("lumos");
  json->BeginObject();
  json->KeyString("exporter", "lumos-model export");
  json->KeyInt("time_origin_ns", origin_ns);
  json->Key("flows");
  json->BeginObject();
  json->KeyUint("launch", flows.launch);
  json->KeyUint("cuda_event", flows.cuda_event);
  json->KeyUint("collective", flows.collective);
  json->KeyUint("skipped", flows.skipped);
  json->EndObject();
  json->Key("files");
  json->BeginArray(true);
  for (size_t i = 0; i < files.size(); ++i) {
    const pb::TraceHeader& h = files[i].header;
    const ExportFileReport& file = report.files[i];
    json->BeginObject();
    json->KeyString("path", file.path);
    json->KeyUint("pid", file.pid);
    if (h.has_rank()) json->KeyInt("rank", h.rank());
    if (h.has_local_rank()) json->KeyInt("local_rank", h.local_rank());
    if (h.has_world_size()) json->KeyInt("world_size", h.world_size());
    json->KeyString("host_name", h.host_name());
    json->KeyUint("process_id", h.pid());
    json->KeyString("job_id", h.job_id());
    const char* producer = internal::NameOf(h.producer());
    json->KeyString("producer", producer != nullptr ? producer : "Unknown");
    json->KeyString("agent_version", h.agent_version());
    json->KeyString("schema_version",
                    std::to_string(h.schema_major()) + "." + std::to_string(h.schema_minor()));
    json->KeyUint("cuda_runtime_version", h.cuda_runtime_version());
    json->KeyUint("cuda_driver_version", h.cuda_driver_version());
    json->KeyUint("cupti_version", h.cupti_version());
    json->KeyString("nccl_version", h.nccl_version());
    const char* clock = internal::NameOf(h.default_clock_id());
    json->KeyString("default_clock", clock != nullptr ? clock : "Unknown");
    if (!h.source_path().empty()) json->KeyString("source_path", h.source_path());
    if (!h.command_line().empty()) json->KeyString("command_line", h.command_line());
    WriteDevices(json, h);
    json->KeyUint("packets", file.packets);
    json->KeyUint("events", file.events);
    json->KeyUint("frames", files[i].read.frames);
    json->KeyBool("closed_cleanly", files[i].read.closed_cleanly());
    if (files[i].read.has_trailer) {
      json->KeyUint("events_dropped", files[i].read.trailer.events_dropped());
    }
    if (!file.damage.ok()) json->KeyString("damage", file.damage.message());
    json->EndObject();
  }
  json->EndArray();
  json->EndObject();
  json->EndObject();
}

// Pass 2 for one file: re-reads it and writes its events.
Status WriteFileEvents(const FileIndex& file, const ProcessLayout& layout, int64_t origin_ns,
                       JsonWriter* json, ExportFileReport* report) {
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> reader, TraceReader::Open(file.path));
  internal::EventWriter writer(json, layout, file.packet_track, origin_ns);
  uint32_t index = 0;
  bool stopped = false;
  ReadResult result;
  Status read = reader->ReadPackets(
      [&](const pb::TracePacket& packet, const PacketContext& context) -> Status {
        // Stop where pass 1 stopped (a file still being written may have grown), or on a
        // write error (no point in converting the rest of a large trace).
        if (index >= file.packets || !json->status().ok()) {
          stopped = true;
          return Status::Error("stop");
        }
        writer.Write(packet, context, index++);
        return Status::Ok();
      },
      &result);
  if (!read.ok() && !stopped) return read;
  LUMOS_RETURN_IF_ERROR(json->status());
  if (index != file.packets) {
    return ErrorStatus(
        "%s: the file changed during the export (%u packets on the second read, "
        "%u on the first)",
        file.path.c_str(), index, file.packets);
  }
  report->events = writer.events();
  return Status::Ok();
}

}  // namespace

Status ExportChromeTrace(const std::vector<std::string>& trace_paths, const ExportOptions& options,
                         const ExportSink& sink, ExportReport* report) {
  *report = ExportReport();
  std::vector<FileIndex> files;
  files.reserve(trace_paths.size());
  for (const std::string& path : trace_paths) {
    StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
    if (!reader.ok()) {
      // One file that is no trace (or has no readable header) does not sink the others.
      report->skipped.push_back(reader.status().message());
      continue;
    }
    files.emplace_back();
    LUMOS_RETURN_IF_ERROR(internal::BuildFileIndex(reader->get(), &files.back()));
  }
  if (files.empty()) {
    return Status::Error(report->skipped.size() == 1
                             ? report->skipped.front()
                             : "none of the " + std::to_string(report->skipped.size()) +
                                   " inputs is a readable trace");
  }
  std::vector<ProcessLayout> layouts = internal::LayoutProcesses(&files);
  // One grouping of the collectives for the flows and the counter tracks.
  const internal::CollectiveGroups collectives = internal::GroupCollectives(files);
  FlowStats flow_stats;
  std::vector<Flow> flows =
      options.flows ? internal::LinkFlows(files, collectives, &flow_stats) : std::vector<Flow>();
  int64_t origin_ns = TimeOrigin(files);

  report->files.resize(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    report->files[i].path = files[i].path;
    report->files[i].pid = layouts[i].pid;
    report->files[i].packets = files[i].packets;
    report->files[i].damage = files[i].read.damage;
    report->files[i].closed = files[i].read.has_trailer;
  }

  JsonWriter json(sink);
  json.BeginObject(/*one_per_line=*/true);
  json.KeyString(io::kOutputMarkerKey, "export");
  json.Key("traceEvents");
  json.BeginArray(/*one_per_line=*/true);
  for (const ProcessLayout& layout : layouts) internal::WriteProcessMetadata(&json, layout);
  for (size_t i = 0; i < files.size(); ++i) {
    LUMOS_RETURN_IF_ERROR(
        WriteFileEvents(files[i], layouts[i], origin_ns, &json, &report->files[i]));
    report->events += report->files[i].events;
  }
  internal::WriteExportCounters(files, collectives, layouts, origin_ns, &json);
  // Flows last: see event_writer.h for why.
  for (const Flow& flow : flows) internal::WriteFlow(&json, flow, layouts, files, origin_ns);
  json.EndArray();
  json.KeyString("displayTimeUnit", "ns");
  report->flows = flows.size();
  report->flows_skipped = flow_stats.skipped;
  WriteMetadata(&json, files, *report, flow_stats, origin_ns);
  json.EndObject();
  json.Raw("\n");
  LUMOS_RETURN_IF_ERROR(json.Finish());
  report->bytes = json.bytes_written();
  return Status::Ok();
}

Status ExportChromeTraceFile(const std::vector<std::string>& trace_paths,
                             const ExportOptions& options, const std::string& out_path,
                             ExportReport* report) {
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<io::OutputFile> out,
                         io::OutputFile::Create(out_path, {.force = options.force}));
  ExportSink sink = [&out](std::string_view chunk) { return out->Write(chunk); };
  LUMOS_RETURN_IF_ERROR(ExportChromeTrace(trace_paths, options, sink, report));
  return out->Commit();  // On failure `out` goes, with its temporary file.
}

}  // namespace lumos::modeler
