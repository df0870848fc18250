// The layering of modeler/models/README.md and docs/architecture.md, checked on the source tree:
// hardware/, query/, gemm/ and memory/ include nothing of the trace, graph, simulation, analysis
// or output code, nor the libraries above them (kernels/, collectives/, costs/); the model part
// of kernels/ includes no trace or graph code either; no cost model includes export/ or import/
// (JSON and file reading are modeler/io's); graph/ includes nothing of import/. A file that breaks
// a rule is named with its line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace lumos::modeler::models {
namespace {

namespace fs = std::filesystem;

// "path:line: #include ..." for every include, in the .h/.cc files under `dir` (recursively)
// whose name starts with one of `names` (all files when empty), of a path under `forbidden`.
std::vector<std::string> ForbiddenIncludes(const std::string& dir,
                                           const std::vector<std::string>& forbidden,
                                           const std::vector<std::string>& names = {},
                                           size_t* files = nullptr) {
  std::vector<std::string> found;
  const fs::path root = fs::path(LUMOS_SOURCE_DIR) / dir;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
    const std::string name = entry.path().filename().string();
    bool wanted = names.empty();
    for (const std::string& prefix : names) wanted = wanted || name.rfind(prefix, 0) == 0;
    if (!wanted) continue;
    if (files != nullptr) ++*files;
    std::ifstream in(entry.path());
    int line_number = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_number;
      if (line.rfind("#include \"", 0) != 0) continue;
      for (const std::string& prefix : forbidden) {
        if (line.compare(10, prefix.size(), prefix) == 0) {
          found.push_back(fs::relative(entry.path(), LUMOS_SOURCE_DIR).string() + ":" +
                          std::to_string(line_number) + ": " + line);
        }
      }
    }
  }
  return found;
}

const std::vector<std::string> kTraceAndAbove = {
    "modeler/trace/",  "modeler/graph/",  "modeler/sim/",     "modeler/analysis/",
    "modeler/replay/", "modeler/export/", "modeler/import/",  "modeler/structure/",
    "modeler/whatif/", "modeler/synth/",  "modeler/estimate/"};

TEST(ModelsLayeringTest, TheBaseLibrariesIncludeNoTraceGraphOrHigherModel) {
  std::vector<std::string> forbidden = kTraceAndAbove;
  for (const char* above :
       {"modeler/models/kernels/", "modeler/models/collectives/", "modeler/models/costs/"}) {
    forbidden.push_back(above);
  }
  size_t files = 0;
  for (const char* dir : {"modeler/models/hardware", "modeler/models/query", "modeler/models/gemm",
                          "modeler/models/memory"}) {
    EXPECT_EQ(ForbiddenIncludes(dir, forbidden, {}, &files), std::vector<std::string>{}) << dir;
  }
  EXPECT_GE(files, 20u);
}

TEST(ModelsLayeringTest, TheKernelModelItselfIncludesNoTraceOrGraph) {
  size_t files = 0;
  EXPECT_EQ(ForbiddenIncludes("modeler/models/kernels", kTraceAndAbove,
                              {"kernel_class.", "kernel_work.", "kernel_op_work.",
                               "kernel_op_link.", "kernel_model.", "kernel_table."},
                              &files),
            std::vector<std::string>{});
  EXPECT_EQ(files, 12u);
}

TEST(ModelsLayeringTest, NoCostModelIncludesExportOrImport) {
  EXPECT_EQ(ForbiddenIncludes("modeler/models", {"modeler/export/", "modeler/import/"}),
            std::vector<std::string>{});
}

TEST(ModelsLayeringTest, TheGraphIncludesNothingOfImport) {
  EXPECT_EQ(ForbiddenIncludes("modeler/graph", {"modeler/import/"}), std::vector<std::string>{});
}

}  // namespace
}  // namespace lumos::modeler::models
