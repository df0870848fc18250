// Byte sources: plain files, gzip (large, concatenated, damaged), in-memory gzip.
#include "modeler/io/byte_source.h"

#include <gtest/gtest.h>

#include "tests/testing/archives.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::io {
namespace {

using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

std::string ReadAll(const std::string& path, Status* status) {
  auto source = OpenByteSource(path);
  if (!source.ok()) {
    *status = source.status();
    return "";
  }
  PaddedText text;
  *status = ReadRest(source->get(), &text);
  return std::string(text.view());
}

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7) % 26);
  return s;
}

TEST(ByteSourceTest, ReadsPlainAndGzipFilesAlike) {
  TempDir dir;
  const std::string data = Pattern(3 << 20);  // Larger than one input chunk.
  WriteFileBytes(dir.File("plain"), data);
  WriteFileBytes(dir.File("packed"), testing::Gzip(data));
  Status status;
  EXPECT_EQ(ReadAll(dir.File("plain"), &status), data);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(ReadAll(dir.File("packed"), &status), data);
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(ByteSourceTest, ReadsConcatenatedMembersAndIgnoresTrailingZeros) {
  TempDir dir;
  WriteFileBytes(dir.File("f"),
                 testing::Gzip("hello ") + testing::Gzip("world") + std::string(100, '\0'));
  Status status;
  EXPECT_EQ(ReadAll(dir.File("f"), &status), "hello world");
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(ByteSourceTest, ReportsTruncatedAndCorruptGzipWithOffsets) {
  TempDir dir;
  std::string gz = testing::Gzip(Pattern(100000));
  WriteFileBytes(dir.File("cut.gz"), gz.substr(0, gz.size() - 20));
  Status status;
  ReadAll(dir.File("cut.gz"), &status);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(dir.File("cut.gz")), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("truncated at byte"), std::string::npos) << status.message();

  std::string corrupt = gz;
  for (size_t i = 20; i < 60; ++i) corrupt[i] = static_cast<char>(0xff);
  WriteFileBytes(dir.File("bad.gz"), corrupt);
  ReadAll(dir.File("bad.gz"), &status);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("corrupt gzip data at byte"), std::string::npos)
      << status.message();
}

TEST(ByteSourceTest, RejectsMissingFilesAndDirectories) {
  TempDir dir;
  EXPECT_FALSE(OpenByteSource(dir.File("nope")).ok());
  auto directory = OpenByteSource(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("directory"), std::string::npos);
}

TEST(ByteSourceTest, GunzipsBuffers) {
  const std::string gz = testing::Gzip("in memory");
  PaddedText out;
  ASSERT_TRUE(GunzipBuffer(gz.data(), gz.size(), "m.gz", &out).ok());
  EXPECT_EQ(out.view(), "in memory");
  EXPECT_FALSE(GunzipBuffer(gz.data(), gz.size() / 2, "m.gz", &out).ok());
}

}  // namespace
}  // namespace lumos::modeler::io
