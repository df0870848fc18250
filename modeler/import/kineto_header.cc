#include "modeler/import/kineto_header.h"

namespace lumos::modeler::kineto {
namespace {

void ReadDistributedInfo(dom::object info, schema::HeaderInfo* header) {
  for (auto [key, value] : info) {
    if (key == "rank") {
      auto rank = AsInt(value);
      if (rank && *rank >= 0 && *rank <= INT32_MAX) {
        header->has_rank = true;
        header->rank = static_cast<int32_t>(*rank);
      }
    } else if (key == "world_size") {
      auto size = AsInt(value);
      if (size && *size > 0 && *size <= INT32_MAX) {
        header->has_world_size = true;
        header->world_size = static_cast<int32_t>(*size);
      }
    } else if (key == "nccl_version") {
      header->nccl_version = std::string(AsString(value));
    }
  }
}

void ReadDevice(dom::object device, schema::HeaderInfo* header) {
  schema::DeviceInfo info;
  for (auto [key, value] : device) {
    if (key == "id") {
      info.device_id = Id32OrZero(AsInt(value));
    } else if (key == "name") {
      info.name = std::string(AsString(value));
    } else if (key == "totalGlobalMem") {
      info.memory_bytes = IdOrZero(AsInt(value));
    } else if (key == "computeMajor") {
      info.compute_major = Id32OrZero(AsInt(value));
    } else if (key == "computeMinor") {
      info.compute_minor = Id32OrZero(AsInt(value));
    } else if (key == "numSms") {
      info.sm_count = Id32OrZero(AsInt(value));
    }
  }
  header->devices.push_back(std::move(info));
}

}  // namespace

Status ReadTraceMetadata(dom::object root, const std::string& name, KinetoTrace* trace,
                         int64_t* base_time_ns) {
  schema::HeaderInfo& header = trace->header;
  *base_time_ns = 0;
  for (auto [key, value] : root) {
    if (key == "distributedInfo") {
      dom::object info;
      if (value.get_object().get(info) == simdjson::SUCCESS) ReadDistributedInfo(info, &header);
    } else if (key == "deviceProperties") {
      dom::array devices;
      if (value.get_array().get(devices) != simdjson::SUCCESS) continue;
      for (dom::element device : devices) {
        dom::object object;
        if (device.get_object().get(object) == simdjson::SUCCESS) ReadDevice(object, &header);
      }
    } else if (key == "baseTimeNanoseconds") {
      auto base = AsInt(value);
      if (!base || *base < 0) {
        return ErrorStatus("%s: baseTimeNanoseconds is not a non-negative integer", name.c_str());
      }
      *base_time_ns = *base;
    } else if (key == "cupti_version") {  // Written by newer Kineto versions.
      header.cupti_version = Id32OrZero(AsInt(value));
    } else if (key == "cuda_runtime_version") {
      header.cuda_runtime_version = Id32OrZero(AsInt(value));
    } else if (key == "cuda_driver_version") {
      header.cuda_driver_version = Id32OrZero(AsInt(value));
    }
  }
  return Status::Ok();
}

void CheckTraceMetadata(const std::string& name, KinetoTrace* trace) {
  const schema::HeaderInfo& header = trace->header;
  if (header.has_rank && header.has_world_size && header.rank >= header.world_size) {
    // Kept as recorded (which of the two is wrong cannot be told), and said: the replay would
    // otherwise only call the ranks below world_size missing.
    trace->warnings.push_back(name + ": distributedInfo gives rank " + std::to_string(header.rank) +
                              ", not below its world_size " + std::to_string(header.world_size) +
                              " (both kept as recorded)");
  }
}

std::string_view ThreadNameFromKineto(std::string_view name) {
  constexpr std::string_view kPrefix = "thread ";
  if (name.substr(0, kPrefix.size()) != kPrefix) return name;
  size_t open = name.find(" (", kPrefix.size());
  if (open == std::string_view::npos || name.back() != ')') return name;
  for (size_t i = kPrefix.size(); i < open; ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  std::string_view inner = name.substr(open + 2, name.size() - open - 3);
  return inner.empty() ? name : inner;
}

}  // namespace lumos::modeler::kineto
