// Roles of communicators, from the collectives on them (first rule that fits):
//   tensor    all-reduce / all-gather / reduce-scatter inside forward layers, or in the
//             forward phase (layers unknown): Megatron's tensor-parallel collectives run in
//             every layer (the backward's layers may hold data-parallel gradient buckets);
//   data      all-reduce / reduce-scatter in or after the backward phase (gradients), or, with
//             no phases known, any all-reduce / reduce-scatter;
//   expert    all-to-all (NCCL's; send/recv run as one operation on more than 2 ranks; or
//             send/recv with more than one peer per rank);
//   pipeline  send / recv with one peer per direction (recorded peers, or operations joining
//             two loaded ranks; with neither, a send/recv is unknown: pipeline or all-to-all);
//   world     a communicator of all ranks with no collective in any iteration, or only
//             broadcasts (init, barriers);
//   unknown   otherwise.
#include <algorithm>
#include <map>
#include <set>

#include "modeler/structure/structure_internal.h"

namespace lumos::modeler::structure::internal {
namespace {

using schema::CollectiveOp;

bool IsReduce(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter ||
         op == CollectiveOp::kAllGather || op == CollectiveOp::kReduce;
}
bool IsP2p(CollectiveOp op) {
  return op == CollectiveOp::kSend || op == CollectiveOp::kRecv || op == CollectiveOp::kSendRecv;
}

struct Tally {
  uint64_t forward_reduce = 0, layer_reduce = 0, backward_reduce = 0, any_reduce = 0;
  uint64_t all_to_all = 0, p2p = 0, p2p_pairs = 0, broadcast = 0, in_iterations = 0, all = 0;
  std::map<int32_t, std::set<int32_t>> peers;  // Per global rank: its p2p peers.
};

std::string Count(uint64_t n, const char* what) { return std::to_string(n) + " " + what; }

}  // namespace

std::vector<CommGroup> FindGroups(const Job& job, const ExecutionGraph& g,
                                  const std::vector<NodeInfo>& nodes,
                                  const std::vector<uint8_t>& in_iteration, bool phases_known,
                                  bool layers_known) {
  std::map<uint64_t, CommGroup> groups;
  std::map<uint64_t, Tally> tallies;
  int32_t world = 0;
  for (const RankTrace& rank : job.ranks) {
    world = std::max({world, rank.world_size, rank.trailer_world_size});
    for (const CommunicatorInfo& c : rank.communicators) {
      CommGroup& group = groups[c.comm_id];
      group.comm_id = c.comm_id;
      group.size = std::max(group.size, c.comm_size);
      group.ranks.push_back(rank.rank);
    }
    for (const schema::CollectiveEvent& c : rank.collectives) {
      CommGroup& group = groups[c.comm_id];
      group.comm_id = c.comm_id;
      group.size = std::max(group.size, c.comm_size);
      group.ranks.push_back(rank.rank);
      if (c.peer_rank >= 0) tallies[c.comm_id].peers[rank.rank].insert(c.peer_rank);
    }
  }
  for (const CollectiveGroup& c : g.collectives) {
    CommGroup& group = groups[c.comm_id];
    group.comm_id = c.comm_id;
    group.operations += c.operations;
    group.bytes += c.bytes * c.operations;
    Tally& t = tallies[c.comm_id];
    t.all += c.operations;
    Phase phase = Phase::kOther;
    bool in_layer = false, inside = false;
    for (uint32_t n : c.nodes) {
      if (nodes[n].phase != Phase::kOther) phase = nodes[n].phase;
      in_layer = in_layer || nodes[n].layer != kNoLayer;
      inside = inside || in_iteration[n] != 0;
    }
    t.in_iterations += inside ? c.operations : 0;
    if (IsReduce(c.op)) {
      t.any_reduce += c.operations;
      if (in_layer && phase == Phase::kForward) t.layer_reduce += c.operations;
      if (phase == Phase::kForward) t.forward_reduce += c.operations;
      if (phase == Phase::kBackward || phase == Phase::kOptimizer) {
        t.backward_reduce += c.operations;
      }
    } else if (c.op == CollectiveOp::kAllToAll || (IsP2p(c.op) && c.nodes.size() > 2)) {
      // NCCL runs an all-to-all as grouped send/recv too, one kernel on every rank at once
      // (DLRM's embeddings); a pipeline's send/recv joins two ranks.
      t.all_to_all += c.operations;
    } else if (IsP2p(c.op)) {
      t.p2p += c.operations;
      t.p2p_pairs += c.complete && c.nodes.size() == 2 ? c.operations : 0;
    } else if (c.op == CollectiveOp::kBroadcast) {
      t.broadcast += c.operations;
    }
  }
  std::vector<CommGroup> out;
  for (auto& [id, group] : groups) {
    std::sort(group.ranks.begin(), group.ranks.end());
    group.ranks.erase(std::unique(group.ranks.begin(), group.ranks.end()), group.ranks.end());
    group.size_recorded = group.size > 0;
    group.size = std::max<uint32_t>(group.size, static_cast<uint32_t>(group.ranks.size()));
    const Tally& t = tallies[id];
    size_t most_peers = 0;
    for (const auto& [rank, peers] : t.peers) most_peers = std::max(most_peers, peers.size());
    if (t.layer_reduce > 0 || (!layers_known && t.forward_reduce > 0)) {
      group.role = GroupRole::kTensor;
      group.evidence =
          t.layer_reduce > 0
              ? Count(t.layer_reduce, "all-reduce/all-gather/reduce-scatter inside forward layers")
              : Count(t.forward_reduce, "all-reduce/all-gather/reduce-scatter in forward");
    } else if (t.backward_reduce > 0 || (!phases_known && t.any_reduce > 0)) {
      group.role = GroupRole::kData;
      group.evidence =
          t.backward_reduce > 0
              ? Count(t.backward_reduce, "all-reduce/reduce-scatter in or after backward")
              : Count(t.any_reduce, "all-reduce/reduce-scatter (phases unknown)");
    } else if (t.all_to_all > 0 || (t.p2p > 0 && most_peers > 1)) {
      group.role = GroupRole::kExpert;
      group.evidence = t.all_to_all > 0 ? Count(t.all_to_all, "all-to-all")
                                        : Count(t.p2p, "send/recv with up to ") +
                                              std::to_string(most_peers) + " peers per rank";
    } else if (t.p2p > 0 && (most_peers == 1 || t.p2p_pairs > 0)) {
      group.role = GroupRole::kPipeline;
      group.evidence = Count(t.p2p, "send/recv, one peer per rank");
    } else if (t.p2p > 0) {
      group.evidence = Count(t.p2p, "send/recv") +
                       " whose peers are neither recorded nor loaded: pipeline or all-to-all";
    } else if (world > 0 && group.size == static_cast<uint32_t>(world) &&
               (t.in_iterations == 0 || t.broadcast == t.all)) {
      group.role = GroupRole::kWorld;
      group.evidence = t.all == 0 ? "all ranks, no traced collective"
                                  : "all ranks, " + Count(t.all, "collectives") +
                                        " outside iterations or broadcasts only";
    } else {
      group.evidence = t.all == 0 ? "no traced collective"
                                  : Count(t.all, "collectives") + " fitting no role's pattern";
    }
    // Other traffic on the same communicator (DLRM: embedding all-to-all over the data
    // parallel ranks), said beside the role.
    if (group.role == GroupRole::kData && (t.all_to_all > 0 || (t.p2p > 0 && most_peers > 1))) {
      group.evidence += "; also " + Count(t.all_to_all + t.p2p, "all-to-all") +
                        " (not counted as expert parallelism)";
    }
    if (group.role == GroupRole::kData && t.forward_reduce > 0) {
      group.evidence += "; also " + Count(t.forward_reduce, "in forward");
    }
    out.push_back(std::move(group));
  }
  return out;
}

void SetCoordinates(const Job& job, const std::vector<CommGroup>& groups,
                    std::vector<RankStructure>* ranks) {
  for (RankStructure& rs : *ranks) {
    const RankTrace& trace = job.ranks[rs.rank_index];
    for (const CommGroup& group : groups) {
      int32_t* coordinate = nullptr;
      switch (group.role) {
        case GroupRole::kData:
          coordinate = &rs.dp_rank;
          break;
        case GroupRole::kTensor:
          coordinate = &rs.tp_rank;
          break;
        case GroupRole::kPipeline:
          coordinate = &rs.pp_rank;
          break;
        case GroupRole::kContext:
          coordinate = &rs.cp_rank;
          break;
        case GroupRole::kExpert:
          coordinate = &rs.ep_rank;
          break;
        default:
          break;
      }
      if (coordinate == nullptr || *coordinate >= 0) continue;
      // The communicator's own rank where recorded, else the index among the ranks seen.
      for (const CommunicatorInfo& c : trace.communicators) {
        if (c.comm_id == group.comm_id) *coordinate = c.rank;
      }
      if (*coordinate < 0) {
        auto at = std::find(group.ranks.begin(), group.ranks.end(), rs.rank);
        if (at != group.ranks.end() && group.ranks.size() == group.size) {
          *coordinate = static_cast<int32_t>(at - group.ranks.begin());
        }
      }
    }
  }
}

}  // namespace lumos::modeler::structure::internal
