// Design: `lumos-model export`: Lumos traces (one file per rank) -> one Chrome trace JSON
// object ({"traceEvents": [...], "displayTimeUnit": "ns", "metadata": {...}}) that opens in
// ui.perfetto.dev and chrome://tracing.
// How: two streaming passes over every file. Pass 1 (export_index.h) keeps rows and flow join
// keys, not packets. Then the rows are laid out (track_layout.h) and the flow arrows chosen
// (flow_linker.h) for all files together; pass 2 (event_writer.h) re-reads each file and writes
// its events as it goes, and the flow events follow. The JSON is never held in memory.
// Times: every time is written relative to one origin for the whole export (the earliest event,
// rounded down to a whole second of the trace clock, recorded in metadata.lumos.time_origin_ns)
// so that µs values with 3 decimals stay exact in viewers that parse numbers as doubles.
// Files are put on one timeline as they are: aligning the clocks of different hosts is not done
// here. Output is deterministic: same inputs in the same order, same bytes.
// Failure: an input that cannot be opened (not a trace, a newer major, no readable header) is
// skipped and named in ExportReport::skipped; the others are exported (none left: an error). A
// damaged tail (killed writer) does not fail either: what precedes it is exported and the damage
// is reported.
// Threading: single-threaded; memory grows with the number of events (about 100 bytes each),
// not with their size.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace lumos::modeler {

struct ExportOptions {
  bool flows = true;   // Write flow arrows (launch, CUDA event, cross-rank collective).
  bool force = false;  // Replace an output lumos-model did not write (io::ReplacePolicy).
};

struct ExportFileReport {
  std::string path;
  uint32_t pid = 0;      // Its process in the output.
  uint64_t packets = 0;  // Packets read (all kinds).
  uint64_t events = 0;   // Trace events written for it (slices and instants).
  Status damage;         // OK, or the damaged tail: "path: byte offset N: why".
  bool closed = false;   // The file has its trailer (the writer closed it).
};

struct ExportReport {
  std::vector<ExportFileReport> files;
  uint64_t events = 0;         // Slices and instants, all files.
  uint64_t flows = 0;          // Flow arrows ("s"/"f" pairs).
  uint64_t flows_skipped = 0;  // Matched arrows that would point back in time.
  uint64_t bytes = 0;          // JSON bytes written.
  // Inputs that could not be opened, one message each ("path: byte offset N: why"); not in
  // `files`.
  std::vector<std::string> skipped;
  bool damaged() const {
    if (!skipped.empty()) return true;
    for (const ExportFileReport& file : files) {
      if (!file.damage.ok()) return true;
    }
    return false;
  }
};

// Receives the JSON in order, in chunks of about 1 MiB.
using ExportSink = std::function<Status(std::string_view)>;

// Exports `trace_paths` (files, in this order) to `sink`. A damaged input is reported in
// `report`, not as an error.
Status ExportChromeTrace(const std::vector<std::string>& trace_paths, const ExportOptions& options,
                         const ExportSink& sink, ExportReport* report);

// Same, into `out_path` through io::OutputFile: a temporary file next to it, renamed when
// complete, so `out_path` is either the complete output or untouched (a device or FIFO is
// written directly; a directory is refused).
Status ExportChromeTraceFile(const std::vector<std::string>& trace_paths,
                             const ExportOptions& options, const std::string& out_path,
                             ExportReport* report);

}  // namespace lumos::modeler
