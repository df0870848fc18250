// GPU time by name and class; see gpu_time.h.
#include "modeler/analysis/gpu_time.h"

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "schema/enums.h"

namespace lumos::modeler {
namespace {

// The GPU ops of one name in an iteration. Names are interned in the job's pool, so equal
// names share a pointer: keying by pointer avoids comparing long, prefix-sharing kernel names
// (memcmp was a hot spot, perf).
struct NameSum {
  std::string_view name;
  int64_t measured_ns = 0, replayed_ns = 0;
  uint64_t count = 0;
};

// The `top` names of `work` by measured time; `each`, when given, sees every name's sum.
std::vector<NamedTime> TopBy(const ExecutionGraph& g, const SimResult& sim,
                             const std::vector<uint32_t>& nodes, WorkClass work, size_t top,
                             const std::function<void(const NameSum&)>& each = nullptr) {
  std::unordered_map<const char*, NameSum> by_name;
  for (uint32_t node : nodes) {
    const Node& n = g.nodes[node];
    if (n.work != work) continue;
    NameSum& t = by_name[n.name.data()];
    t.name = n.name;
    t.measured_ns += n.duration_ns;
    if (sim.ran(node)) t.replayed_ns += sim.end_ns[node] - sim.start_ns[node];
    ++t.count;
  }
  std::vector<NameSum> sums;
  sums.reserve(by_name.size());
  for (const auto& [key, t] : by_name) {
    if (each) each(t);
    sums.push_back(t);
  }
  // Largest first; ties by name, so the order does not depend on the hash table.
  auto order = [](const NameSum& a, const NameSum& b) {
    return a.measured_ns != b.measured_ns ? a.measured_ns > b.measured_ns : a.name < b.name;
  };
  const size_t keep = std::min(top, sums.size());
  std::partial_sort(sums.begin(), sums.begin() + static_cast<ptrdiff_t>(keep), sums.end(), order);
  std::vector<NamedTime> v;
  v.reserve(keep);
  for (size_t i = 0; i < keep; ++i) {
    v.push_back(
        {std::string(sums[i].name), sums[i].measured_ns, sums[i].replayed_ns, sums[i].count});
  }
  return v;
}

constexpr int kCollectiveOps = 12;  // schema::CollectiveOp's values, 0..11.
#define LUMOS_INTERNAL_OP_NAME(name, number) "communication " #name,
constexpr const char* kCommunicationNames[kCollectiveOps] = {
    LUMOS_ENUM_COLLECTIVE_OP(LUMOS_INTERNAL_OP_NAME)};
#undef LUMOS_INTERNAL_OP_NAME
constexpr int kClassSlots = models::kKernelClassCount + kCollectiveOps;

constexpr int kCopySlots = kCopyDirectionCount;

// GPU time by class and copies by direction of an iteration's GPU ops, in fixed slots: a
// kernel's class, a collective's op, a copy's direction. Kernels come summed by name (TopBy),
// so each distinct name is classed once per iteration, not each kernel.
class ClassSlots {
 public:
  void AddKernels(const NameSum& s, models::KernelClassCache* classes) {
    Add(static_cast<int>(classes->Get(s.name)), s.count, s.measured_ns, s.replayed_ns);
  }
  // The collectives, copies and memsets among `nodes` (kernels: AddKernels).
  void AddOthers(const ExecutionGraph& g, const SimResult& sim,
                 const std::vector<uint32_t>& nodes) {
    for (uint32_t node : nodes) {
      const Node& n = g.nodes[node];
      if (n.work == WorkClass::kCompute) continue;
      const int64_t replayed = sim.ran(node) ? sim.end_ns[node] - sim.start_ns[node] : 0;
      if (n.work == WorkClass::kCommunication) {
        int op = 0;
        if (n.collective < g.collectives.size()) {
          op = static_cast<int>(g.collectives[n.collective].op);
          if (op >= kCollectiveOps) op = 0;
        }
        Add(models::kKernelClassCount + op, 1, n.duration_ns, replayed);
        continue;
      }
      const bool memset = n.kind == NodeKind::kMemset;
      Add(static_cast<int>(memset ? models::KernelClass::kMemset : models::KernelClass::kMemcpy), 1,
          n.duration_ns, replayed);
      int direction = memset ? kCopySlots - 1 : 0;
      uint64_t bytes = 0;
      if (n.copy < g.copies.size()) {  // A rewritten graph may not carry them.
        bytes = g.copies[n.copy].bytes;
        if (!memset) {
          direction = static_cast<int>(g.copies[n.copy].kind);
          if (direction >= kCopySlots - 1) direction = 0;
        }
      }
      CopyTime& d = by_direction_[direction];
      ++d.count;
      d.bytes += bytes;
      d.measured_ns += n.duration_ns;
      d.replayed_ns += replayed;
    }
  }
  void Emit(IterationReport* report) {
    report->gpu_classes.clear();
    for (int i = 0; i < kClassSlots; ++i) {
      if (by_class_[i].count == 0) continue;
      by_class_[i].name = i < models::kKernelClassCount
                              ? models::KernelClassName(static_cast<models::KernelClass>(i))
                              : kCommunicationNames[i - models::kKernelClassCount];
      if (i == models::kKernelClassCount) by_class_[i].name = "communication (op not recorded)";
      report->gpu_classes.push_back(by_class_[i]);
    }
    // Largest first; ties by name (slots are fixed, so this is deterministic).
    std::stable_sort(report->gpu_classes.begin(), report->gpu_classes.end(),
                     [](const ClassTime& a, const ClassTime& b) {
                       return a.measured_ns != b.measured_ns
                                  ? a.measured_ns > b.measured_ns
                                  : std::string_view(a.name) < std::string_view(b.name);
                     });
    report->copies.clear();
    for (int i = 0; i < kCopySlots; ++i) {
      if (by_direction_[i].count == 0) continue;
      by_direction_[i].direction = kCopyDirections[i];
      report->copies.push_back(by_direction_[i]);
    }
  }

 private:
  void Add(int slot, uint64_t count, int64_t measured_ns, int64_t replayed_ns) {
    ClassTime& c = by_class_[slot];
    c.count += count;
    c.measured_ns += measured_ns;
    c.replayed_ns += replayed_ns;
  }
  ClassTime by_class_[kClassSlots];
  CopyTime by_direction_[kCopySlots];
};

}  // namespace

void AddGpuTime(const ExecutionGraph& g, const SimResult& sim,
                const std::vector<uint32_t>& in_iteration, size_t top,
                models::KernelClassCache* classes, IterationReport* report) {
  ClassSlots slots;
  report->top_kernels = TopBy(g, sim, in_iteration, WorkClass::kCompute, top,
                              [&](const NameSum& s) { slots.AddKernels(s, classes); });
  report->top_collectives = TopBy(g, sim, in_iteration, WorkClass::kCommunication, top);
  slots.AddOthers(g, sim, in_iteration);
  slots.Emit(report);
}

}  // namespace lumos::modeler
