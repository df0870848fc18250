// Design: small helpers over TracePacket shared by the modeler's commands.
#pragma once

#include <cstdint>
#include <string_view>

#include "schema/lumos/trace.pb.h"

namespace lumos::modeler {

// Duration of a timed packet's event in ns (0 for instants and untimed packets).
uint64_t EventDurationNs(const ::lumos::trace::TracePacket& packet);

// The oneof field name of a packet's kind ("kernel", "api_call", ...), "empty" if none.
std::string_view PacketKindName(const ::lumos::trace::TracePacket& packet);

// Enum value name without its prefix, lower case: (LOSS_SOURCE_RING_FULL) -> "ring_full".
template <typename Enum>
std::string_view EnumShortName(Enum value);

}  // namespace lumos::modeler
