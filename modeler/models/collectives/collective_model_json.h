// Design: a fitted collective model (collective_model.h) as a JSON object, so a model file
// (`lumos-model costs fit -o MODEL.json`) can carry it, e.g. under a "collectives" key:
//   {"format": "lumos-collective-model", "version": 1,
//    "fabric": {"name", "gpus_per_node", "intra_bandwidth_gbps", ...},
//    "operations": {"all_reduce": {"points", "rank_counts", "min_bytes", "max_bytes",
//        "rms_error", "protocols": {"LL": {"base_ns", "step_ns", "local_ps_per_byte",
//        "link_ps_per_byte", "points"}, "LL128": ..., "Simple": ...},
//        "nvls": {"base_ns", "efficiency", "points"}}, ... every operation},
//    "origins": ["nccl_h100.csv (H100-SXM5-80GB)", ...],
//    "measurements": [{"op", "dtype", "ranks", "nodes", "bytes", "time_ns", "algorithm",
//        "protocol", "origin", "repeats"}, ...]}
// Parameters are written with 6 decimals (ns, ps per byte: far below any measurement's
// precision), integers exactly. Reading checks the format and version (a newer version is an
// error naming both; unknown keys are ignored, so later minor additions stay readable) and
// every value it uses; an error names the JSON path ("operations.all_reduce.protocols.LL:
// base_ns is not a number").
// Threading: pure functions.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

#include "base/status.h"
#include "modeler/io/json_writer.h"
#include "modeler/models/collectives/collective_model.h"

namespace lumos::modeler::models {

inline constexpr int kCollectiveModelVersion = 1;

// Writes the model as one JSON value (after a Key(), inside an array, or as the document).
void WriteCollectiveModelJson(const CollectiveModel& model, io::JsonWriter* out);
// The model as a JSON document (one object, with a final newline).
std::string CollectiveModelJson(const CollectiveModel& model);

StatusOr<CollectiveModel> ReadCollectiveModelJson(const simdjson::dom::element& value);
StatusOr<CollectiveModel> ParseCollectiveModelJson(std::string_view text);

}  // namespace lumos::modeler::models
