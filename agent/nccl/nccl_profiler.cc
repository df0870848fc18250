#include "agent/nccl/nccl_profiler.h"

#include <atomic>
#include <cstdint>

#include "agent/core/counted_loss.h"
#include "agent/nccl/nccl_channel.h"
#include "agent/nccl/nccl_plugin_events.h"
#include "agent/runtime/agent_runtime.h"
#include "base/logging.h"
#include "schema/nccl_names.h"

// NCCL's v5 and v4 profiler ABI (nccl_profiler_abi.h) over the plugin's events
// (nccl_plugin_events.h): communicator contexts (init, finalize) and the event calls.
namespace lumos::agent::nccl_plugin {
namespace {

namespace abi = nccl_abi;

ProfilerContext* ContextOf(void* context) { return static_cast<ProfilerContext*>(context); }

// Claims a context and registers with the agent; may throw (the agent's start-up allocates).
ProfilerContext* ClaimContext(uint64_t comm_id, const char* comm_name, int nranks, int rank,
                              bool v5) {
  Agent& agent = Agent::Get();
  g_agent.store(&agent, std::memory_order_relaxed);
  RegisterStaleEventSource(agent);
  // As the wrappers do (the plugin may run without them): the largest names the trace's rank.
  agent.NoteCommunicator(rank, nranks);
  ProfilerContext* claimed = nullptr;
  for (ProfilerContext& candidate : g_contexts) {
    bool expected = false;
    if (candidate.in_use.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      claimed = &candidate;
      break;
    }
  }
  CommInitCapture& capture = t_comm_init_capture;
  if (claimed == nullptr) {
    // Counted, and only this communicator goes without events: the wrappers record its calls.
    CountLoss(CountedLoss::kNcclContexts);
    if (capture.active) capture.route = PluginRoute::kNone;
    return nullptr;
  }
  claimed->comm_id = comm_id;
  claimed->comm_size = nranks > 0 ? static_cast<uint32_t>(nranks) : 0;
  claimed->v4 = !v5;
  claimed->waits_for_kernels = true;
  claimed->send_seq.store(0, std::memory_order_relaxed);
  claimed->recv_seq.store(0, std::memory_order_relaxed);
  for (auto& seq : claimed->api_only_seq) seq.store(0, std::memory_order_relaxed);
  claimed->record_pending.store(false, std::memory_order_relaxed);
  if (!v5 && claimed->comm_size != 1) g_plugin_v4_contexts.fetch_add(1, std::memory_order_relaxed);
  if (capture.active) {
    // A wrapper is running this communicator's init: it writes the one Communicator record.
    capture.plugin_saw_init = true;
    capture.route = v5 ? PluginRoute::kV5 : PluginRoute::kV4;
    capture.plugin_comm_id = comm_id;
  } else if ((v5 || claimed->comm_size != 1) &&
             g_wrapper_records_pending.load(std::memory_order_relaxed) > 0) {
    // A wrapper created a communicator whose init it did not see (grouped or non-blocking):
    // this may be it. The record waits for the lazy link (nccl_channel.h). Not a v4 one-rank
    // communicator: NCCL gives it no Coll event to link at.
    claimed->rank = rank;
    claimed->name_id = InternCommName(comm_name != nullptr ? comm_name : "");
    claimed->record_pending.store(true, std::memory_order_release);
  } else {
    PushCommunicatorRecord(comm_id, 0, rank, claimed->comm_size, 0,
                           comm_name != nullptr ? comm_name : "");
  }
  return claimed;
}

std::atomic<bool> g_init_failed{false};

ncclResult_t InitContext(void** context, int* activation_mask, uint64_t comm_id,
                         const char* comm_name, int nranks, int rank, bool v5) noexcept {
  if (context == nullptr || activation_mask == nullptr) return ncclInvalidArgument;
  *context = nullptr;
  *activation_mask = 0;  // Nothing asked for unless the channel is on.
  if (g_init_failed.load(std::memory_order_relaxed)) return ncclSuccess;
  ProfilerContext* claimed = nullptr;
  try {
    // Between capture windows too: the communicator goes into every window's file.
    if (!NcclChannelRunning(schema::Channel::kNcclPlugin)) return ncclSuccess;
    claimed = ClaimContext(comm_id, comm_name, nranks, rank, v5);
  } catch (...) {
    // Never into NCCL: the channel goes off for good, with one warning.
    if (!g_init_failed.exchange(true)) {
      LUMOS_LOG(Warn, "nccl plugin: set-up failed with an exception; the plugin records nothing");
    }
    return ncclSuccess;
  }
  // The mask is NCCL's, shared by all its communicators: the same for every init, even one
  // without a context (its events then start with a null context and are ignored).
  uint64_t mask = abi::kProfileColl | abi::kProfileP2p | abi::kProfileKernelCh;
  if (v5) mask |= abi::kProfileGroupApi | abi::kProfileCollApi | abi::kProfileP2pApi;
  *activation_mask = static_cast<int>(mask);
  *context = claimed;
  return ncclSuccess;
}

ncclResult_t InitV5(void** context, uint64_t comm_id, int* activation_mask, const char* comm_name,
                    int /*nodes*/, int nranks, int rank, abi::DebugLogger /*log*/) noexcept {
  return InitContext(context, activation_mask, comm_id, comm_name, nranks, rank, /*v5=*/true);
}

ncclResult_t InitV4(void** context, int* activation_mask, const char* comm_name, uint64_t comm_hash,
                    int /*nodes*/, int nranks, int rank, abi::DebugLogger /*log*/) noexcept {
  return InitContext(context, activation_mask, comm_hash, comm_name, nranks, rank, /*v5=*/false);
}

OpFields CollFields(uint64_t seq_number, const char* func, size_t count, int root,
                    const char* datatype, uint8_t channels, const char* algorithm,
                    const char* protocol) {
  return OpFields{.op = schema::CollectiveOpFromNcclName(func),
                  .seq_number = seq_number,
                  .count = count,
                  .data_type = schema::DataTypeFromNcclName(datatype),
                  .root_rank = root,
                  .peer_rank = -1,
                  .channels = channels,
                  .algorithm = schema::AlgorithmFromNcclName(algorithm),
                  .protocol = schema::ProtocolFromNcclName(protocol)};
}

OpFields P2pFields(ProfilerContext* context, const char* func, size_t count, int peer,
                   const char* datatype, uint8_t channels) {
  const schema::CollectiveOp op = schema::CollectiveOpFromNcclName(func);
  std::atomic<uint64_t>& seq =
      op == schema::CollectiveOp::kRecv ? context->recv_seq : context->send_seq;
  return OpFields{.op = op,
                  .seq_number = seq.fetch_add(1, std::memory_order_relaxed),
                  .count = count,
                  .data_type = schema::DataTypeFromNcclName(datatype),
                  .root_rank = -1,
                  .peer_rank = peer,
                  .channels = channels};
}

ncclResult_t StartEventV5(void* context, void** handle, abi::EventDescrV5* descr) noexcept {
  if (handle == nullptr) return ncclSuccess;
  *handle = nullptr;
  ProfilerContext* ctx = ContextOf(context);
  if (ctx == nullptr || descr == nullptr || !Enabled()) return ncclSuccess;
  uint64_t result = 0;
  switch (descr->type) {
    case abi::kProfileGroupApi:
      result = StartGroupApi();
      break;
    case abi::kProfileCollApi: {
      const auto& c = descr->coll_api;
      result = StartApi(ctx, reinterpret_cast<uint64_t>(descr->parent),
                        {.collective = true,
                         .func = c.func,
                         .count = c.count,
                         .datatype = c.datatype,
                         .root = c.root,
                         .stream = c.stream});
      break;
    }
    case abi::kProfileP2pApi: {
      const auto& p = descr->p2p_api;
      result =
          StartApi(ctx, reinterpret_cast<uint64_t>(descr->parent),
                   {.func = p.func, .count = p.count, .datatype = p.datatype, .stream = p.stream});
      break;
    }
    case abi::kProfileColl: {
      const auto& c = descr->coll;
      result = StartOp(ctx, descr->parent,
                       CollFields(c.seq_number, c.func, c.count, c.root, c.datatype, c.channels,
                                  c.algorithm, c.protocol));
      break;
    }
    case abi::kProfileP2p: {
      const auto& p = descr->p2p;
      result = StartOp(ctx, descr->parent,
                       P2pFields(ctx, p.func, p.count, p.peer, p.datatype, p.channels));
      break;
    }
    case abi::kProfileKernelCh:
      result = StartKernel(descr->parent, descr->kernel_ch.timer);
      break;
    default:  // Not asked for.
      break;
  }
  // The handle is an opaque token to NCCL, never a pointer it dereferences.
  // NOLINTNEXTLINE(performance-no-int-to-ptr)
  *handle = reinterpret_cast<void*>(result);
  return ncclSuccess;
}

ncclResult_t StartEventV4(void* context, void** handle, abi::EventDescrV4* descr) noexcept {
  if (handle == nullptr) return ncclSuccess;
  *handle = nullptr;
  ProfilerContext* ctx = ContextOf(context);
  if (ctx == nullptr || descr == nullptr || !Enabled()) return ncclSuccess;
  uint64_t result = 0;
  switch (descr->type) {
    case abi::kProfileColl: {
      const auto& c = descr->coll;
      result = StartOp(ctx, nullptr,
                       CollFields(c.seq_number, c.func, c.count, c.root, c.datatype, c.channels,
                                  c.algorithm, c.protocol));
      break;
    }
    case abi::kProfileP2p: {
      const auto& p = descr->p2p;
      result =
          StartOp(ctx, nullptr, P2pFields(ctx, p.func, p.count, p.peer, p.datatype, p.channels));
      break;
    }
    case abi::kProfileKernelCh:
      result = StartKernel(descr->parent, descr->kernel_ch.timer);
      break;
    default:
      break;
  }
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an opaque token, as above.
  *handle = reinterpret_cast<void*>(result);
  return ncclSuccess;
}

ncclResult_t StopEvent(void* handle) noexcept {
  const uint64_t value = reinterpret_cast<uint64_t>(handle);
  if (value == 0) return ncclSuccess;
  if (IsGroupHandle(value)) {
    StopGroupApi(value);
    return ncclSuccess;
  }
  EventSlot* slot = Lookup(value & ~kKernelHandleBit);
  if (slot == nullptr) return ncclSuccess;
  const SlotType type = slot->type.load(std::memory_order_relaxed);
  const uint32_t generation = GenerationOf(value);
  if ((value & kKernelHandleBit) != 0) {
    if (type == SlotType::kOp) {
      slot->last_activity_ns.store(MonotonicNowNs(), std::memory_order_relaxed);
      FinishPart(slot, generation);
    }
  } else if (type == SlotType::kApi) {
    StopApi(slot, value);
  } else if (type == SlotType::kOp) {
    const int64_t now = MonotonicNowNs();
    slot->op_end_ns.store(now, std::memory_order_relaxed);  // Enqueued; published by the CAS.
    slot->last_activity_ns.store(now, std::memory_order_relaxed);
    FinishOwnStop(slot, generation);
  }
  return ncclSuccess;
}

ncclResult_t RecordEventState(void* handle, int state, abi::EventStateArgs* args) noexcept {
  const uint64_t value = reinterpret_cast<uint64_t>(handle);
  if ((value & kKernelHandleBit) == 0 || state != abi::kStateKernelChStop || args == nullptr) {
    return ncclSuccess;
  }
  EventSlot* op = Lookup(value & ~kKernelHandleBit);
  if (op != nullptr) AtomicMax(&op->gpu_stop, args->kernel_ch.timer);
  return ncclSuccess;
}

ncclResult_t Finalize(void* context) noexcept {
  ProfilerContext* ctx = ContextOf(context);
  if (ctx == nullptr) return ncclSuccess;
  SettleEventsAtFinalize(ctx);
  WritePendingContextRecord(ctx);  // A communicator that made no call.
  if (ctx->v4 && ctx->comm_size != 1) g_plugin_v4_contexts.fetch_sub(1, std::memory_order_relaxed);
  ctx->in_use.store(false, std::memory_order_release);
  return ncclSuccess;
}

}  // namespace
}  // namespace lumos::agent::nccl_plugin

extern "C" {
__attribute__((visibility("default"))) lumos::agent::nccl_abi::ProfilerV5 ncclProfiler_v5 = {
    "lumos",
    &lumos::agent::nccl_plugin::InitV5,
    &lumos::agent::nccl_plugin::StartEventV5,
    &lumos::agent::nccl_plugin::StopEvent,
    &lumos::agent::nccl_plugin::RecordEventState,
    &lumos::agent::nccl_plugin::Finalize,
};
__attribute__((visibility("default"))) lumos::agent::nccl_abi::ProfilerV4 ncclProfiler_v4 = {
    "lumos",
    &lumos::agent::nccl_plugin::InitV4,
    &lumos::agent::nccl_plugin::StartEventV4,
    &lumos::agent::nccl_plugin::StopEvent,
    &lumos::agent::nccl_plugin::RecordEventState,
    &lumos::agent::nccl_plugin::Finalize,
};
}
