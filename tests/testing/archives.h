// Design: test inputs in gzip and tar form, and a second reader of each, written independently
// of modeler/io's (zlib's gzread, a ten-line tar walk), so the tests of the readers and the
// importer compare against another implementation, not the library itself. Failures are gtest
// failures. Threading: no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lumos::testing {

std::string Gzip(const std::string& data);
// A ustar header block for `name` of `size` bytes; type '0' file, '5' directory, 'x' pax, 'L'.
std::string TarHeader(const std::string& name, uint64_t size, char type = '0');
// A whole archive: each (name, content) as a regular file, then the end-of-archive blocks.
std::string TarArchive(const std::vector<std::pair<std::string, std::string>>& files);

// zlib's own gzip reader, for whole files.
std::string GunzipFile(const std::string& path);
// Regular files of an uncompressed tar stream, in archive order.
std::vector<std::pair<std::string, std::string>> Untar(const std::string& tar);

}  // namespace lumos::testing
