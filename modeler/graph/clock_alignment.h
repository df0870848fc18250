// Design: aligns the clocks of a job's hosts from matched collectives. The records of one
// operation (one CollectiveKey, collective_key.h: same comm id, op and seq number; a send and
// its receive, less tightly) end together on all ranks (NCCL's last step completes everywhere
// within a few µs), so for two hosts that share collectives, the median
// over those collectives of (end on one - end on the other) is how far one clock runs ahead;
// the median ignores the odd collective that ends late on one rank. Ranks on the same host
// (same non-empty host name) share one clock; an unnamed rank is a host of its own. Hosts are
// linked by the collectives they share; each connected part is aligned breadth-first to its
// lowest host (offset 0), so hosts that never meet directly are aligned through others. Parts
// that share no collective cannot be related and need not be (nothing couples them).
// Residual skew of a host: the median |aligned end - aligned end on the collective's lowest
// host| over its collectives. A clock that jumps during the trace (a step of >= 1 ms in the
// differences, 10x above their noise) is reported with its time; the offset then fits the
// larger part of the trace (a median), and the rest shows as skew.
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
  uint64_t collectives = 0;  // Collective instances compared with other hosts.
  // A step in this host's clock against its reference host (0: none seen): its size and the
  // reference host's time of the first collective after it.
  int64_t jump_ns = 0;
  int64_t jump_at_ns = 0;
};

struct ClockAlignment {
  std::vector<int64_t> rank_offset_ns;  // Per rank index of the job.
  std::vector<HostAlignment> hosts;
};

ClockAlignment AlignClocks(const Job& job);

}  // namespace lumos::modeler
