// lumos_costs_validation: the GEMM cost model's validation table (docs/validation.md, "Cost
// models"), on the measured tables in DIR (default ../shared/data/costs). Deterministic: no
// timing. The scenarios and their rules are modeler/models/gemm/gemm_validation.h; the test
// tests/modeler/models/gemm/gemm_validation_test.cc asserts the targets on the same numbers.
// Usage: lumos_costs_validation [DIR]
#include <cstdio>
#include <string>
#include <vector>

#include "modeler/models/gemm/gemm_validation.h"

int main(int argc, char** argv) {
  namespace models = lumos::modeler::models;
  const std::string dir = argc > 1 ? argv[1] : "../shared/data/costs";
  const models::SpecTable& specs = models::SpecTable::Builtin();
  struct Scenario {
    const char* name;
    const char* source;
    const char* target;  // nullptr: the same table's other half.
  };
  const Scenario scenarios[] = {
      {"H100 bf16, unseen half of the shapes", "gemm_h100_bf16.csv", nullptr},
      {"A100 bf16, unseen half of the shapes", "gemm_a100_bf16.csv", nullptr},
      {"H100 fp8, unseen half of the shapes", "gemm_h100_fp8.csv", nullptr},
      {"A100 bf16 → H100 bf16 (shared shapes)", "gemm_a100_bf16.csv", "gemm_h100_bf16.csv"},
      {"H100 bf16 → A100 bf16 (shared shapes)", "gemm_h100_bf16.csv", "gemm_a100_bf16.csv"},
      {"H100 bf16 → H100 fp8", "gemm_h100_bf16.csv", "gemm_h100_fp8.csv"},
  };
  std::vector<models::ValidationResult> results;
  for (const Scenario& s : scenarios) {
    auto result =
        s.target == nullptr
            ? models::ValidateSameGpu(dir + "/" + s.source, models::kValidationSeed, specs)
            : models::ValidateTransfer(dir + "/" + s.source, dir + "/" + s.target, specs);
    if (!result.ok()) {
      std::fprintf(stderr, "lumos_costs_validation: %s\n", result.status().message().c_str());
      return 1;
    }
    result->name = s.name;
    results.push_back(*result);
  }
  std::fputs(models::ValidationMarkdown(results).c_str(), stdout);
  return 0;
}
