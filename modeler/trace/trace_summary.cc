#include "modeler/trace/trace_summary.h"

#include <vector>

#include "modeler/trace/gemm_link.h"
#include "modeler/trace/nested_calls.h"
#include "modeler/trace/packet_util.h"

namespace lumos::modeler {

StatusOr<TraceSummary> SummarizeTrace(const std::string& path) {
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> reader, TraceReader::Open(path));
  TraceSummary summary;
  summary.path = path;
  summary.header = reader->header();
  GemmLinker gemms;
  std::vector<bool> attention;                // Per GEMM call, in the order added.
  std::vector<uint64_t> kernel_correlations;  // Matched against the GEMM calls at the end.
  std::vector<CallSpan> calls;                // Driver calls inside runtime calls: once.
  LUMOS_RETURN_IF_ERROR(reader->ReadPackets(
      [&](const pb::TracePacket& packet, const PacketContext& context) {
        ++summary.packet_counts[std::string(PacketKindName(packet))];
        if (packet.has_start_delta_ns()) {
          int64_t end = schema::EventEndNs(context.start_ns, EventDurationNs(packet));
          if (!summary.has_time) {
            summary.first_ns = context.start_ns;
            summary.last_ns = end;
            summary.has_time = true;
          }
          summary.first_ns = std::min(summary.first_ns, context.start_ns);
          summary.last_ns = std::max(summary.last_ns, end);
        }
        switch (packet.data_case()) {
          case pb::TracePacket::kKernel: {
            const pb::KernelEvent& k = packet.kernel();
            summary.streams.emplace(k.device_id(), k.stream_id());
            if (context.String(k.name_iid()).substr(0, 4) == "nccl") ++summary.nccl_kernels;
            kernel_correlations.push_back(k.correlation_id());
            break;
          }
          case pb::TracePacket::kGemmCall: {
            const pb::GemmCall& g = packet.gemm_call();
            summary.threads.insert(g.thread_id());
            attention.push_back(g.api() == pb::GEMM_API_FRAMEWORK_ATTENTION ||
                                g.api() == pb::GEMM_API_FRAMEWORK_ATTENTION_BACKWARD);
            gemms.AddGemmCall({.start_ns = context.start_ns,
                               .duration_ns = g.duration_ns(),
                               .thread_id = g.thread_id(),
                               .return_code = g.return_code(),
                               .correlation_id = g.correlation_id()});
            break;
          }
          case pb::TracePacket::kMemcpy:
            summary.streams.emplace(packet.memcpy().device_id(), packet.memcpy().stream_id());
            break;
          case pb::TracePacket::kMemset:
            summary.streams.emplace(packet.memset().device_id(), packet.memset().stream_id());
            break;
          case pb::TracePacket::kApiCall: {
            const pb::ApiCall& a = packet.api_call();
            summary.threads.insert(a.thread_id());
            calls.push_back({a.thread_id(), a.correlation_id(),
                             static_cast<schema::ApiDomain>(a.domain()), context.start_ns,
                             context.start_ns + static_cast<int64_t>(a.duration_ns())});
            gemms.AddApiCall({.start_ns = context.start_ns,
                              .thread_id = a.thread_id(),
                              .correlation_id = a.correlation_id(),
                              .kind = static_cast<schema::ApiKind>(a.kind())});
            break;
          }
          case pb::TracePacket::kNvtx:
            summary.threads.insert(packet.nvtx().thread_id());
            break;
          case pb::TracePacket::kHostRange:
            if (packet.host_range().category() != pb::HOST_RANGE_CATEGORY_GPU_ANNOTATION) {
              summary.threads.insert(packet.host_range().thread_id());
            }
            break;
          case pb::TracePacket::kCollective:
            summary.communicators.insert(packet.collective().comm_id());
            break;
          case pb::TracePacket::kCommunicator:
            summary.communicators.insert(packet.communicator().comm_id());
            break;
          case pb::TracePacket::kClockSnapshot: {
            if (summary.has_realtime_offset) break;
            bool has_default = false, has_realtime = false;
            int64_t default_ns = 0, realtime_ns = 0;
            for (const auto& reading : packet.clock_snapshot().reading()) {
              if (reading.clock_id() == summary.header.default_clock_id()) {
                has_default = true;
                default_ns = static_cast<int64_t>(reading.value_ns());
              }
              if (reading.clock_id() == pb::CLOCK_ID_REALTIME) {
                has_realtime = true;
                realtime_ns = static_cast<int64_t>(reading.value_ns());
              }
            }
            if (has_default && has_realtime) {
              summary.has_realtime_offset = true;
              summary.realtime_offset_ns = realtime_ns - default_ns;
            }
            break;
          }
          case pb::TracePacket::kLoss:
            summary.loss_by_source[std::string(EnumShortName(packet.loss().source()))] +=
                packet.loss().count();
            summary.events_lost += packet.loss().count();
            break;
          default:
            break;
        }
        return Status::Ok();
      },
      &summary.read));
  // What the header could not name at start-up, as the trailer (schema 2.4) names it.
  if (summary.read.has_trailer) {
    const pb::Trailer& t = summary.read.trailer;
    if (summary.header.devices_size() == 0 && t.devices_size() > 0) {
      *summary.header.mutable_devices() = t.devices();
      summary.devices_from_trailer = true;
    }
    if (summary.header.cuda_runtime_version() == 0) {
      summary.header.set_cuda_runtime_version(t.cuda_runtime_version());
    }
    if (summary.header.cuda_driver_version() == 0) {
      summary.header.set_cuda_driver_version(t.cuda_driver_version());
    }
    if (summary.header.nccl_version().empty()) summary.header.set_nccl_version(t.nccl_version());
  }
  summary.kernels = kernel_correlations.size();
  for (bool nested : NestedDriverCalls(calls)) summary.nested_driver_calls += nested ? 1 : 0;
  if (summary.nested_driver_calls > 0) {
    summary.packet_counts["api_call"] -= summary.nested_driver_calls;
  }
  for (bool a : attention) ++(a ? summary.attention_calls : summary.gemm_calls);
  if (!attention.empty()) {
    gemms.Finish();
    for (uint64_t correlation : kernel_correlations) {
      const uint32_t call = gemms.GemmOf(correlation);
      if (call == kNoGemm) continue;
      ++(attention[call] ? summary.kernels_with_attention_shape : summary.kernels_with_gemm_shape);
    }
  }
  return summary;
}

}  // namespace lumos::modeler
