// The NCCL call sequence every interposition workload runs (linked, dlopen'd, from Python): a
// fixed list of collectives so the tests know exactly what a trace must hold.
#pragma once

#include <nccl.h>

namespace lumos::testing {

// The NCCL entry points the sequence uses, so a caller can pass pointers it got any way.
struct NcclApi {
  decltype(&ncclCommInitRankConfig) init_rank_config;
  decltype(&ncclAllReduce) all_reduce;
  decltype(&ncclBroadcast) broadcast;
  decltype(&ncclBcast) bcast;
  decltype(&ncclReduce) reduce;
  decltype(&ncclAllGather) all_gather;
  decltype(&ncclReduceScatter) reduce_scatter;
  decltype(&ncclAlltoAll) all_to_all;
  decltype(&ncclGather) gather;
  decltype(&ncclScatter) scatter;
  decltype(&ncclSend) send;
  decltype(&ncclRecv) recv;
  decltype(&ncclGroupStart) group_start;
  decltype(&ncclGroupEnd) group_end;
  decltype(&ncclCommSplit) split;
  decltype(&ncclCommDestroy) destroy;
};

// The entry points as the including module links them. Internal linkage on purpose: each
// module (a program linked to libnccl, a library that NEEDs it and is dlopen'd RTLD_LOCAL) must
// take the addresses through its own relocations, never share one copy of this function.
[[maybe_unused]] static NcclApi LinkedNcclApi() {
  return {&ncclCommInitRankConfig,
          &ncclAllReduce,
          &ncclBroadcast,
          &ncclBcast,
          &ncclReduce,
          &ncclAllGather,
          &ncclReduceScatter,
          &ncclAlltoAll,
          &ncclGather,
          &ncclScatter,
          &ncclSend,
          &ncclRecv,
          &ncclGroupStart,
          &ncclGroupEnd,
          &ncclCommSplit,
          &ncclCommDestroy};
}

// The counts the tests check (see nccl_sequence.cc for the list).
inline constexpr int kSequenceWorldRanks = 4;
inline constexpr int kSequenceWorldOps = 12;
inline constexpr int kSequenceSubOps = 1;

// Runs the sequence as `rank` of a kSequenceWorldRanks communicator named "world" (ids from a
// fixed unique id, so separate processes agree), then splits it by rank % 2 and all-reduces
// on the half. Returns 0, or the first failing step's number.
int RunNcclSequence(const NcclApi& api, int rank);

}  // namespace lumos::testing
