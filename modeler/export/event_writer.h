// Design: the exporter's second pass. Given the row of every packet (from the layout),
// EventWriter turns one packet at a time into a Chrome trace event and forgets it: "X" slices
// with ts/dur in µs (3 decimals, exact ns, relative to the export's origin) and "i" instants for
// marks. Categories follow the PyTorch profiler's names (kernel, gpu_memcpy, cuda_runtime,
// cpu_op, ...) so tools written for those traces work on ours.
// Flow events ("s"/"f") come last, after every slice of every file, in id order. Perfetto binds
// a flow event to the slice open on its row at its ts and breaks ties between events of equal
// ts by file order (the newest versions put slices first anyway), so this order guarantees
// that the slice exists when its flow event is read and that an "s" precedes its "f" even when
// both share a ts on different ranks.
// Threading: one writer per thread.
#pragma once

#include <cstdint>
#include <vector>

#include "modeler/export/flow_linker.h"
#include "modeler/export/track_layout.h"
#include "modeler/io/json_writer.h"
#include "modeler/trace/trace_reader.h"

namespace lumos::modeler::internal {

class EventWriter {
 public:
  // All references must outlive the writer. `origin_ns` is subtracted from every time and is
  // at most the start of any event written.
  EventWriter(io::JsonWriter* json, const ProcessLayout& layout,
              const std::vector<uint32_t>& packet_track, int64_t origin_ns);

  // Writes the event of packet number `packet_index`, if it is drawn.
  void Write(const pb::TracePacket& packet, const PacketContext& context, uint32_t packet_index);

  uint64_t events() const { return events_; }

 private:
  void BeginEvent(bool slice, std::string_view category, std::string_view name,
                  const OutputTrack& row, EventSpan span);
  void EndEvent();

  void Kernel(const pb::KernelEvent& k);
  void Memcpy(const pb::MemcpyEvent& m, EventSpan span);
  void Memset(const pb::MemsetEvent& m, EventSpan span);
  void ApiCallArgs(const pb::ApiCall& call);
  void SyncArgs(const pb::SyncEvent& sync);
  void CudaEventArgs(const pb::CudaEventRecord& record);
  void NvtxArgs(const pb::NvtxRange& range, const PacketContext& context);
  void HostRangeArgs(const pb::HostRange& range);
  void CollectiveArgs(const pb::NcclCollective& c);
  void CommunicatorArgs(const pb::Communicator& c);

  io::JsonWriter* json_;
  const ProcessLayout& layout_;
  const std::vector<uint32_t>& packet_track_;
  int64_t origin_ns_;
  uint64_t events_ = 0;
};

// The "s" and "f" events of one arrow (after LayoutProcesses: packet_track holds rows).
void WriteFlow(io::JsonWriter* json, const Flow& flow, const std::vector<ProcessLayout>& layouts,
               const std::vector<FileIndex>& files, int64_t origin_ns);

// ns since the origin; 0 for earlier times (none: the origin is the earliest event).
uint64_t RelativeNs(int64_t ns, int64_t origin_ns);

// process_name / process_sort_index / process_labels, and thread_name / thread_sort_index of
// every row of one process.
void WriteProcessMetadata(io::JsonWriter* json, const ProcessLayout& layout);

}  // namespace lumos::modeler::internal
