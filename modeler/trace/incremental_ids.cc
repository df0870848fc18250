#include "modeler/trace/incremental_ids.h"

#include "schema/varint.h"

namespace lumos::modeler {
namespace {

namespace pb = ::lumos::trace;

uint64_t Undelta(uint64_t* last, uint64_t wire) {
  *last += static_cast<uint64_t>(schema::ZigZagDecode(wire));  // A wrapping add.
  return *last;
}

template <typename Event, typename State>
void RestoreCorrelationAndExternal(Event* event, State* state) {
  event->set_correlation_id(Undelta(&state->correlation, event->correlation_id()));
  event->set_external_id(Undelta(&state->external, event->external_id()));
}

}  // namespace

void IncrementalIds::Restore(pb::TracePacket* packet) {
  int kind = packet->data_case();
  if (kind <= 0 || kind >= 32) return;
  State* state = &by_kind_[kind];
  switch (packet->data_case()) {
    case pb::TracePacket::kKernel:
      RestoreCorrelationAndExternal(packet->mutable_kernel(), state);
      break;
    case pb::TracePacket::kApiCall:
      RestoreCorrelationAndExternal(packet->mutable_api_call(), state);
      break;
    case pb::TracePacket::kMemcpy:
      RestoreCorrelationAndExternal(packet->mutable_memcpy(), state);
      break;
    case pb::TracePacket::kMemset:
      RestoreCorrelationAndExternal(packet->mutable_memset(), state);
      break;
    case pb::TracePacket::kSync:
      RestoreCorrelationAndExternal(packet->mutable_sync(), state);
      break;
    case pb::TracePacket::kCudaEvent: {
      auto* event = packet->mutable_cuda_event();
      event->set_correlation_id(Undelta(&state->correlation, event->correlation_id()));
      break;
    }
    case pb::TracePacket::kCollective: {
      auto* collective = packet->mutable_collective();
      collective->set_correlation_id(Undelta(&state->correlation, collective->correlation_id()));
      break;
    }
    case pb::TracePacket::kHostRange: {
      auto* range = packet->mutable_host_range();
      range->set_external_id(Undelta(&state->external, range->external_id()));
      range->set_sequence_number(Undelta(&state->sequence, range->sequence_number()));
      break;
    }
    default:
      break;
  }
}

}  // namespace lumos::modeler
