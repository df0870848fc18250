// libFuzzer target: arbitrary bytes as the *decompressed* content of one zstd frame. The
// harness wraps the input into a well-formed trace (Lumos preamble, a header frame from the
// writer, then the input compressed as one frame with its checksum), so every input reaches
// the packet splitter, the schema-2 column decoder (ColumnDecoder, through ReadFrames and
// ReadPackets), libprotobuf parsing, interning and start-time deltas of TraceReader, which
// raw-file mutations rarely get past the zstd checksum to reach. The file is schema 2 (the
// writer's header). Same invariants as trace_reader_fuzzer.cc (fuzz_file.h).
// Seeds: tests/data/fuzz_seeds/trace_packets/ (frame contents).
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "schema/format.h"
#include "schema/writer/packet_encoder.h"
#include "schema/writer/wire_buffer.h"
#include "tests/fuzz/fuzz_file.h"

namespace {

void PutLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

void AppendFrame(std::vector<uint8_t>* out, ZSTD_CCtx* cctx, const uint8_t* data, size_t size) {
  size_t at = out->size();
  out->resize(at + ZSTD_compressBound(size));
  size_t n = ZSTD_compress2(cctx, out->data() + at, out->size() - at, data, size);
  if (ZSTD_isError(n)) __builtin_trap();  // Cannot happen with a compressBound-sized buffer.
  out->resize(at + n);
}

// Preamble + header frame: the same bytes for every input.
const std::vector<uint8_t>& Prefix(ZSTD_CCtx* cctx) {
  static const std::vector<uint8_t>* const prefix = [cctx] {
    auto* bytes = new std::vector<uint8_t>(lumos::schema::kPreambleBytes);
    uint8_t* p = bytes->data();
    PutLe32(p, lumos::schema::kSkippableFrameMagic);
    PutLe32(p + 4, lumos::schema::kPreambleContentBytes);
    std::memcpy(p + 8, lumos::schema::kFileMagic, sizeof(lumos::schema::kFileMagic));
    PutLe32(p + 16, lumos::schema::kSchemaMajor);
    PutLe32(p + 20, lumos::schema::kSchemaMinor);
    lumos::schema::HeaderInfo header;
    header.agent_version = "fuzz";
    header.producer = lumos::schema::Producer::kSynthetic;
    lumos::schema::PacketEncoder encoder;
    encoder.AddHeader(header);
    lumos::schema::WireBuffer frame;
    encoder.TakeFrame(&frame);
    AppendFrame(bytes, cctx, frame.data(), frame.size());
    return bytes;
  }();
  return *prefix;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static lumos::fuzz::FuzzFile* const file = new lumos::fuzz::FuzzFile();
  static ZSTD_CCtx* const cctx = [] {
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    return c;
  }();
  static std::vector<uint8_t>* const bytes = new std::vector<uint8_t>();
  *bytes = Prefix(cctx);
  AppendFrame(bytes, cctx, data, size);
  if (!file->Write(bytes->data(), bytes->size())) return 0;
  lumos::fuzz::ReadWholeTrace(file->path());
  return 0;
}
