// Test support: an independent reading of schema-2 column packets, written with libprotobuf
// reflection from the rules in schema/lumos/trace.proto ("Columnar frames") rather than with
// the reader's hand-written decoder. Tests use it as the oracle for both the writer's columns
// and the reader's decoding.
#pragma once

#include "schema/lumos/trace.pb.h"

namespace lumos::testing {

// Returns `frame` (one decompressed frame parsed as a Trace) with each *Columns packet replaced
// by one row packet per event, in column order: ids absolute, optional fields set as the row
// writer of schema 1 would, start_delta_ns = event start - FramePacket.base_time_ns. Other
// packets are copied unchanged (their ids are not touched). Fails the current test on a
// malformed column packet.
::lumos::trace::Trace ExpandColumns(const ::lumos::trace::Trace& frame);

}  // namespace lumos::testing
