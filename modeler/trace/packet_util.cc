#include "modeler/trace/packet_util.h"

#include <google/protobuf/descriptor.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace lumos::modeler {

namespace pb = ::lumos::trace;

uint64_t EventDurationNs(const pb::TracePacket& packet) {
  switch (packet.data_case()) {
    case pb::TracePacket::kKernel:
      return packet.kernel().duration_ns();
    case pb::TracePacket::kApiCall:
      return packet.api_call().duration_ns();
    case pb::TracePacket::kMemcpy:
      return packet.memcpy().duration_ns();
    case pb::TracePacket::kMemset:
      return packet.memset().duration_ns();
    case pb::TracePacket::kSync:
      return packet.sync().duration_ns();
    case pb::TracePacket::kNvtx:
      return packet.nvtx().duration_ns();
    case pb::TracePacket::kHostRange:
      return packet.host_range().duration_ns();
    case pb::TracePacket::kCollective: {
      const pb::NcclCollective& c = packet.collective();
      // Wide: both fields are any 64-bit value in a hostile trace; an end past the range comes
      // back as UINT64_MAX, which the reader refuses.
      const __int128 gpu_end = static_cast<__int128>(c.gpu_start_offset_ns()) + c.gpu_duration_ns();
      const uint64_t gpu = gpu_end <= 0          ? 0
                           : gpu_end > INT64_MAX ? UINT64_MAX
                                                 : static_cast<uint64_t>(gpu_end);
      return std::max<uint64_t>(c.duration_ns(), gpu);
    }
    case pb::TracePacket::kGemmCall:
      return packet.gemm_call().duration_ns();
    case pb::TracePacket::kCaptureWindow:
      return packet.capture_window().duration_ns();
    case pb::TracePacket::kLoss:
      return packet.loss().duration_ns();
    default:
      return 0;
  }
}

std::string_view PacketKindName(const pb::TracePacket& packet) {
  if (packet.data_case() == pb::TracePacket::DATA_NOT_SET) return "empty";
  const auto* field = pb::TracePacket::descriptor()->FindFieldByNumber(packet.data_case());
  return field != nullptr ? std::string_view(field->name()) : std::string_view("unknown");
}

template <typename Enum>
std::string_view EnumShortName(Enum value) {
  // Built once per enum type: value -> lower-case name without the common prefix.
  static const std::unordered_map<int, std::string> names = [] {
    std::unordered_map<int, std::string> result;
    const auto* descriptor = google::protobuf::GetEnumDescriptor<Enum>();
    std::string prefix = descriptor->value(0)->name();
    prefix = prefix.substr(0, prefix.size() - std::string("UNSPECIFIED").size());
    for (int i = 0; i < descriptor->value_count(); ++i) {
      std::string name = descriptor->value(i)->name().substr(prefix.size());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      result[descriptor->value(i)->number()] = name;
    }
    return result;
  }();
  auto it = names.find(static_cast<int>(value));
  return it != names.end() ? std::string_view(it->second) : std::string_view("unknown");
}

template std::string_view EnumShortName(pb::LossSource);
template std::string_view EnumShortName(pb::ApiKind);
template std::string_view EnumShortName(pb::SyncType);
template std::string_view EnumShortName(pb::CollectiveOp);
template std::string_view EnumShortName(pb::DataType);
template std::string_view EnumShortName(pb::CopyKind);
template std::string_view EnumShortName(pb::NcclAlgorithm);
template std::string_view EnumShortName(pb::NcclProtocol);
template std::string_view EnumShortName(pb::GemmApi);
template std::string_view EnumShortName(pb::GemmTranspose);
template std::string_view EnumShortName(pb::GemmComputeType);
template std::string_view EnumShortName(pb::GemmMathMode);
template std::string_view EnumShortName(pb::AttentionMask);
template std::string_view EnumShortName(pb::HostRangeCategory);
template std::string_view EnumShortName(pb::NvtxKind);
template std::string_view EnumShortName(pb::Producer);
template std::string_view EnumShortName(pb::ClockId);
template std::string_view EnumShortName(pb::Channel);
template std::string_view EnumShortName(pb::ReduceOp);
template std::string_view EnumShortName(pb::WindowTrigger);

}  // namespace lumos::modeler
