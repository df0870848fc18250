#include "tests/testing/archives.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace lumos::testing {

std::string Gzip(const std::string& data) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string TarHeader(const std::string& name, uint64_t size, char type) {
  std::string h(512, '\0');
  std::memcpy(h.data(), name.data(), std::min<size_t>(name.size(), 100));
  std::snprintf(h.data() + 100, 8, "%07o", 0644);
  std::snprintf(h.data() + 108, 8, "%07o", 0);
  std::snprintf(h.data() + 116, 8, "%07o", 0);
  std::snprintf(h.data() + 124, 12, "%011llo", static_cast<unsigned long long>(size));
  std::snprintf(h.data() + 136, 12, "%011o", 0);
  h[156] = type;
  std::memcpy(h.data() + 257,
              "ustar\0"
              "00",
              8);
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(h.data() + 148, 8, "%06o", sum);
  return h;
}

std::string TarArchive(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string tar;
  for (const auto& [name, content] : files) {
    tar += TarHeader(name, content.size());
    tar += content;
    tar.append((512 - content.size() % 512) % 512, '\0');
  }
  tar.append(1024, '\0');
  return tar;
}

std::string GunzipFile(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  EXPECT_NE(file, nullptr) << path;
  if (file == nullptr) return "";
  std::string out;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0) out.append(buffer, n);
  EXPECT_EQ(n, 0) << path;
  gzclose(file);
  return out;
}

std::vector<std::pair<std::string, std::string>> Untar(const std::string& tar) {
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t offset = 0; offset + 512 <= tar.size();) {
    const char* h = tar.data() + offset;
    if (h[0] == '\0') break;
    uint64_t size = std::strtoull(std::string(h + 124, 12).c_str(), nullptr, 8);
    if (h[156] == '0' || h[156] == '\0') {
      files.emplace_back(std::string(h, strnlen(h, 100)), tar.substr(offset + 512, size));
    }
    offset += 512 + (size + 511) / 512 * 512;
  }
  return files;
}

}  // namespace lumos::testing
