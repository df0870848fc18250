// Design: test support for modeler/import. Builds inputs (gzip streams, tar archives:
// tests/testing/archives.h) and reads outputs back through the real TraceReader. The JSON and
// archive readers here are written independently of the library's (zlib's gzread, a ten-line
// tar walk, a plain simdjson count), so the tests compare the importer against a second
// implementation, not itself.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "modeler/trace/trace_reader.h"
#include "tests/testing/archives.h"

namespace lumos::modeler::kineto::testing {

namespace pb = ::lumos::trace;

// The archive builders and readers (tests/testing/archives.h), under their old names here.
using ::lumos::testing::GunzipFile;
using ::lumos::testing::Gzip;
using ::lumos::testing::TarArchive;
using ::lumos::testing::TarHeader;
using ::lumos::testing::Untar;

// Counts straight from Kineto JSON, by the categories the importer maps.
struct JsonCounts {
  uint64_t kernels = 0;
  uint64_t nccl_kernels = 0;  // Kernels whose name contains "nccl" (any case).
  uint64_t api_calls = 0;     // cuda_runtime + cuda_driver.
  uint64_t memcpys = 0;
  uint64_t memsets = 0;
  uint64_t syncs = 0;
  uint64_t host_ranges = 0;  // Every other complete ("X") event except the profiler span.
  uint64_t steps = 0;        // ProfilerStep#N.
  int64_t rank = -1;         // distributedInfo.rank.
};
JsonCounts CountJson(const std::string& json);

// One packet read back, with its absolute start time and resolved name.
struct ReadPacket {
  pb::TracePacket packet;
  int64_t start_ns = 0;
  std::string name;  // Of name_iid, where the packet has one.
};
struct ReadBack {
  pb::TraceHeader header;
  std::vector<ReadPacket> packets;
  ReadResult result;
  std::map<std::string, uint64_t> counts;  // By oneof field name: "kernel", "api_call", ...
  uint64_t Count(const std::string& kind) const {
    auto it = counts.find(kind);
    return it == counts.end() ? 0 : it->second;
  }
  std::vector<const ReadPacket*> Of(const std::string& kind) const;
};
// Reads `path` fully; test failures (not crashes) on unreadable or damaged files.
ReadBack ReadTrace(const std::string& path);

// The shared Kineto traces (read-only), next to the repository checkout.
std::string SharedTraceDir();

}  // namespace lumos::modeler::kineto::testing
