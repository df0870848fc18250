// Driver calls made inside runtime calls; see nested_calls.h.
#include "modeler/trace/nested_calls.h"

#include <unordered_map>
#include <utility>

namespace lumos::modeler {
namespace {

struct PairHash {
  size_t operator()(const std::pair<uint32_t, uint64_t>& key) const {
    return std::hash<uint64_t>()(key.second * 0x9e3779b97f4a7c15ull ^ key.first);
  }
};

constexpr size_t kNotNested = ~size_t{0};

// For each call, the index of the runtime call it is nested in, or kNotNested.
std::vector<size_t> OuterCalls(const std::vector<CallSpan>& calls) {
  std::vector<size_t> outer_of(calls.size(), kNotNested);
  // Most traces have no driver calls at all (imports, synth, this agent's): no table for them.
  bool any_driver = false;
  for (const CallSpan& c : calls) any_driver = any_driver || c.domain == schema::ApiDomain::kDriver;
  if (!any_driver) return outer_of;
  // (thread, correlation id) -> the runtime calls of that key (one, unless ids were reused).
  std::unordered_multimap<std::pair<uint32_t, uint64_t>, size_t, PairHash> runtime;
  for (size_t i = 0; i < calls.size(); ++i) {
    const CallSpan& c = calls[i];
    if (c.domain == schema::ApiDomain::kRuntime && c.correlation_id != 0) {
      runtime.emplace(std::make_pair(c.thread_id, c.correlation_id), i);
    }
  }
  if (runtime.empty()) return outer_of;
  for (size_t i = 0; i < calls.size(); ++i) {
    const CallSpan& c = calls[i];
    if (c.domain != schema::ApiDomain::kDriver || c.correlation_id == 0) continue;
    auto [from, to] = runtime.equal_range({c.thread_id, c.correlation_id});
    for (auto it = from; it != to; ++it) {
      const CallSpan& outer = calls[it->second];
      if (outer.start_ns <= c.start_ns && c.end_ns <= outer.end_ns) {
        outer_of[i] = it->second;
        break;
      }
    }
  }
  return outer_of;
}

std::vector<CallSpan> SpansOf(const std::vector<schema::ApiCallEvent>& calls) {
  std::vector<CallSpan> spans;
  spans.reserve(calls.size());
  for (const schema::ApiCallEvent& a : calls) {
    spans.push_back({a.thread_id, a.correlation_id, a.domain, a.start_ns,
                     a.start_ns + static_cast<int64_t>(a.duration_ns)});
  }
  return spans;
}

}  // namespace

std::vector<bool> NestedDriverCalls(const std::vector<CallSpan>& calls) {
  std::vector<bool> nested(calls.size(), false);
  const std::vector<size_t> outer_of = OuterCalls(calls);
  for (size_t i = 0; i < calls.size(); ++i) nested[i] = outer_of[i] != kNotNested;
  return nested;
}

uint64_t RemoveNestedDriverCalls(std::vector<schema::ApiCallEvent>* calls) {
  const std::vector<size_t> outer_of = OuterCalls(SpansOf(*calls));
  for (size_t i = 0; i < calls->size(); ++i) {
    if (outer_of[i] == kNotNested) continue;
    // The driver call can say more about its runtime call (kind OTHER when only the driver
    // call is classified).
    schema::ApiCallEvent& outer = (*calls)[outer_of[i]];
    if (outer.kind == schema::ApiKind::kOther || outer.kind == schema::ApiKind::kUnspecified) {
      outer.kind = (*calls)[i].kind;
    }
  }
  size_t kept = 0;
  for (size_t i = 0; i < calls->size(); ++i) {
    if (outer_of[i] != kNotNested) continue;
    if (kept != i) (*calls)[kept] = (*calls)[i];
    ++kept;
  }
  const uint64_t removed = calls->size() - kept;
  calls->resize(kept);
  return removed;
}

}  // namespace lumos::modeler
