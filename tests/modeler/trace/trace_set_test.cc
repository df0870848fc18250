#include "modeler/trace/trace_set.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

TEST(TraceSetTest, ExpandsFilesDirectoriesAndGlobsSortedOnce) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("job/sub"));
  WriteFileBytes(dir.File("job/r1.pb.zst"), "x");
  WriteFileBytes(dir.File("job/r0.pb.zst"), "x");
  WriteFileBytes(dir.File("job/sub/r2.pb.zst"), "x");
  WriteFileBytes(dir.File("job/notes.txt"), "x");
  auto paths =
      ExpandTracePaths({dir.File("job"), dir.File("job/r*.pb.zst"), dir.File("job/r0.pb.zst")});
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  EXPECT_EQ(*paths, (std::vector<std::string>{dir.File("job/r0.pb.zst"), dir.File("job/r1.pb.zst"),
                                              dir.File("job/sub/r2.pb.zst")}));
}

TEST(TraceSetTest, NothingMatchingIsAnError) {
  TempDir dir;
  EXPECT_FALSE(ExpandTracePaths({dir.File("missing.pb.zst")}).ok());
  EXPECT_FALSE(ExpandTracePaths({dir.File("*.pb.zst")}).ok());
  auto empty_dir = ExpandTracePaths({dir.path()});
  ASSERT_FALSE(empty_dir.ok());
  EXPECT_NE(empty_dir.status().message().find("no *.pb.zst files"), std::string::npos);
}

}  // namespace
}  // namespace lumos::modeler
