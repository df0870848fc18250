// Design: test support. Builds small traces with known content through the real writer, and
// temporary directories that clean up after themselves.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schema/writer/trace_file_writer.h"

namespace lumos::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

schema::HeaderInfo SampleHeader(int32_t rank = 0, int32_t world_size = 1);

// Writes `events` kernels (kernel i: correlation id i, start 1000 + 1000*i ns, duration 500)
// each launched by an api call (correlation i, start 900 + 1000*i, thread 7), with frames
// of about `frame_bytes`, and closes the file. Returns the writer's stats.
schema::WriterStats WriteSampleTrace(const std::string& path, uint64_t events,
                                     uint64_t frame_bytes = 4096);
// The same events as a killed writer leaves them: in whole frames, without the trailer (so
// frames appended to it are read, not "data after the trailer").
schema::WriterStats WriteUnclosedSampleTrace(const std::string& path, uint64_t events,
                                             uint64_t frame_bytes = 4096);

std::string ReadFileBytes(const std::string& path);
// The names in a directory, without "." and ".."; empty when it cannot be read.
std::vector<std::string> ListDir(const std::string& path);
void WriteFileBytes(const std::string& path, const std::string& bytes);

}  // namespace lumos::testing
