// Design: helpers shared by the benchmarks and the size report: feed an event mix to a
// PacketEncoder or a TraceFileWriter, and name scratch files under $TMPDIR (default /tmp).
// Single-threaded.
#pragma once

#include <string>
#include <vector>

#include "agent/writer/packet_encoder.h"
#include "agent/writer/trace_file_writer.h"
#include "base/status.h"
#include "bench/event_mix.h"

namespace lumos::bench {

inline void AddEvent(agent::PacketEncoder* encoder, const MixEvent& event) {
  std::visit([encoder](const auto& e) { encoder->Add(e); }, event);
}
inline void AddEvent(agent::TraceFileWriter* writer, const MixEvent& event) {
  std::visit([writer](const auto& e) { writer->Add(e); }, event);
}

// Writes `events` to a fresh trace at `path` and closes it; returns the writer's stats.
StatusOr<agent::WriterStats> WriteTrace(const std::string& path, const agent::HeaderInfo& header,
                                        const std::vector<MixEvent>& events,
                                        const agent::WriterOptions& options);

// "$TMPDIR/lumos_bench_<pid>_<tag>.pb.zst".
std::string ScratchPath(const std::string& tag);

}  // namespace lumos::bench
