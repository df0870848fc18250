// Design: turns completed CUPTI activity buffers into Records, on the writer thread.
//
// Why the writer decodes (and not bufferCompleted's thread): CUPTI completes whole buffers
// (8 MiB by default, ~40k kernel records) on its own thread or inside cuptiActivityFlushAll.
// Pushing them into that thread's ring (1 MiB = 16k records) would overflow it on every buffer,
// and interning kernel names takes a lock. So bufferCompleted only queues the buffer
// (ActivityBufferPool) and the writer walks it in place at its next pass, feeding the records to
// the same encoder as the rings: no copy, no ring limit, the pool bounds the memory.
//
// Walk: the real cuptiActivityGetNextRecord (from the CuptiApi table), twice per buffer: first
// EXTERNAL_CORRELATION records, then the rest, so an external id joins the events of its
// correlation id whichever comes first in the buffer. Joins remembered across buffers:
//   correlation id -> external id: a direct-mapped table of kJoinSlots (correlation ids grow by
//     one per API call, so it holds the last kJoinSlots calls);
//   cudaEventSyncId -> (recording stream, record correlation) from CUDA_EVENT records, which
//     fills SyncEvent.wait_on_stream_id / event_record_correlation_id of a later
//     STREAM_WAIT_EVENT or EVENT_SYNCHRONIZE record (same direct-mapped scheme);
//   context id -> device id from kernel/memcpy/memset/event records (sync records carry only the
//     context); an unseen context leaves device 0.
// Decoded kinds (CUPTI 13.0 layouts): CONCURRENT_KERNEL/KERNEL (Kernel10), MEMCPY (Memcpy6),
// MEMCPY2 (MemcpyPtoP4), MEMSET (Memset4), SYNCHRONIZATION (Synchronization2), CUDA_EVENT
// (CudaEvent2), EXTERNAL_CORRELATION. Other kinds are counted and skipped. The channel only
// enables activity when the loaded CUPTI's version equals the headers' (layouts change in 13.x).
// Times: CUPTI ns converted to CLOCK_MONOTONIC with the offset given per buffer (CuptiClock).
// Kernel names: demangled and interned once per CUPTI name pointer (CUPTI keeps them alive).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "agent/core/record.h"
#include "agent/cupti/cupti_api.h"
#include "agent/runtime/record_source.h"

namespace lumos::agent::cupti {

struct DecodeStats {
  uint64_t kernels = 0, memcpys = 0, memsets = 0, syncs = 0, cuda_events = 0;
  uint64_t external_correlations = 0;
  uint64_t skipped = 0;      // Kinds we do not decode.
  uint64_t walk_errors = 0;  // Buffers whose walk ended with an error other than "no more".
};

class ActivityDecoder {
 public:
  static constexpr uint32_t kJoinSlots = 1 << 16;

  explicit ActivityDecoder(const CuptiApi* api);

  // Decodes one buffer into sink. offset_ns: CUPTI minus CLOCK_MONOTONIC (CuptiClock).
  void Decode(const uint8_t* buffer, size_t valid_bytes, int64_t offset_ns, RecordSink& sink);

  const DecodeStats& stats() const { return stats_; }

 private:
  struct ExternalSlot {
    uint32_t correlation_id = 0;
    uint64_t external_id = 0;
  };
  struct EventSlot {
    uint64_t cuda_event_sync_id = 0;
    uint64_t stream_id = 0;
    uint32_t correlation_id = 0;
  };
  uint64_t ExternalId(uint32_t correlation_id) const;
  uint16_t DeviceOfContext(uint32_t context_id) const;
  void NoteContext(uint32_t context_id, uint32_t device_id);
  uint32_t KernelNameId(const char* name, RecordSink& sink);
  void DecodeRecord(const CUpti_Activity* activity, int64_t offset_ns, RecordSink& sink);

  const CuptiApi* api_;
  DecodeStats stats_;
  std::unique_ptr<ExternalSlot[]> external_;
  std::unique_ptr<EventSlot[]> events_;
  std::unordered_map<uint32_t, uint16_t> context_devices_;
  std::unordered_map<const char*, uint32_t> kernel_names_;
  std::string demangled_;
};

}  // namespace lumos::agent::cupti
