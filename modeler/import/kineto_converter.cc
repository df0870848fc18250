#include "modeler/import/kineto_converter.h"

#include <algorithm>

#include "modeler/import/kineto_gemm.h"
#include "modeler/import/kineto_trace.h"
#include "modeler/io/kineto_stream.h"
#include "schema/writer/trace_file_writer.h"

#ifndef LUMOS_VERSION
#define LUMOS_VERSION "unknown"
#endif

namespace lumos::modeler::kineto {

using io::KinetoStream;
namespace {

int64_t StartOf(const ImportedEvent& event) {
  return std::visit([](const auto& e) { return e.start_ns; }, event);
}

// At equal times, what describes the capture comes before the events it describes.
int OrderOf(const ImportedEvent& event) {
  return std::holds_alternative<schema::CaptureWindowEvent>(event) ||
                 std::holds_alternative<schema::CommunicatorEvent>(event) ||
                 std::holds_alternative<schema::LossEvent>(event)
             ? 0
             : 1;
}

void Count(const ImportedEvent& event, ConvertStats* stats) {
  ++stats->events;
  std::visit(
      [stats](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, schema::KernelEvent>) ++stats->kernels;
        if constexpr (std::is_same_v<T, schema::ApiCallEvent>) ++stats->api_calls;
        if constexpr (std::is_same_v<T, schema::MemcpyEvent>) ++stats->memcpys;
        if constexpr (std::is_same_v<T, schema::MemsetEvent>) ++stats->memsets;
        if constexpr (std::is_same_v<T, schema::SyncEvent>) ++stats->syncs;
        if constexpr (std::is_same_v<T, schema::HostRangeEvent>) ++stats->host_ranges;
        if constexpr (std::is_same_v<T, schema::CollectiveEvent>) ++stats->collectives;
        if constexpr (std::is_same_v<T, schema::CommunicatorEvent>) ++stats->communicators;
        if constexpr (std::is_same_v<T, schema::GemmCallEvent>) ++stats->gemm_calls;
      },
      event);
}

void CompleteHeader(const ConvertOptions& options, KinetoTrace* trace) {
  schema::HeaderInfo& h = trace->header;
  h.agent_version = LUMOS_VERSION;
  h.producer = schema::Producer::kKinetoImport;
  h.job_id = options.job_id;
  h.source_path = options.source_path;
  h.default_clock_id = schema::ClockId::kKineto;
  // Integer-µs traces cannot resolve below 1 µs; fractional ones are written to the ns.
  h.clock_domains.push_back(
      {schema::ClockId::kKineto, "kineto", trace->fractional_us ? 1ull : 1000ull});
  h.start_time_ns = static_cast<uint64_t>(std::max<int64_t>(trace->start_ns, 0));
}

}  // namespace

Status ConvertKinetoText(const io::PaddedText& text, const std::string& name,
                         const std::string& output_path, const ConvertOptions& options,
                         ConvertStats* stats) {
  LUMOS_ASSIGN_OR_RETURN(auto source, io::OpenMemorySource(text.data(), text.size(), name));
  return ConvertKinetoStream({}, source.get(), name, output_path, options, stats);
}

Status ConvertKinetoStream(std::string_view head, io::ByteSource* source, const std::string& name,
                           const std::string& output_path, const ConvertOptions& options,
                           ConvertStats* stats) {
  *stats = ConvertStats();
  KinetoTrace trace;
  KinetoStream stream(head, source, name);
  LUMOS_RETURN_IF_ERROR(ParseKinetoTrace(&stream, name, &trace));
  if (trace.events.empty()) {
    // Checked before the output exists: a trace of 0 events would be written and read as sound.
    if (trace.skipped != 0) {
      return ErrorStatus("%s: none of its events could be converted (%llu skipped; the first: %s)",
                         name.c_str(), static_cast<unsigned long long>(trace.skipped),
                         trace.first_skip.c_str());
    }
    return ErrorStatus("%s: no events to convert (no complete \"ph\": \"X\" event in traceEvents)",
                       name.c_str());
  }
  if (trace.start_ns > trace.end_ns) trace.start_ns = trace.end_ns = 0;  // No timed events.
  AddCollectives(&trace);
  AddGemmCalls(&trace);

  // The capture window spans every event; a span past the int64 range could not be read back
  // (the reader refuses an event that ends beyond it), so such a document is refused here.
  int64_t span = 0;
  if (__builtin_sub_overflow(trace.end_ns, trace.start_ns, &span)) {
    return ErrorStatus(
        "%s: the events' times span more than the 64-bit range of nanoseconds (from %lld to %lld "
        "ns); nothing is written",
        name.c_str(), static_cast<long long>(trace.start_ns), static_cast<long long>(trace.end_ns));
  }
  schema::CaptureWindowEvent window;
  window.start_ns = trace.start_ns;
  window.duration_ns = static_cast<uint64_t>(span);
  window.trigger = schema::WindowTrigger::kImported;
  trace.events.emplace_back(window);
  if (trace.skipped != 0) {
    schema::LossEvent loss;
    loss.start_ns = trace.start_ns;
    loss.duration_ns = static_cast<uint64_t>(span);
    loss.source = schema::LossSource::kImportSkipped;
    loss.count = trace.skipped;
    loss.detail =
        trace.Own(std::to_string(trace.skipped) +
                  " Kineto events could not be converted; the first: " + trace.first_skip);
    trace.events.emplace_back(loss);
  }
  std::stable_sort(trace.events.begin(), trace.events.end(),
                   [](const ImportedEvent& a, const ImportedEvent& b) {
                     int64_t sa = StartOf(a), sb = StartOf(b);
                     return sa != sb ? sa < sb : OrderOf(a) < OrderOf(b);
                   });
  CompleteHeader(options, &trace);

  schema::WriterOptions writer_options;
  writer_options.zstd_level = options.zstd_level;
  writer_options.header_in_own_frame = false;  // Written in one go: nothing to protect.
  writer_options.log_failures = false;         // Reported once, by CloseComplete().
  LUMOS_ASSIGN_OR_RETURN(
      auto writer, schema::TraceFileWriter::Create(output_path, trace.header, writer_options));
  for (const auto& [key, thread_name] : trace.threads) {
    writer->AddThread(schema::ThreadEvent{key.tid, thread_name, key.pid});
    ++stats->threads;
  }
  for (const ImportedEvent& event : trace.events) {
    std::visit([&writer](const auto& e) { writer->Add(e); }, event);
    Count(event, stats);
  }
  LUMOS_RETURN_IF_ERROR(
      writer->CloseComplete(static_cast<uint64_t>(std::max<int64_t>(trace.end_ns, 0))));
  stats->skipped = trace.skipped;
  stats->warnings = std::move(trace.warnings);
  stats->start_ns = trace.start_ns;
  stats->end_ns = trace.end_ns;
  stats->output_bytes = writer->stats().bytes_written;
  return Status::Ok();
}

}  // namespace lumos::modeler::kineto
