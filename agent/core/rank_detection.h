// Design: which rank of a distributed job this process is, from the launcher's environment, for
// the trace header (the modeler groups ranks by job id and orders them by rank). Sources, in
// priority order (the first whose rank variable is set and valid wins; the other two fields come
// from the same source, so a process never mixes, say, torchrun's rank with SLURM's world size):
//   torchrun / torch.distributed   RANK, LOCAL_RANK, WORLD_SIZE
//   Open MPI (mpirun)              OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_LOCAL_RANK,
//                                  OMPI_COMM_WORLD_SIZE
//   SLURM (srun)                   SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS
// Validation: decimal integers; rank, local rank >= 0; world size >= 1; rank and local rank below
// the world size. A bad value gives one warning naming the variable, the value and what is used
// instead (the next source, or that field left unknown). Start-up only. Later, the NCCL world
// communicator's rank overrides this one for the file name and the trailer (agent_runtime.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/core/env_lookup.h"
#include "schema/writer/trace_events.h"

namespace lumos::agent {

struct RankInfo {
  std::optional<int32_t> rank;
  std::optional<int32_t> local_rank;
  std::optional<int32_t> world_size;
  std::string source;  // The rank variable used ("RANK", ...), or "" when none was usable.
  std::vector<std::string> warnings;
};

RankInfo DetectRank(const EnvLookup& env);

// Copies the known fields into the header (has_rank etc.).
void FillHeaderRank(const RankInfo& rank, schema::HeaderInfo* header);

}  // namespace lumos::agent
