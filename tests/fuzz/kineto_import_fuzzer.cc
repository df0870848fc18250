// libFuzzer target: arbitrary bytes as a PyTorch profiler (Kineto) JSON document, converted by
// the importer (kineto::ConvertKinetoText) into a trace file, which is then read back whole. The
// importer must return a Status for any input (never crash, hang, leak or read out of bounds,
// ASan + UBSan); what it writes must open and read to its trailer without damage.
// Seeds: tests/data/fuzz_seeds/kineto_import/ (small documents with every kind of event).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "modeler/import/kineto_converter.h"
#include "modeler/io/byte_source.h"
#include "modeler/trace/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One output path per process, in $TMPDIR (the writer opens it by name).
  static const std::string* const output = [] {
    const char* tmp = std::getenv("TMPDIR");
    return new std::string(std::string(tmp != nullptr ? tmp : "/tmp") + "/lumos-kineto-fuzz-" +
                           std::to_string(::getpid()) + ".pb.zst");
  }();
  lumos::modeler::io::PaddedText text;
  text.Append(reinterpret_cast<const char*>(data), size);
  lumos::modeler::kineto::ConvertOptions options;
  options.job_id = "fuzz";
  options.zstd_level = 1;
  lumos::modeler::kineto::ConvertStats stats;
  const lumos::Status converted =
      lumos::modeler::kineto::ConvertKinetoText(text, "fuzz.json", *output, options, &stats);
  if (converted.ok()) {
    // What the importer wrote is a sound trace: it opens and reads to its trailer.
    auto reader = lumos::modeler::TraceReader::Open(*output);
    if (!reader.ok()) __builtin_trap();
    lumos::modeler::ReadResult result;
    const lumos::Status read = (*reader)->ReadFrames(
        [](const lumos::modeler::FrameEvents&) { return lumos::Status::Ok(); }, &result);
    if (!read.ok() || !result.closed_cleanly()) __builtin_trap();
  }
  ::unlink(output->c_str());
  return 0;
}
