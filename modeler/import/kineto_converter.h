// Design: converts one Kineto (PyTorch profiler) Chrome-trace JSON document into one Lumos
// trace file. The document is read as a stream (kineto_stream.h), each batch of events parsed
// with simdjson's DOM and mapped to the writer's event structs (kineto_events.cc), completed
// with NCCL collectives and communicators (collectives.cc), a capture window spanning the
// trace and one loss record counting the events that could not be converted, sorted by start
// time (stable) and written with schema::TraceFileWriter. Memory: one batch of JSON text and
// its DOM, plus one struct per event and one copy of each distinct name; the events are bounded
// by the memory budget (kBytesPerImportedEvent), checked batch by batch.
// Failure behaviour: bad input returns a Status naming the input; malformed single events are
// counted, not fatal, but a document of which no event can be converted is an error (nothing
// is written: an empty trace would read as a sound one). The output path is written directly:
// callers that must not leave a partial file behind write to a temporary name and rename (see
// kineto_import.h). A failed write is an error (its reason, from the writer), never a log line.
// Threading: independent calls may run on different threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "modeler/io/byte_source.h"

namespace lumos::modeler::kineto {

struct ConvertOptions {
  std::string job_id;
  std::string source_path;  // Recorded in the header: the file (or archive member) converted.
  int zstd_level = 19;      // Written once, read often: spend CPU on smaller files.
};

// What was written, by kind (events of the output trace).
struct ConvertStats {
  uint64_t kernels = 0;
  uint64_t api_calls = 0;
  uint64_t memcpys = 0;
  uint64_t memsets = 0;
  uint64_t syncs = 0;
  uint64_t host_ranges = 0;
  uint64_t collectives = 0;
  uint64_t communicators = 0;
  uint64_t gemm_calls = 0;  // GEMM shapes of operators' launches ("Input Dims", kineto_gemm.h).
  uint64_t threads = 0;
  uint64_t skipped = 0;  // Input events that could not be converted (see the LossRecord).
  uint64_t events = 0;   // All timed events written.
  int64_t start_ns = 0;  // Span of the trace.
  int64_t end_ns = 0;
  uint64_t output_bytes = 0;
  // What is wrong with the input though the trace could be written (duplicate correlation ids,
  // a rank not below the world size, numbers out of range), each naming the input.
  std::vector<std::string> warnings;
};

// `name` identifies the input in messages; the JSON document is `head` (bytes already read
// from `source`) followed by the rest of `source`, read as a stream (kineto_stream.h).
Status ConvertKinetoStream(std::string_view head, io::ByteSource* source, const std::string& name,
                           const std::string& output_path, const ConvertOptions& options,
                           ConvertStats* stats);

// The same for a document in memory (gzip or not): `text` is the whole of it.
Status ConvertKinetoText(const io::PaddedText& text, const std::string& name,
                         const std::string& output_path, const ConvertOptions& options,
                         ConvertStats* stats);

}  // namespace lumos::modeler::kineto
