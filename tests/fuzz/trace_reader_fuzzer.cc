// libFuzzer target: arbitrary bytes as a whole trace file. The input is written to an
// in-memory temp file (memfd, or $TMPDIR when memfd is unavailable), opened with
// TraceReader::Open and read to the end with ReadPackets and with ReadFrames (the schema-2
// fast path that decodes column packets into structs), touching every event's time and
// interned strings; both must agree (see fuzz_file.h). The reader must return a Status for any
// input: never crash, hang, leak or read out of bounds (ASan + UBSan).
// Seeds: tests/data/fuzz_seeds/trace_reader/.
// Most mutations of a compressed file die at the zstd checksum; trace_packets_fuzzer.cc
// fuzzes the decompressed packet stream behind it.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "modeler/trace/trace_reader.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static lumos::fuzz::FuzzFile* const file = new lumos::fuzz::FuzzFile();  // Never destroyed.
  if (!file->Write(data, size)) return 0;
  lumos::fuzz::ReadWholeTrace(file->path());
  return 0;
}
