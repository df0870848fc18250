#include "tests/testing/sample_trace.h"

#include <dirent.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/logging.h"

namespace lumos::testing {

TempDir::TempDir() {
  const char* base = getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/lumos-test-XXXXXX";
  LUMOS_CHECK(mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

schema::HeaderInfo SampleHeader(int32_t rank, int32_t world_size) {
  schema::HeaderInfo h;
  h.agent_version = "test";
  h.producer = schema::Producer::kSynthetic;
  h.host_name = "testhost";
  h.pid = 100 + static_cast<uint32_t>(rank);
  h.job_id = "sample-job";
  h.has_rank = h.has_world_size = true;
  h.rank = rank;
  h.world_size = world_size;
  h.devices.push_back(
      {0, "NVIDIA H200", 132, 1980000, 3201000, 150ull << 30, "0000:18:00.0", 9, 0, "", 0});
  h.default_clock_id = schema::ClockId::kCupti;
  h.clock_domains.push_back({schema::ClockId::kCupti, "cupti", 1});
  return h;
}

namespace {

schema::WriterStats WriteSample(const std::string& path, uint64_t events, uint64_t frame_bytes,
                                bool close) {
  schema::WriterOptions options;
  options.frame_bytes = frame_bytes;
  auto writer = schema::TraceFileWriter::Create(path, SampleHeader(), options);
  LUMOS_CHECK(writer.ok());
  for (uint64_t i = 0; i < events; ++i) {
    schema::ApiCallEvent launch;
    launch.start_ns = static_cast<int64_t>(900 + 1000 * i);
    launch.duration_ns = 50;
    launch.thread_id = 7;
    launch.correlation_id = i;
    launch.kind = schema::ApiKind::kLaunchKernel;
    launch.name = "cudaLaunchKernel";
    (*writer)->Add(launch);
    schema::KernelEvent kernel;
    kernel.start_ns = static_cast<int64_t>(1000 + 1000 * i);
    kernel.duration_ns = 500;
    kernel.correlation_id = i;
    kernel.stream_id = 7 + i % 3;
    kernel.name = i % 2 ? "gemm_kernel" : "elementwise_kernel";
    (*writer)->Add(kernel);
  }
  if (!close) {
    // The file as it is before the trailer: what a killed writer leaves behind.
    LUMOS_CHECK((*writer)->Flush().ok());
    std::string written = ReadFileBytes(path);
    schema::WriterStats stats = (*writer)->stats();
    writer->reset();
    WriteFileBytes(path, written);
    return stats;
  }
  LUMOS_CHECK((*writer)->Close(1000 + 1000 * events).ok());
  return (*writer)->stats();
}

}  // namespace

schema::WriterStats WriteSampleTrace(const std::string& path, uint64_t events,
                                     uint64_t frame_bytes) {
  return WriteSample(path, events, frame_bytes, /*close=*/true);
}

schema::WriterStats WriteUnclosedSampleTrace(const std::string& path, uint64_t events,
                                             uint64_t frame_bytes) {
  return WriteSample(path, events, frame_bytes, /*close=*/false);
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return names;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  return names;
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace lumos::testing
