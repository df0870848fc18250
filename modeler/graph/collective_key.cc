#include "modeler/graph/collective_key.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

namespace lumos::modeler {

using schema::CollectiveOp;

bool IsPointToPoint(CollectiveOp op) {
  return op == CollectiveOp::kSend || op == CollectiveOp::kRecv || op == CollectiveOp::kSendRecv;
}

std::string CollectiveKey::Describe() const {
  const std::string comm = "comm " + std::to_string(comm_id);
  if (kind == Kind::kPointToPoint) {
    return "send/recv (" + comm + ", rank " + std::to_string(sender) + " -> " +
           std::to_string(receiver) + ", #" + std::to_string(ordinal) + ")";
  }
  // kPointToPointBySeq too: imported SendRecv kernels are often a collective (all_to_all).
  return "collective (" + comm + ", seq " + std::to_string(ordinal) + ")";
}

std::vector<std::optional<CollectiveKey>> CollectiveKeys(
    const std::vector<schema::CollectiveEvent>& events,
    const std::vector<CommunicatorInfo>& communicators) {
  std::vector<std::optional<CollectiveKey>> keys(events.size());
  // Sends and receives with a peer, per (comm, direction), to be numbered per peer below.
  std::map<std::pair<uint64_t, CollectiveOp>, std::vector<uint32_t>> directed;
  for (uint32_t i = 0; i < events.size(); ++i) {
    const schema::CollectiveEvent& e = events[i];
    CollectiveKey key;
    key.comm_id = e.comm_id;
    key.ordinal = e.seq_number;
    if (!IsPointToPoint(e.op)) {
      key.op = e.op;
      keys[i] = key;
    } else if (e.op != CollectiveOp::kSendRecv && e.peer_rank >= 0) {
      directed[{e.comm_id, e.op}].push_back(i);
    } else {
      key.kind = CollectiveKey::Kind::kPointToPointBySeq;
      keys[i] = key;
    }
  }
  if (directed.empty()) return keys;
  // This rank's comm rank per communicator; -1 where its records disagree.
  std::unordered_map<uint64_t, int32_t> self;
  for (const CommunicatorInfo& c : communicators) {
    auto [it, added] = self.emplace(c.comm_id, c.rank);
    if (!added && it->second != c.rank) it->second = -1;
  }
  for (auto& [where, indices] : directed) {
    auto me = self.find(where.first);
    if (me == self.end() || me->second < 0) continue;
    // seq order is the order the rank posted them (ties: recording order).
    std::stable_sort(indices.begin(), indices.end(), [&](uint32_t a, uint32_t b) {
      return events[a].seq_number < events[b].seq_number;
    });
    std::unordered_map<int32_t, uint64_t> next_with_peer;
    const bool send = where.second == CollectiveOp::kSend;
    for (uint32_t i : indices) {
      const int32_t peer = events[i].peer_rank;
      CollectiveKey key;
      key.comm_id = where.first;
      key.kind = CollectiveKey::Kind::kPointToPoint;
      key.ordinal = next_with_peer[peer]++;
      key.sender = send ? me->second : peer;
      key.receiver = send ? peer : me->second;
      keys[i] = key;
    }
  }
  return keys;
}

}  // namespace lumos::modeler
