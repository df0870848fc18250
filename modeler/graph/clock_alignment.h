// Design: aligns the clocks of a job's ranks from matched collectives. The instances of one
// collective (same comm id and seq number) end together on all ranks (NCCL's last step
// completes everywhere within a few µs), so for each rank the median, over the collectives it
// shares with the reference rank (the lowest), of (its end - the reference's end) is its clock
// offset; the median ignores the odd collective that ends late on one rank. Ranks on the same
// host (same non-empty host name) share a clock, so they get one offset: the median of theirs.
// The residual skew of a host is the median |aligned end - reference end| over its collectives.
// A rank with no collective in common with the reference keeps offset 0 (reported).
// Threading: pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "modeler/graph/job.h"

namespace lumos::modeler {

struct HostAlignment {
  std::string host;  // "" when the traces do not say.
  std::vector<int32_t> ranks;
  int64_t offset_ns = 0;     // Added to the host's times.
  int64_t residual_ns = 0;   // Median |aligned end - reference end|.
  uint64_t collectives = 0;  // Collectives used.
};

struct ClockAlignment {
  std::vector<int64_t> rank_offset_ns;  // Per rank index of the job.
  std::vector<HostAlignment> hosts;
};

ClockAlignment AlignClocks(const Job& job);

}  // namespace lumos::modeler
