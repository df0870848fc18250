// Design: helpers shared by the benchmarks and the size report: feed an event mix to a
// PacketEncoder or a TraceFileWriter, and name scratch files under $TMPDIR (default /tmp).
// Single-threaded.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "bench/event_mix.h"
#include "schema/writer/packet_encoder.h"
#include "schema/writer/trace_file_writer.h"

namespace lumos::bench {

inline void AddEvent(schema::PacketEncoder* encoder, const MixEvent& event) {
  std::visit([encoder](const auto& e) { encoder->Add(e); }, event);
}
inline void AddEvent(schema::TraceFileWriter* writer, const MixEvent& event) {
  std::visit([writer](const auto& e) { writer->Add(e); }, event);
}

// Writes `events` to a fresh trace at `path` and closes it; returns the writer's stats.
StatusOr<schema::WriterStats> WriteTrace(const std::string& path, const schema::HeaderInfo& header,
                                         const std::vector<MixEvent>& events,
                                         const schema::WriterOptions& options);

// "$TMPDIR/lumos_bench_<pid>_<tag>.pb.zst".
std::string ScratchPath(const std::string& tag);

}  // namespace lumos::bench
