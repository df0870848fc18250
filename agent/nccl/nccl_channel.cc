#include "agent/nccl/nccl_channel.h"

#include "agent/core/thread_rings.h"
#include "agent/runtime/agent_runtime.h"
#include "base/logging.h"

namespace lumos::agent {
namespace {

// Per channel: 0 = not decided yet, 1 = on, 2 = off.
std::atomic<int> g_plugin_state{0};
std::atomic<int> g_wrappers_state{0};

int DecideOrThrow(schema::Channel channel) {
  Agent& agent = Agent::Get();
  agent.LoadConfig();
  if (!agent.config().enabled || !agent.config().channels.Has(channel)) return 2;
  return agent.Start() ? 1 : 2;
}

// Runs inside NCCL's calls (a wrapper, the plugin's init): no exception may escape into NCCL.
int Decide(schema::Channel channel) {
  try {
    return DecideOrThrow(channel);
  } catch (...) {
    LUMOS_LOG(Warn, "nccl: %s set-up failed with an exception; that channel is off",
              channel == schema::Channel::kNcclPlugin ? "profiler plugin" : "wrappers");
    return 2;
  }
}

}  // namespace

namespace {

bool ChannelDecidedOn(schema::Channel channel) {
  std::atomic<int>& state =
      channel == schema::Channel::kNcclPlugin ? g_plugin_state : g_wrappers_state;
  int value = state.load(std::memory_order_relaxed);
  if (value == 0) {
    // Racing first calls decide the same way (Start() is call_once); either store wins.
    value = Decide(channel);
    state.store(value, std::memory_order_relaxed);
  }
  return value == 1;
}

}  // namespace

bool NcclChannelOn(schema::Channel channel) {
  return ChannelDecidedOn(channel) && Agent::Get().enabled().enabled();
}

bool NcclChannelRunning(schema::Channel channel) {
  return ChannelDecidedOn(channel) && Agent::Get().running().enabled();
}

uint32_t InternCommName(std::string_view name) {
  return name.empty() ? 0 : Agent::Get().strings().Intern(name);
}

void PushCommunicatorRecord(uint64_t comm_id, uint64_t parent_comm_id, int32_t rank,
                            uint32_t comm_size, uint32_t device_id, std::string_view name) {
  if (Agent::Get().rings() == nullptr) return;
  PushCommunicatorRecordNamed(comm_id, parent_comm_id, rank, comm_size, device_id,
                              InternCommName(name));
}

void PushCommunicatorRecordNamed(uint64_t comm_id, uint64_t parent_comm_id, int32_t rank,
                                 uint32_t comm_size, uint32_t device_id, uint32_t name_id) {
  Agent& agent = Agent::Get();
  ThreadRings* rings = agent.rings();
  if (rings == nullptr) return;
  Record record{};
  record.kind = RecordKind::kCommunicator;
  record.start_ns = MonotonicNowNs();
  record.end_ns = record.start_ns;
  record.device_id = static_cast<uint16_t>(device_id);
  ThreadRing* ring = rings->CurrentThreadRing();
  record.thread_id = ring->thread_id();
  record.payload.communicator = {.comm_id = comm_id,
                                 .parent_comm_id = parent_comm_id,
                                 .rank = rank,
                                 .comm_size = comm_size,
                                 .name_id = name_id};
  ring->Push(record);
}

void PushCollectiveRecord(Record* head, const Record& extension) {
  ThreadRings* rings = Agent::Get().rings();
  if (rings == nullptr) return;
  ThreadRing* ring = rings->CurrentThreadRing();
  if (head->thread_id == 0) head->thread_id = ring->thread_id();
  ring->Push(*head, extension);
}

}  // namespace lumos::agent
