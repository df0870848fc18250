// Design: which NCCL records on different ranks are one operation: the contract of
// NcclCollective.seq_number (schema/lumos/trace.proto), used by the graph builder (collective
// groups) and the clock alignment (matched ends).
//   Collectives: (comm id, op, seq number). NCCL numbers each communicator's collectives per
//     function (ncclComm::seqNumber[func]; the agent's plugin records it, its wrappers count the
//     same way), so AllGather #k and ReduceScatter #k of one communicator are different
//     operations. Imported traces count each communicator's operations over all functions; that
//     number is unique per op too, so the same key serves both.
//   Send/recv with a peer (the agent): the agent numbers them per communicator and direction on
//     the recording rank (NCCL has no p2p seq), which is not equal across ranks. NCCL matches a
//     pair's sends and receives in the order they were posted, so the key is (comm id, sender's
//     comm rank, receiver's comm rank, n): the n-th send from A to B pairs with the n-th receive
//     on B from A, n counted here in the rank's seq order among its ops with that peer. The
//     recording rank's own comm rank comes from its Communicator record; without exactly one, its
//     sends and receives on that communicator cannot be paired (no key). A lost send/recv record
//     (a full ring) shifts n for that rank's later ops with the same peer and direction: the
//     pairs after it are then wrong, which shows as inconsistent or incomplete groups.
//   Send/recv without a peer (imported traces, SendRecv kernels): (comm id, seq) over all of
//     them, the importer's per-communicator count.
// Threading: pure functions.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "modeler/graph/job.h"
#include "schema/enums.h"

namespace lumos::modeler {

struct CollectiveKey {
  enum class Kind : uint8_t { kCollective, kPointToPoint, kPointToPointBySeq };
  uint64_t comm_id = 0;
  // kCollective, kPointToPointBySeq: the seq number; kPointToPoint: n, the pair's ordinal.
  uint64_t ordinal = 0;
  Kind kind = Kind::kCollective;
  schema::CollectiveOp op = schema::CollectiveOp::kUnspecified;  // kCollective only.
  int32_t sender = -1;                                           // kPointToPoint: comm ranks.
  int32_t receiver = -1;

  // Communicator, then ordinal first: groups come out in the order of their seq numbers.
  auto operator<=>(const CollectiveKey&) const = default;

  // Records that must take part for the operation to be complete (comm_size: the communicator's).
  uint32_t ExpectedRecords(uint32_t comm_size) const {
    return kind == Kind::kPointToPoint ? 2 : comm_size;
  }
  // For diagnostics: "send/recv (comm 42, rank 0 -> 1, #3)", else "collective (comm 42, seq 3)".
  std::string Describe() const;
};

bool IsPointToPoint(schema::CollectiveOp op);

// The key of each of one rank's collectives (same index), given its Communicator records (only
// comm_id and rank are read); nullopt where it has none (a send/recv whose communicator gives
// no single comm rank for this rank).
std::vector<std::optional<CollectiveKey>> CollectiveKeys(
    const std::vector<schema::CollectiveEvent>& events,
    const std::vector<CommunicatorInfo>& communicators);
inline std::vector<std::optional<CollectiveKey>> CollectiveKeys(const RankTrace& rank) {
  return CollectiveKeys(rank.collectives, rank.communicators);
}

}  // namespace lumos::modeler
