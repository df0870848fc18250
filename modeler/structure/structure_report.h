// Design: `lumos-model structure`'s output: text (one screen: the setup with each value's
// origin and evidence, the parallel groups, per rank its iteration / phase / layer counts and
// mean times, what stays unknown, notes) or JSON (the same, plus every segment's extent and
// node count). Deterministic: the bytes are a function of the structure.
// Threading: pure functions.
#pragma once

#include <cstdio>
#include <string>

#include "base/status.h"
#include "modeler/structure/job_structure.h"

namespace lumos::modeler::structure {

struct StructureReport {
  std::string job_id;
  const JobStructure* structure = nullptr;
  std::vector<std::string> warnings;  // From loading (Job::warnings).
};

void WriteStructureText(const StructureReport& report, std::FILE* out);
// A failed write is an error (the caller reports it once).
Status WriteStructureJson(const StructureReport& report, std::FILE* out);

}  // namespace lumos::modeler::structure
