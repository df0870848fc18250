// The layering of modeler/models/README.md, checked on the source tree: the base library
// (lumos_modeler_models: specs, tables, the GEMM model, the model of other kernels) includes
// nothing of the trace, graph, simulation or export code, nor the collective model, the
// kernels' trace-facing part or the model file above it. A file that
// breaks the rule is named with its line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace lumos::modeler::models {
namespace {

namespace fs = std::filesystem;

// The files of lumos_modeler_models (modeler/models/CMakeLists.txt), by name.
bool InBaseLibrary(const std::string& name) {
  for (const char* prefix :
       {"cost_table.", "dtype.", "gemm_fit.", "gemm_grid.", "gemm_model.", "gemm_roofline.",
        "gemm_validation.", "hardware_specs", "kernel_class.", "kernel_model.", "kernel_op_link.",
        "kernel_op_work.", "kernel_query.", "kernel_work.", "memory_model.", "text_file."}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

TEST(ModelsLayeringTest, TheBaseLibraryIncludesNoTraceGraphOrCollectiveCode) {
  const std::vector<std::string> forbidden = {"modeler/trace/",
                                              "modeler/graph/",
                                              "modeler/sim/",
                                              "modeler/export/",
                                              "modeler/report/",
                                              "modeler/import/",
                                              "modeler/models/collective_",
                                              "modeler/models/cost_model",
                                              "modeler/models/cost_queries",
                                              "modeler/models/cost_inputs"};
  std::vector<std::string> found;
  size_t files = 0;
  const fs::path dir = fs::path(LUMOS_SOURCE_DIR) / "modeler/models";
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || !InBaseLibrary(name)) continue;
    ++files;
    std::ifstream in(entry.path());
    int line_number = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_number;
      if (line.rfind("#include \"", 0) != 0) continue;
      for (const std::string& prefix : forbidden) {
        if (line.compare(10, prefix.size(), prefix) == 0) {
          found.push_back(name + ":" + std::to_string(line_number) + ": " + line);
        }
      }
    }
  }
  EXPECT_GE(files, 28u);
  EXPECT_EQ(found, std::vector<std::string>{});
}

}  // namespace
}  // namespace lumos::modeler::models
