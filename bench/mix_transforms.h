// Design: rewrites of an event list that make today's writer emit (nearly) the bytes a
// changed encoding would, so the benchmarks can price a format change before anyone makes
// it. Simulation only: the rewritten values are what the new encoding would store, not
// meaningful event data. Used by lumos_trace_size_report and BM_WriteTrace (docs/performance.md
// "What would close the gap").
#pragma once

#include <vector>

#include "bench/event_mix.h"

namespace lumos::bench {

// cuda_event_sync_id becomes zigzag(value - previous value of the same event kind): the
// per-kind delta coding the encoder already applies to correlation_id, external_id and
// sequence_number, extended to the CUDA event sync ids of CudaEventRecord and SyncEvent.
void DeltaCodeSyncIds(std::vector<MixEvent>* events);

// Clears fields that are constant per process or derivable from another field, as if they
// moved to the header or a per-frame default: device_id and context_id of GPU records, the
// API domain and cbid (implied by the interned name), comm_size and has_host_time of
// collectives.
void DropConstantFields(std::vector<MixEvent>* events);

// Re-times the list so each packet's start delta equals its start minus the end of the
// previous operation on the same stream (kernels, memcpys, event records) or host thread
// (API calls; NVTX ranges and collectives each chain per thread), falling back to the previous
// packet's start: what a "start relative to the previous end on this processor" encoding would
// store.
void StartFromPreviousEndOnProcessor(std::vector<MixEvent>* events);

}  // namespace lumos::bench
