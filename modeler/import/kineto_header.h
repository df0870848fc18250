// Design: the trace-level facts of a Kineto document (everything outside traceEvents):
// distributedInfo (rank, world size, NCCL version), deviceProperties, CUDA/CUPTI versions and
// baseTimeNanoseconds. Private to modeler/import; see kineto_trace.h for the whole pipeline.
#pragma once

#include <cstdint>
#include <string>

#include "modeler/import/kineto_json.h"
#include "modeler/import/kineto_trace.h"

namespace lumos::modeler::kineto {

// Fills trace->header from the top-level keys of `root` and returns in `base_time_ns` the
// offset newer Kineto versions subtract from every timestamp (0 when absent).
Status ReadTraceMetadata(dom::object root, const std::string& name, KinetoTrace* trace,
                         int64_t* base_time_ns);

// Says what is inconsistent in the header once all of it is read (rank not below world_size).
void CheckTraceMetadata(const std::string& name, KinetoTrace* trace);

// "thread 2910249 (pt_main_thread)" → "pt_main_thread"; any other form is kept whole.
std::string_view ThreadNameFromKineto(std::string_view name);

}  // namespace lumos::modeler::kineto
