#include "modeler/trace/gemm_link.h"

#include <algorithm>
#include <limits>

namespace lumos::modeler {

void GemmLinker::AddGemmCall(const schema::GemmCallEvent& call) {
  spans_.push_back({call.thread_id, call.start_ns,
                    schema::EventEndNs(call.start_ns, call.duration_ns), call.correlation_id,
                    call.return_code != 0});
}

void GemmLinker::AddApiCall(const schema::ApiCallEvent& call) {
  if (call.kind != schema::ApiKind::kLaunchKernel || call.correlation_id == 0) return;
  launches_.push_back({call.correlation_id, call.start_ns, call.thread_id});
}

void GemmLinker::Finish() {
  by_correlation_.clear();
  // Spans linked by span, ordered by (thread, start), with the running maximum of their ends
  // so a walk back for an enclosing call stops where no earlier one reaches the launch.
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < spans_.size(); ++i) {
    if (!spans_[i].failed && spans_[i].correlation_id == 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [this](uint32_t a, uint32_t b) {
    const Span &x = spans_[a], &y = spans_[b];
    return x.thread_id != y.thread_id ? x.thread_id < y.thread_id
           : x.start_ns != y.start_ns ? x.start_ns < y.start_ns
                                      : a < b;
  });
  std::vector<int64_t> max_end(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const Span& s = spans_[order[i]];
    const bool same_thread = i > 0 && spans_[order[i - 1]].thread_id == s.thread_id;
    max_end[i] = same_thread ? std::max(max_end[i - 1], s.end_ns) : s.end_ns;
  }
  for (const Launch& launch : launches_) {
    // The last span of the thread starting at or before the launch.
    auto after = std::upper_bound(
        order.begin(), order.end(), launch, [this](const Launch& l, uint32_t index) {
          const Span& s = spans_[index];
          return l.thread_id != s.thread_id ? l.thread_id < s.thread_id : l.start_ns < s.start_ns;
        });
    for (size_t i = static_cast<size_t>(after - order.begin()); i-- > 0;) {
      const Span& s = spans_[order[i]];
      if (s.thread_id != launch.thread_id || max_end[i] < launch.start_ns) break;
      if (s.end_ns >= launch.start_ns) {
        by_correlation_.emplace(launch.correlation_id, order[i]);
        break;
      }
    }
  }
  // A call that names its launch wins over a span.
  for (uint32_t i = 0; i < spans_.size(); ++i) {
    if (!spans_[i].failed && spans_[i].correlation_id != 0) {
      by_correlation_.insert_or_assign(spans_[i].correlation_id, i);
    }
  }
  launches_.clear();
  launches_.shrink_to_fit();
}

uint32_t GemmLinker::GemmOf(uint64_t correlation_id) const {
  if (correlation_id == 0) return kNoGemm;
  auto it = by_correlation_.find(correlation_id);
  return it != by_correlation_.end() ? it->second : kNoGemm;
}

std::vector<uint32_t> LinkKernelsToGemmCalls(const std::vector<schema::KernelEvent>& kernels,
                                             const std::vector<schema::ApiCallEvent>& api_calls,
                                             const std::vector<schema::GemmCallEvent>& gemm_calls) {
  std::vector<uint32_t> links(kernels.size(), kNoGemm);
  if (gemm_calls.empty()) return links;
  GemmLinker linker;
  for (const schema::GemmCallEvent& call : gemm_calls) linker.AddGemmCall(call);
  for (const schema::ApiCallEvent& call : api_calls) linker.AddApiCall(call);
  linker.Finish();
  for (size_t i = 0; i < kernels.size(); ++i) links[i] = linker.GemmOf(kernels[i].correlation_id);
  return links;
}

}  // namespace lumos::modeler
