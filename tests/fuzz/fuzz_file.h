// Design: helpers shared by the trace fuzzers. FuzzFile is one scratch file per process that
// each input overwrites (a memfd, reached as /proc/self/fd/N so TraceReader::Open can take a
// path; a file under $TMPDIR where memfd_create is missing). ReadWholeTrace opens a trace and
// reads it both ways, ReadPackets (one packet per row and per column entry) and ReadFrames
// (column packets decoded into structs), touching what a real consumer touches, then once more
// with ReadPackets stopped halfway; it traps on a broken invariant of ReadResult or when the
// two ways disagree on what they delivered. Inputs of more than 2^18 packets (zstd bombs) are
// read that far only. Single-threaded, like libFuzzer's driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace lumos::fuzz {

class FuzzFile {
 public:
  FuzzFile();
  ~FuzzFile();
  FuzzFile(const FuzzFile&) = delete;
  FuzzFile& operator=(const FuzzFile&) = delete;

  // Replaces the file's content; false if the scratch file is unusable.
  bool Write(const uint8_t* data, size_t size);
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
  bool unlink_ = false;
};

void ReadWholeTrace(const std::string& path);

}  // namespace lumos::fuzz
