// Design: the fitted non-GEMM kernel calibrations (kernel_model.h) as a versioned JSON object,
// so a model file (`lumos-model costs fit -o MODEL.json`) can carry them, e.g. under a
// "kernels" key beside "gemm" and "collectives":
//   {"format": "lumos-kernel-model", "version": 1,
//    "calibrations": [{"gpu": "V100-SXM2-32GB", "class": "elementwise", "copy": "-",
//        "pageable": false, "dtype": "fp32",
//        "roofline": {"vector_flops_per_s", "matrix_flops_per_s", "hbm_bytes_per_s",
//                     "host_bytes_per_s", "peer_bytes_per_s"},
//        "efficiency": 0.612345678, "floor_ns": 2450, "kernels": 812,
//        "median_error": 0.081234}, ...]}
// A calibration carries the roofline figures it was fitted with, so a model answers the same
// whatever specs file is given later. Written in the model's order; efficiency with 9 decimals,
// figures as integers; the same model gives the same bytes. Reading checks format and version
// (a newer version is an error naming both; unknown keys are ignored, so later additions under
// the same version stay readable) and every value, an error naming the JSON path
// ("calibrations[2].efficiency: not a number").
// Threading: pure functions.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

#include "base/status.h"
#include "modeler/io/json_writer.h"
#include "modeler/models/kernels/kernel_model.h"

namespace lumos::modeler::models {

inline constexpr int kKernelModelVersion = 1;
inline constexpr const char kKernelModelFormat[] = "lumos-kernel-model";

// Writes the calibrations as one JSON value (after a Key(), inside an array, or as the document).
void WriteKernelModelJson(const KernelModel& model, io::JsonWriter* out);
// As a JSON document (one object, with a final newline).
std::string KernelModelJson(const KernelModel& model);

StatusOr<KernelModel> ReadKernelModelJson(const simdjson::dom::element& value);
StatusOr<KernelModel> ParseKernelModelJson(std::string_view text);

}  // namespace lumos::modeler::models
