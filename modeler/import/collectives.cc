// NCCL collectives and communicators of an imported trace, derived from its NCCL kernels.
//
// Kineto has no NCCL record of its own: each collective shows up as a device kernel, and
// newer PyTorch versions attach the c10d call's arguments to it (collective name, element
// count, dtype, group size, process-group name and ranks). The communicator of a kernel is
// identified by a hash of its process group (name + ranks), which is the same on every rank
// of the group; without those arguments it falls back to a hash of the kernel's stream: NCCL
// runs each communicator on a stream of its own, and ranks started the same way create their
// streams in the same order, so the stream id usually matches across ranks too. Sequence
// numbers count each communicator's kernels in GPU start order from 0, which lines up across
// ranks when all ranks profiled the same window.
#include <algorithm>
#include <numeric>
#include <string>

#include "modeler/import/kineto_trace.h"
#include "modeler/import/nccl_names.h"

namespace lumos::modeler::kineto {
namespace {

// FNV-1a: stable across runs, machines and library versions (std::hash is none of these).
uint64_t StableHash64(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash == 0 ? 1 : hash;  // 0 means "no communicator" in the schema.
}

struct Communicator {
  uint64_t comm_id = 0;
  std::string name;
  uint32_t comm_size = 0;
  uint32_t device_id = 0;
  std::vector<int32_t> global_ranks;
  uint64_t next_seq = 0;
};

// The communicator key of one kernel: its process group when known, else its stream.
std::string CommunicatorKey(const NcclKernel& k) {
  if (!k.pg_name.empty() || k.has_pg_ranks) {
    std::string key = "pg:" + std::string(k.pg_name) + ":";
    for (size_t i = 0; i < k.pg_ranks.size(); ++i) {
      if (i != 0) key += ',';
      key += std::to_string(k.pg_ranks[i]);
    }
    return key;
  }
  return "stream:" + std::to_string(k.stream_id);
}

std::string CommunicatorName(const NcclKernel& k) {
  if (!k.pg_desc.empty()) return std::string(k.pg_desc);
  if (!k.pg_name.empty()) return "pg " + std::string(k.pg_name);
  if (k.has_pg_ranks) return "pg";
  return "stream " + std::to_string(k.stream_id);
}

}  // namespace

void AddCollectives(KinetoTrace* trace) {
  std::vector<NcclKernel>& kernels = trace->nccl_kernels;
  // GPU start order; ties keep trace order, so the numbering is deterministic.
  std::vector<size_t> order(kernels.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return kernels[a].start_ns < kernels[b].start_ns; });
  const schema::HeaderInfo& header = trace->header;
  std::vector<Communicator> comms;  // In order of first use: deterministic output.
  std::map<std::string, size_t> comm_index;
  for (size_t i : order) {
    const NcclKernel& k = kernels[i];
    std::string key = CommunicatorKey(k);
    auto [it, inserted] = comm_index.emplace(key, comms.size());
    if (inserted) {
      Communicator c;
      c.comm_id = StableHash64(key);
      c.name = CommunicatorName(k);
      c.comm_size = k.group_size != 0 ? k.group_size : static_cast<uint32_t>(k.pg_ranks.size());
      c.device_id = k.device_id;
      c.global_ranks = k.pg_ranks;
      comms.push_back(std::move(c));
    }
    Communicator& comm = comms[it->second];

    NcclKernelInfo parsed = ParseNcclKernelName(k.name);
    schema::CollectiveEvent e;
    e.start_ns = k.start_ns;  // No host call is known: the packet time is the GPU start.
    e.comm_id = comm.comm_id;
    e.seq_number = comm.next_seq++;
    // The c10d name is more precise than the kernel's (all_to_all runs as SendRecv).
    schema::CollectiveOp named = CollectiveOpFromPytorchName(k.collective_name);
    e.op = named != schema::CollectiveOp::kUnspecified ? named : parsed.op;
    schema::DataType dtype = DataTypeFromScalarTypeName(k.dtype);
    e.data_type = !k.dtype.empty() ? dtype : parsed.data_type;
    uint32_t element_bytes =
        !k.dtype.empty() ? ScalarTypeBytes(k.dtype) : schema::DataTypeBytes(parsed.data_type);
    if (k.has_in_nelems) {
      e.count = k.in_nelems;
      e.bytes = k.in_nelems * element_bytes;  // 0 when the element size is unknown.
    }
    e.stream_id = k.stream_id;
    e.gpu_start_offset_ns = 0;
    e.gpu_duration_ns = k.duration_ns;
    e.algorithm = parsed.algorithm;
    e.protocol = parsed.protocol;
    e.channels = k.grid_x;  // NCCL launches one block per channel.
    e.device_id = k.device_id;
    e.reduce_op = parsed.reduce_op;
    e.correlation_id = k.correlation_id;
    e.comm_size = comm.comm_size;
    e.has_host_time = false;
    trace->events.emplace_back(e);
  }

  for (Communicator& c : comms) {
    schema::CommunicatorEvent e;
    // Creation time is unknown; the communicator existed by the start of the capture.
    e.start_ns = trace->start_ns;
    e.comm_id = c.comm_id;
    // Rank within the group: its position in the group's ranks when known; otherwise the
    // global rank, assuming the default group (the usual case for traces without c10d args).
    auto self = std::find(c.global_ranks.begin(), c.global_ranks.end(), header.rank);
    if (header.has_rank && self != c.global_ranks.end()) {
      e.rank = static_cast<int32_t>(self - c.global_ranks.begin());
    } else if (header.has_rank && c.global_ranks.empty()) {
      e.rank = header.rank;
    }
    e.comm_size = c.comm_size;
    e.device_id = c.device_id;
    e.name = trace->Own(c.name);
    e.global_ranks = std::move(c.global_ranks);
    trace->events.emplace_back(std::move(e));
  }
}

}  // namespace lumos::modeler::kineto
