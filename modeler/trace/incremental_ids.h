// Design: undoes the delta coding of ids (schema/lumos/trace.proto, "Incremental state"):
// correlation_id, external_id and sequence_number are stored as zigzag deltas from the same
// field of the previous packet of the same kind in the frame. One instance per frame; feed it
// every packet of the frame in order. Wrapping arithmetic, so hostile input cannot overflow.
#pragma once

#include <cstdint>

#include "schema/lumos/trace.pb.h"

namespace lumos::modeler {

class IncrementalIds {
 public:
  void Reset() { *this = IncrementalIds(); }
  // Rewrites the packet's delta-coded ids to absolute values.
  void Restore(::lumos::trace::TracePacket* packet);

 private:
  struct State {
    uint64_t correlation = 0;
    uint64_t external = 0;
    uint64_t sequence = 0;
  };
  State by_kind_[32];  // Indexed by TracePacket field number.
};

}  // namespace lumos::modeler
