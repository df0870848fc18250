// lumos_collective_validation [--rows] [H100_CSV A100_CSV]: the collective model's validation
// tables (docs/validation.md, "Collective model";
// modeler/models/collectives/collective_validation.h), Markdown on stdout; --rows: every test row
// with its prediction instead (CSV). Defaults:
// ../shared/data/costs/nccl_{h100,a100}.csv from the repository root. Exit status: 0, or 1 with one
// line on stderr when a table cannot be read.
#include "modeler/models/collectives/collective_validation.h"

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  const bool rows = argc > 1 && std::string(argv[1]) == "--rows";
  const int first = rows ? 2 : 1;
  if (argc != first && argc != first + 2) {
    std::fprintf(stderr, "usage: %s [--rows] [H100_CSV A100_CSV]\n", argv[0]);
    return 2;
  }
  const std::string h100 = argc > first ? argv[first] : "../shared/data/costs/nccl_h100.csv";
  const std::string a100 = argc > first ? argv[first + 1] : "../shared/data/costs/nccl_a100.csv";
  const auto validation = lumos::modeler::models::ValidateCollectiveModel(h100, a100);
  if (!validation.ok()) {
    std::fprintf(stderr, "lumos_collective_validation: %s\n",
                 validation.status().message().c_str());
    return 1;
  }
  const std::string text =
      rows ? lumos::modeler::models::CollectiveValidationRowsCsv(validation.value())
           : lumos::modeler::models::CollectiveValidationMarkdown(validation.value());
  return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0
             ? 0
             : 1;
}
