// The shared file-name helpers: one path part out of any text, and a rename that never replaces
// a file (real files; the link + unlink fallback needs a file system without RENAME_NOREPLACE,
// which is not to be had here).
#include "agent/core/file_names.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

TEST(FileNamesTest, SafeFilePartKeepsOnePathPart) {
  EXPECT_EQ(SafeFilePart("job-4.2_x"), "job-4.2_x");
  EXPECT_EQ(SafeFilePart("a/../b c\n\xff"), "a_.._b_c__");
  EXPECT_EQ(TraceHostPart(""), "unknown");
  EXPECT_EQ(TraceHostPart("node/1"), "node_1");
}

TEST(FileNamesTest, RenameNoReplaceNeverReplaces) {
  TempDir dir;
  WriteFileBytes(dir.File("a"), "old");
  WriteFileBytes(dir.File("b"), "taken");
  int error = 0;
  EXPECT_EQ(RenameNoReplace(dir.File("a"), dir.File("b"), &error), "File exists");
  EXPECT_EQ(error, EEXIST);
  EXPECT_EQ(ReadFileBytes(dir.File("a")), "old");
  EXPECT_EQ(ReadFileBytes(dir.File("b")), "taken");
  EXPECT_EQ(RenameNoReplace(dir.File("a"), dir.File("c"), &error), "");
  EXPECT_EQ(error, 0);
  EXPECT_EQ(ReadFileBytes(dir.File("c")), "old");
  EXPECT_EQ(RenameNoReplace(dir.File("a"), dir.File("d"), &error), "No such file or directory");
  EXPECT_EQ(error, ENOENT);
  EXPECT_EQ(RenameNoReplace(dir.File("c"), dir.File("e")), "");  // Without `error`.
}

}  // namespace
}  // namespace lumos::agent
