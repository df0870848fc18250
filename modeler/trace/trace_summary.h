// Design: one pass over a trace file that collects what `lumos-model inspect` shows: header,
// time span, packet counts per kind, loss per source, streams/threads/communicators seen, how
// many kernels have a GEMM or an attention shape, and the state of the file's tail (clean
// trailer, or damage with its byte offset).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "base/status.h"
#include "modeler/trace/trace_reader.h"

namespace lumos::modeler {

struct TraceSummary {
  std::string path;
  // The header, with the devices and versions it lacks taken from the trailer (schema 2.4).
  pb::TraceHeader header;
  bool devices_from_trailer = false;
  ReadResult read;  // Frames, bytes, trailer, damage.
  // By packet kind ("kernel", ...); "api_call" counts calls, not the driver calls an older
  // agent also recorded inside runtime calls (nested_driver_calls; nested_calls.h).
  std::map<std::string, uint64_t> packet_counts;
  uint64_t nested_driver_calls = 0;
  bool has_time = false;
  int64_t first_ns = 0;  // Earliest start of any timed packet.
  int64_t last_ns = 0;   // Latest end.
  // Realtime minus the default clock, from the first clock snapshot reading both (agent
  // traces: monotonic); lets tools show wall-clock times.
  bool has_realtime_offset = false;
  int64_t realtime_offset_ns = 0;
  std::map<std::string, uint64_t> loss_by_source;  // Events lost, by LossSource short name.
  uint64_t events_lost = 0;
  uint64_t nccl_kernels = 0;                        // Kernels whose name starts with "nccl".
  std::set<std::pair<uint32_t, uint64_t>> streams;  // (device, stream).
  std::set<uint32_t> threads;
  std::set<uint64_t> communicators;
  uint64_t kernels = 0;
  // GemmCall packets (schema 2.2): GEMMs, and attention problems (api FRAMEWORK_ATTENTION*).
  uint64_t gemm_calls = 0;
  uint64_t attention_calls = 0;
  // Kernels a GEMM call gives its shape to (modeler/trace/gemm_link.h), by kind of problem.
  uint64_t kernels_with_gemm_shape = 0;
  uint64_t kernels_with_attention_shape = 0;
};

// Fails only when the file cannot be opened as a trace; damage is in summary.read.damage.
StatusOr<TraceSummary> SummarizeTrace(const std::string& path);

}  // namespace lumos::modeler
