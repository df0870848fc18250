// Design: glibc malloc settings for the modeler's batch work (one call at the start of a
// process: the lumos-model tool, the replay benchmark). Loading a job builds and drops large
// per-rank vectors hundreds of times; by default glibc maps each one above its (adaptive) mmap
// threshold afresh and unmaps or trims it on free, so every rank faulted its pages in again:
// 151 k page faults where the peak resident size needs 95 k, and 9% of a 512-rank, 6.35 M-event
// replay (perf stat; 1.57 -> 1.42 s, docs/performance.md). Keeping freed memory reuses them.
// Only allocations above 256 MiB (the graph's own arrays) are still mapped on their own.
// Not for the agent: a library loaded into someone else's process never changes its malloc.
#pragma once

#include <malloc.h>

namespace lumos::modeler {

inline void KeepFreedMemoryInProcess() {
#ifdef M_MMAP_THRESHOLD
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace lumos::modeler
