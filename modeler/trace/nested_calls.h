// Design: one API call, one record. CUDA's runtime makes driver calls inside its own
// (cudaLaunchKernel calls cuLaunchKernel, cudaMemcpy cuMemcpyHtoD_v2), and CUPTI reports both
// with the same correlation id. The agent since issue 23 records only the runtime call; files
// of older agents (../shared/data/traces/h200-pytorch) hold both. Every reader counts such a
// driver call once, as the runtime call that made it: a DRIVER call on the same thread, with
// the same correlation id as a RUNTIME call, inside that call's span. A driver call the program
// makes itself (no runtime call of its correlation id around it) stays.
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "schema/writer/trace_events.h"

namespace lumos::modeler {

// What NestedDriverCalls needs of a call.
struct CallSpan {
  uint32_t thread_id = 0;
  uint64_t correlation_id = 0;
  schema::ApiDomain domain = schema::ApiDomain::kUnspecified;
  int64_t start_ns = 0, end_ns = 0;
};

// For each call, whether it is a driver call a runtime call made inside itself (above).
std::vector<bool> NestedDriverCalls(const std::vector<CallSpan>& calls);

// `calls` without the nested driver calls, in their order (a runtime call of kind OTHER takes
// its driver call's kind); returns how many it removed.
uint64_t RemoveNestedDriverCalls(std::vector<schema::ApiCallEvent>* calls);

}  // namespace lumos::modeler
