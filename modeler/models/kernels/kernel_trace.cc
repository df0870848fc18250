#include "modeler/models/kernels/kernel_trace.h"

#include <map>
#include <unordered_map>

#include "modeler/models/kernels/kernel_class.h"
#include "modeler/models/kernels/kernel_op_link.h"

namespace lumos::modeler::models {
namespace {

CopyKind CopyOf(schema::CopyKind kind) {
  switch (kind) {
    case schema::CopyKind::kHtod:
      return CopyKind::kHostToDevice;
    case schema::CopyKind::kDtoh:
      return CopyKind::kDeviceToHost;
    case schema::CopyKind::kHtoh:
      return CopyKind::kHostToHost;
    case schema::CopyKind::kPtop:
      return CopyKind::kPeer;
    default:
      return CopyKind::kDeviceToDevice;
  }
}

}  // namespace

std::vector<TraceGpuWork> ClassifyRank(const RankTrace& rank) {
  struct Launch {
    uint32_t thread;
    int64_t start_ns, end_ns;
  };
  std::unordered_map<uint64_t, Launch> launches;
  launches.reserve(rank.api_calls.size());
  for (const schema::ApiCallEvent& call : rank.api_calls) {
    if (call.correlation_id == 0) continue;
    launches[call.correlation_id] = Launch{call.thread_id, call.start_ns,
                                           call.start_ns + static_cast<int64_t>(call.duration_ns)};
  }
  std::map<uint32_t, NestedRanges> ops;  // Per thread.
  for (size_t i = 0; i < rank.host_ranges.size(); ++i) {
    const schema::HostRangeEvent& r = rank.host_ranges[i];
    if (r.category != schema::HostRangeCategory::kCpuOp) continue;
    ops[r.thread_id].Add(r.start_ns, r.start_ns + static_cast<int64_t>(r.duration_ns),
                         static_cast<uint32_t>(i));
  }
  for (auto& [thread, ranges] : ops) ranges.Build();
  auto op_of = [&](uint64_t correlation) -> std::string_view {
    const auto launch = launches.find(correlation);
    if (launch == launches.end()) return {};
    const auto ranges = ops.find(launch->second.thread);
    if (ranges == ops.end()) return {};
    const int64_t i = ranges->second.Innermost(launch->second.start_ns, launch->second.end_ns);
    return i >= 0 ? rank.host_ranges[static_cast<size_t>(i)].name : std::string_view();
  };
  std::vector<TraceGpuWork> out;
  out.reserve(rank.kernels.size() + rank.memcpys.size() + rank.memsets.size());
  KernelClassCache classes;
  for (const schema::KernelEvent& k : rank.kernels) {
    TraceGpuWork w;
    w.name = k.name;
    w.op = op_of(k.correlation_id);
    w.key.kind = classes.Get(k.name, w.op);
    if (w.key.kind == KernelClass::kMemcpy) w.key.copy = CopyKind::kDeviceToDevice;
    w.start_ns = k.start_ns;
    w.duration_ns = static_cast<int64_t>(k.duration_ns);
    out.push_back(w);
  }
  for (const schema::MemcpyEvent& m : rank.memcpys) {
    TraceGpuWork w;
    w.key.kind = KernelClass::kMemcpy;
    w.key.copy = CopyOf(m.copy_kind);
    w.key.pageable =
        m.src_kind == schema::MemoryKind::kPageable || m.dst_kind == schema::MemoryKind::kPageable;
    w.op = op_of(m.correlation_id);
    w.start_ns = m.start_ns;
    w.duration_ns = static_cast<int64_t>(m.duration_ns);
    w.bytes = m.bytes;
    out.push_back(w);
  }
  for (const schema::MemsetEvent& m : rank.memsets) {
    TraceGpuWork w;
    w.key.kind = KernelClass::kMemset;
    w.op = op_of(m.correlation_id);
    w.start_ns = m.start_ns;
    w.duration_ns = static_cast<int64_t>(m.duration_ns);
    w.bytes = m.bytes;
    out.push_back(w);
  }
  return out;
}

std::array<int64_t, kKernelClassCount> TimeByClass(const std::vector<TraceGpuWork>& work) {
  std::array<int64_t, kKernelClassCount> time{};
  for (const TraceGpuWork& w : work) time[static_cast<size_t>(w.key.kind)] += w.duration_ns;
  return time;
}

}  // namespace lumos::modeler::models
