// Design: the plugin's events over its pool (nccl_plugin_pool.h; the whole design is in
// nccl_profiler.h). nccl_plugin_api.cc: API events (CollApi/P2pApi), the GroupApi that settles
// the childless ones, and the link of an operation to its API parent (every transition one CAS
// on the API's link word). nccl_plugin_ops.cc: operations (Coll/P2p) and their kernel channels,
// counted down on the operation's state word; whoever takes it to 0 writes the record.
// nccl_plugin_sweep.cc: what waits too long (the writer's sweep) and what a finalized
// communicator leaves. nccl_profiler.cc turns NCCL's v4/v5 calls into these.
// Threading: as the pool's; no allocation, lock or log on any of these paths.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/core/record.h"
#include "agent/nccl/nccl_plugin_pool.h"
#include "agent/runtime/record_source.h"
#include "schema/nccl_names.h"

namespace lumos::agent::nccl_plugin {

inline bool IsRooted(schema::CollectiveOp op) {
  return op == schema::CollectiveOp::kBroadcast || op == schema::CollectiveOp::kReduce ||
         op == schema::CollectiveOp::kGather || op == schema::CollectiveOp::kScatter;
}

// What a CollApi/P2pApi event tells about its call.
struct ApiFields {
  bool collective = false;  // CollApi (else P2pApi).
  const char* func = nullptr;
  size_t count = 0;
  const char* datatype = nullptr;
  int root = -1;
  void* stream = nullptr;
};

struct OpFields {
  schema::CollectiveOp op = schema::CollectiveOp::kUnspecified;
  uint64_t seq_number = 0;
  uint64_t count = 0;
  schema::DataType data_type = schema::DataType::kUnspecified;
  int32_t root_rank = -1;
  int32_t peer_rank = -1;
  uint8_t channels = 0;
  schema::NcclAlgorithm algorithm = schema::NcclAlgorithm::kUnspecified;
  schema::NcclProtocol protocol = schema::NcclProtocol::kUnspecified;
};

// API events (nccl_plugin_api.cc).
// The event NCCL starts on the user's thread inside a call (v5: the CollApi/P2pApi; v4: the
// Coll/P2p of an ungrouped call) marks the wrapper's call, if any, as this plugin's to record
// (nccl_channel.h), and settles this communicator's pending record: the lazy link when the
// wrapper's record is pending too (the wrapper writes the one record, with this comm id), else
// this record is written now. v4 keeps its pending record past events outside a call (a
// grouped call's Coll at ncclGroupEnd): a later ungrouped call may still link it.
void SeeCall(ProfilerContext* context);
// A CollApi/P2pApi started; its handle (0: no slot).
uint64_t StartApi(ProfilerContext* context, uint64_t parent, const ApiFields& fields);
void StopApi(EventSlot* api, uint64_t handle);
// Takes an API slot that stopped without a child; true: the caller retires it.
bool ClaimStoppedApi(EventSlot* api, uint32_t generation);
// An API slot nobody will link any more (its link word taken to kDone by this thread): written
// when it is the only record of its operation (a one-rank communicator), then freed. Into
// `sink` when there is one, else into this thread's ring.
void RetireUnlinkedApi(EventSlot* api, RecordSink* sink);
// Finalize: takes the API slot of generation `generation` whatever its state (see the .cc).
void SettleApiAtFinalize(EventSlot* api, uint32_t generation);
// A GroupApi started on this thread: the childless API events that follow inside it are
// remembered, and settled when it stops (on this thread; else the sweep takes them).
uint64_t StartGroupApi();
void StopGroupApi(uint64_t handle);
// Links operation `op` to its API parent, taking its host start, stream and thread (and its
// end, when the API already stopped). `base` = parts the operation has without a parent.
void LinkToApi(EventSlot* op, uint64_t op_handle, EventSlot* api, uint64_t api_handle,
               uint64_t base);

// Operations and their kernel channels (nccl_plugin_ops.cc).
// A Coll/P2p started (its handle; 0: no slot), linked to its API parent when it has one.
uint64_t StartOp(ProfilerContext* context, void* parent, const OpFields& fields);
// A KernelCh started (its handle: the operation's with kKernelHandleBit; 0: ignored).
uint64_t StartKernel(void* parent, uint64_t timer);
// Takes every outstanding part of `op` at once (sweep, finalize, final flush). With
// `only_stopped`, only an operation whose own stop came. True: the caller writes the record.
bool ClaimOp(EventSlot* op, uint32_t generation, bool only_stopped, int64_t idle_since);
// The record of an operation whose state word this thread took to 0, then frees its slot.
void TakeRecordAndRelease(EventSlot* op, Record* head, Record* extension);
// The same, into this thread's ring.
void EmitAndRelease(EventSlot* op);

// Inline, as before the split: every KernelCh stop and Coll/P2p stop takes one of these.
// Applies `change` to the state word of `op` (generation `generation`) unless the word is
// stale or already 0; the caller that takes it to 0 writes the record.
template <typename Change>
inline void UpdateOp(EventSlot* op, uint32_t generation, Change change) {
  uint64_t current = op->state.load(std::memory_order_acquire);
  while ((current >> 32) == generation && (current & 0xffffffff) != 0) {
    const uint64_t next = change(current);
    if (next == current) return;
    // acq_rel: every part's writes (end times, GPU timers) happen before the last part reads.
    if (op->state.compare_exchange_weak(current, next, std::memory_order_acq_rel,
                                        std::memory_order_acquire)) {
      if ((next & 0xffffffff) == 0) EmitAndRelease(op);
      return;
    }
  }
}

// One outstanding part (a kernel channel, the API parent's stop) of `op` is done.
inline void FinishPart(EventSlot* op, uint32_t generation) {
  UpdateOp(op, generation,
           [](uint64_t state) { return (state & (kOpStopPending - 1)) != 0 ? state - 1 : state; });
}
// The operation's own stop (NCCL: enqueued).
inline void FinishOwnStop(EventSlot* op, uint32_t generation) {
  UpdateOp(op, generation, [](uint64_t state) { return state & ~kOpStopPending; });
}

// What waits too long, and what a finalized communicator leaves (nccl_plugin_sweep.cc).
// Registers the writer's sweep (once per process).
void RegisterStaleEventSource(Agent& agent);
// Finalize: writes what still waits of `context`'s operations and settles its API events.
void SettleEventsAtFinalize(ProfilerContext* context);

}  // namespace lumos::agent::nccl_plugin
