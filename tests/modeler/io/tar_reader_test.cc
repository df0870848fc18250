// The tar reader: ustar, GNU long names, pax paths, skipped bodies, damage.
#include "modeler/io/tar_reader.h"

#include <gtest/gtest.h>

#include "modeler/io/byte_source.h"
#include "tests/testing/archives.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::io {
namespace {

using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7) % 26);
  return s;
}

// Reads every regular file of an in-memory (optionally gzipped) archive through TarReader.
Status ReadTar(const std::string& bytes, std::vector<std::pair<std::string, std::string>>* out) {
  TempDir dir;
  WriteFileBytes(dir.File("a.tar"), bytes);
  LUMOS_ASSIGN_OR_RETURN(auto source, OpenByteSource(dir.File("a.tar")));
  std::string head(kTarBlock, '\0');
  LUMOS_ASSIGN_OR_RETURN(size_t n, ReadFully(source.get(), head.data(), kTarBlock));
  head.resize(n);
  if (n < kTarBlock || !IsTarHeader(head.data())) return ErrorStatus("not a tar");
  TarReader reader(source.get(), head);
  TarEntry entry;
  while (true) {
    LUMOS_ASSIGN_OR_RETURN(bool more, reader.Next(&entry));
    if (!more) return Status::Ok();
    PaddedText body;
    // Read every other body only: Next() must skip unread ones.
    if (out->size() % 2 == 0) LUMOS_RETURN_IF_ERROR(reader.ReadBody(&body));
    out->emplace_back(entry.name, std::string(body.view()));
  }
}

TEST(TarReaderTest, ReadsRegularFilesAndSkipsTheRest) {
  std::string tar =
      testing::TarHeader("d/", 0, '5') +
      testing::TarArchive(
          {{"d/a.json", "{\"a\": 1}"}, {"d/b.json", Pattern(1500)}, {"d/c.json", "ccc"}});
  std::vector<std::pair<std::string, std::string>> files;
  Status status = ReadTar(testing::Gzip(tar), &files);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0], std::make_pair(std::string("d/a.json"), std::string("{\"a\": 1}")));
  EXPECT_EQ(files[1].first, "d/b.json");  // Body skipped unread.
  EXPECT_EQ(files[2], std::make_pair(std::string("d/c.json"), std::string("ccc")));
}

TEST(TarReaderTest, TakesLongNamesFromGnuAndPaxEntries) {
  const std::string long_name = std::string(150, 'n') + ".json";
  const std::string gnu_body = long_name + '\0';
  std::string pax_record = "path=pax/" + long_name + "\n";
  pax_record = std::to_string(pax_record.size() + 4) + " " + pax_record;  // 3-digit length.
  auto padded = [](const std::string& s) {
    return s + std::string((512 - s.size() % 512) % 512, '\0');
  };
  std::string tar = testing::TarHeader("././@LongLink", gnu_body.size(), 'L') + padded(gnu_body) +
                    testing::TarHeader("truncated-name", 2) + padded("g1") +
                    testing::TarHeader("PaxHeader", pax_record.size(), 'x') + padded(pax_record) +
                    testing::TarHeader("short", 2) + padded("p1") + std::string(1024, '\0');
  std::vector<std::pair<std::string, std::string>> files;
  Status status = ReadTar(tar, &files);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].first, long_name);
  EXPECT_EQ(files[0].second, "g1");
  EXPECT_EQ(files[1].first, "pax/" + long_name);
}

TEST(TarReaderTest, ReportsDamageWithOffsets) {
  std::string tar = testing::TarArchive({{"a.json", Pattern(2000)}, {"b.json", "bb"}});
  std::vector<std::pair<std::string, std::string>> files;
  Status cut = ReadTar(tar.substr(0, 1000), &files);  // Inside a.json's body.
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.message().find("truncated"), std::string::npos) << cut.message();
  EXPECT_NE(cut.message().find("tar byte"), std::string::npos) << cut.message();

  std::string bad = tar;
  bad[2560 + 10] ^= 0x55;  // Second header (after 512 + 2048 bytes): checksum fails.
  files.clear();
  Status corrupt = ReadTar(bad, &files);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.message().find("tar byte 2560"), std::string::npos) << corrupt.message();
}

TEST(TarReaderTest, RecognisesHeaders) {
  std::string header = testing::TarHeader("x.json", 10);
  EXPECT_TRUE(IsTarHeader(header.data()));
  header[0] = 'y';
  EXPECT_FALSE(IsTarHeader(header.data()));
  std::string json = "{\"traceEvents\": []}" + std::string(512, ' ');
  EXPECT_FALSE(IsTarHeader(json.data()));
}

}  // namespace
}  // namespace lumos::modeler::io
