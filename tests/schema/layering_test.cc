// The layering in ../shared/DESIGN.md and README.md ("Layout"), checked on the source tree: the
// agent and the modeler never include each other; both stand on schema/ (the format, its writer)
// and base/, which include neither. A file that breaks the rule is named with its line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace lumos::schema {
namespace {

namespace fs = std::filesystem;

// "path:line: #include ..." for every include in the .h/.cc files under `dir` that names a file
// under one of `forbidden` (repository-rooted include paths, e.g. "agent/").
std::vector<std::string> ForbiddenIncludes(const std::string& dir,
                                           const std::vector<std::string>& forbidden) {
  std::vector<std::string> found;
  const fs::path root = fs::path(LUMOS_SOURCE_DIR) / dir;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
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

TEST(LayeringTest, TheModelerNeverIncludesTheAgent) {
  EXPECT_EQ(ForbiddenIncludes("modeler", {"agent/"}), std::vector<std::string>{});
}

TEST(LayeringTest, TheAgentNeverIncludesTheModeler) {
  EXPECT_EQ(ForbiddenIncludes("agent", {"modeler/"}), std::vector<std::string>{});
}

TEST(LayeringTest, SchemaAndBaseIncludeNeitherHalf) {
  EXPECT_EQ(ForbiddenIncludes("schema", {"agent/", "modeler/"}), std::vector<std::string>{});
  EXPECT_EQ(ForbiddenIncludes("base", {"agent/", "modeler/"}), std::vector<std::string>{});
}

}  // namespace
}  // namespace lumos::schema
