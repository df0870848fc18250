// lumos_kernel_validation: the non-GEMM kernel model's validation tables (docs/validation.md,
// "Non-GEMM kernels") on the real traces in DIR (default ../shared/data/traces). Deterministic:
// no timing. The rules are modeler/models/kernels/kernel_validation.h; the test
// tests/modeler/models/kernels/kernel_validation_test.cc asserts what holds on the same numbers.
// Usage: lumos_kernel_validation [DIR]
#include "modeler/models/kernels/kernel_validation.h"

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  namespace models = lumos::modeler::models;
  const std::string dir = argc > 1 ? argv[1] : "../shared/data/traces";
  std::vector<models::TraceSetValidation> results;
  for (const models::KernelTraceSetFiles& files : models::SharedKernelTraceSets(dir)) {
    auto set = models::LoadKernelTraceSet(files.name, files.paths, models::SpecTable::Builtin());
    if (!set.ok()) {
      std::fprintf(stderr, "lumos_kernel_validation: %s\n", set.status().message().c_str());
      return 1;
    }
    auto result = models::ValidateKernelTraceSet(*set, models::kValidationSeed);
    if (!result.ok()) {
      std::fprintf(stderr, "lumos_kernel_validation: %s\n", result.status().message().c_str());
      return 1;
    }
    results.push_back(std::move(*result));
  }
  std::fputs(models::KernelValidationMarkdown(results).c_str(), stdout);
  return 0;
}
