// Design: a capture window's file holds its window. The agent before issue 23 left CUPTI's
// activity buffers filling while dormant, so a window's file also got every GPU op since the last
// flush, some with broken timestamps (the H200 periodic window's copies 56 years early); files
// it writes now hold only their window. A loaded window file (its closing CaptureWindow packet
// gives the span) keeps the events that overlap the span, and the GPU ops (kernels, copies,
// memsets, CUDA event records) an API call it keeps launched (a kernel launched in the window's
// last iteration may run past its end; an event record may have no time); the rest is
// dropped and counted (RankTrace::outside_window), and the loader says so in one line.
// Threading: pure functions.
#pragma once

#include <cstdint>

#include "modeler/graph/job.h"

namespace lumos::modeler {

// Drops `rank`'s events outside [begin_ns, end_ns] (above); returns how many it dropped.
uint64_t ClipToWindow(int64_t begin_ns, int64_t end_ns, RankTrace* rank);

}  // namespace lumos::modeler
