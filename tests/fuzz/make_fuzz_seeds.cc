// lumos_make_fuzz_seeds OUT_DIR: writes the seed corpora of the trace fuzzers.
//   OUT_DIR/trace_reader/   small schema-2 traces made with TraceFileWriter (one frame, many
//                           frames, no trailer as after SIGKILL, a non-UTF-8 NVTX name), the
//                           one-frame trace with its frames stored uncompressed and without a
//                           checksum (so byte mutations reach the column packets), a schema-1
//                           file holding column packets, and damaged variants
//                           (truncated, a flipped byte, trailing garbage, bad magic, newer
//                           schema major, events before the header, empty);
//   OUT_DIR/trace_packets/  the decompressed content of single frames (column packets), for
//                           trace_packets_fuzzer.cc, plus hand-made odd packet streams and
//                           column packets (constant, absent, count 0 and 1, huge count, no
//                           start column, a block boundary, iids out of range, every kind);
//   OUT_DIR/control_protocol/  control messages for control_protocol_fuzzer.cc (its first byte
//                           picks the mode: 0 a whole message, 128 + type a body): one of each
//                           type from the encoders, escaped paths, and broken ones.
// Deterministic: the same bytes on every run. Keeps the whole corpus well under 200 KB.
// Usage (from the repo root, after scripts/fuzz.sh has built it):
//   build-fuzz/tests/fuzz/lumos_make_fuzz_seeds tests/data/fuzz_seeds
#include <sys/stat.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/control/control_protocol.h"
#include "schema/format.h"
#include "schema/varint.h"
#include "schema/writer/packet_encoder.h"
#include "schema/writer/trace_file_writer.h"
#include "schema/writer/wire_buffer.h"

namespace lumos::fuzz {
namespace {

using Bytes = std::vector<uint8_t>;

schema::HeaderInfo Header() {
  schema::HeaderInfo h;
  h.agent_version = "0.1.0";
  h.producer = schema::Producer::kSynthetic;
  h.host_name = "seed";
  h.pid = 4242;
  h.job_id = "fuzz-seed";
  h.has_rank = h.has_world_size = true;
  h.rank = 1;
  h.world_size = 2;
  schema::DeviceInfo d;
  d.name = "NVIDIA H200";
  d.sm_count = 132;
  h.devices.push_back(d);
  h.clock_domains.push_back({schema::ClockId::kCupti, "cupti", 1});
  h.default_clock_id = schema::ClockId::kCupti;
  return h;
}

// A few training-step-like events of the common kinds, `steps` times.
template <typename Sink>
void AddEvents(Sink* sink, int steps) {
  int64_t t = 1'760'000'000'000'123'457;
  uint64_t correlation = 100;
  const char* kernels[] = {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                           "void at::native::vectorized_elementwise_kernel<4>",
                           "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"};
  for (int step = 0; step < steps; ++step) {
    schema::NvtxEvent range;
    range.start_ns = t;
    range.thread_id = 7001;
    range.name = "train_step";
    range.kind = schema::NvtxKind::kPushPop;
    for (int i = 0; i < 3; ++i) {
      schema::ApiCallEvent launch;
      launch.start_ns = t += 5'321 + 17 * i;
      launch.duration_ns = 3'113 + 7 * i;
      launch.thread_id = 7001;
      launch.correlation_id = ++correlation;
      launch.kind = schema::ApiKind::kLaunchKernel;
      launch.cbid = 211;
      launch.name = "cudaLaunchKernel";
      launch.stream_id = 7;
      launch.domain = schema::ApiDomain::kRuntime;
      sink->Add(launch);
      schema::KernelEvent k;
      k.start_ns = t + 4'001;
      k.duration_ns = 20'011 + 977 * i;
      k.correlation_id = correlation;
      k.stream_id = 7;
      k.name = kernels[i];
      k.device_id = 1;
      k.grid = {132, 1, 1};
      k.block = {384, 1, 1};
      k.registers_per_thread = 168;
      k.context_id = 1;
      k.launch_type = schema::LaunchType::kRegular;
      sink->Add(k);
    }
    schema::CudaEventRecordEvent record;
    record.start_ns = t += 2'501;
    record.correlation_id = ++correlation;
    record.event_id = 3;
    record.stream_id = 7;
    record.cuda_event_sync_id = 900 + static_cast<uint64_t>(step);
    record.has_device_timestamp = true;
    sink->Add(record);
    schema::SyncEvent wait;
    wait.start_ns = t += 1'203;
    wait.duration_ns = 1'499;
    wait.sync_type = schema::SyncType::kStreamWaitEvent;
    wait.correlation_id = ++correlation;
    wait.stream_id = 13;
    wait.event_id = 3;
    wait.cuda_event_sync_id = record.cuda_event_sync_id;
    sink->Add(wait);
    schema::CollectiveEvent c;
    c.start_ns = t += 3'333;
    c.duration_ns = 12'345;
    c.comm_id = 0x5eed5eed5eed5eedull;
    c.seq_number = static_cast<uint64_t>(step);
    c.op = schema::CollectiveOp::kAllGather;
    c.count = 1 << 20;
    c.data_type = schema::DataType::kBfloat16;
    c.bytes = 2 << 20;
    c.stream_id = 13;
    c.gpu_start_offset_ns = -250;
    c.gpu_duration_ns = 800'000;
    c.comm_size = 2;
    c.has_host_time = true;
    sink->Add(c);
    schema::MemcpyEvent m;
    m.start_ns = t += 9'001;
    m.duration_ns = 2'222;
    m.correlation_id = ++correlation;
    m.stream_id = 17;
    m.bytes = 4;
    m.copy_kind = schema::CopyKind::kDtoh;
    sink->Add(m);
    range.duration_ns = static_cast<uint64_t>(t - range.start_ns);
    sink->Add(range);
    t += 50'000;
  }
}

bool WriteFile(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

Bytes ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Writes a trace with the writer; `killed` leaves out the final (trailer) frame, as a process
// killed before Close() would. Returns the file's bytes.
Bytes MakeTrace(const std::string& path, int steps, uint64_t frame_bytes, bool killed) {
  schema::WriterOptions options;
  options.frame_bytes = frame_bytes;
  options.zstd_level = 3;
  auto writer = schema::TraceFileWriter::Create(path, Header(), options);
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", writer.status().message().c_str());
    std::exit(1);
  }
  AddEvents(writer->get(), steps);
  if (!(*writer)->Flush().ok()) std::exit(1);
  Bytes before_close = ReadFile(path);
  if (!(*writer)->Close(1'760'000'000'100'000'000).ok()) std::exit(1);
  return killed ? before_close : ReadFile(path);
}

// Collects what PacketEncoder produces, frame by frame (decompressed frame contents).
struct FrameSink {
  schema::PacketEncoder encoder;
  std::vector<Bytes> frames;
  size_t frame_bytes = 0;
  template <typename E>
  void Add(const E& e) {
    encoder.Add(e);
    if (encoder.pending_bytes() >= frame_bytes) Take();
  }
  void Take() {
    if (encoder.empty()) return;
    schema::WireBuffer frame;
    encoder.TakeFrame(&frame);
    frames.emplace_back(frame.data(), frame.data() + frame.size());
  }
};

Bytes Compress(const Bytes& content) {
  Bytes out(ZSTD_compressBound(content.size()));
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  size_t n = ZSTD_compress2(cctx, out.data(), out.size(), content.data(), content.size());
  ZSTD_freeCCtx(cctx);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

// One packet: Trace.packet = { start_delta_ns?, <field> = body }.
Bytes Packet(bool timed, int64_t delta, uint32_t field, const Bytes& body) {
  schema::WireBuffer b;
  b.EnsureRoom(body.size() + 64);
  size_t packet = b.BeginNested(1);
  if (timed) b.PutSintAlways(schema::packet_field::kStartDeltaNs, delta);
  size_t slot = b.BeginNested(field);
  b.PutRaw(body.data(), body.size());
  b.EndNested(slot);
  b.EndNested(packet);
  return Bytes(b.data(), b.data() + b.size());
}

Bytes Interned(uint64_t iid, const std::string& value) {
  schema::WireBuffer b;
  b.EnsureRoom(value.size() + 32);
  b.PutUint(1, iid);
  b.PutString(2, value);
  return Packet(false, 0, schema::packet_field::kInterned, Bytes(b.data(), b.data() + b.size()));
}

Bytes Cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Column packets (schema 2), byte by byte.

Bytes Varints(std::initializer_list<uint64_t> values) {
  schema::WireBuffer b;
  b.EnsureRoom(values.size() * 10);
  for (uint64_t v : values) b.PutVarint(v);
  return Bytes(b.data(), b.data() + b.size());
}

// A length-delimited field: a packed column.
Bytes Field(uint32_t number, const Bytes& body) {
  schema::WireBuffer b;
  b.EnsureRoom(body.size() + 2 * schema::kMaxScalarFieldBytes);
  b.PutTag(number, schema::WireType::kLength);
  b.PutVarint(body.size());
  b.PutRaw(body.data(), body.size());
  return Bytes(b.data(), b.data() + b.size());
}

Bytes Count(uint64_t n) {
  schema::WireBuffer b;
  b.EnsureRoom(schema::kMaxScalarFieldBytes);
  b.PutUintAlways(schema::column_field::kCount, n);
  return Bytes(b.data(), b.data() + b.size());
}

Bytes Start(std::initializer_list<uint64_t> zigzag_deltas) {
  return Field(schema::column_field::kStartDeltaNs, Varints(zigzag_deltas));
}

Bytes Columns(uint32_t packet_field, const Bytes& body) {
  return Packet(false, 0, packet_field, body);
}

Bytes FramePacket() {
  Bytes body = {0x08, 0x01, 0x10, 0xE8, 0x07};  // frame_index 1, base_time_ns 1000
  return Packet(false, 0, schema::packet_field::kFrame, body);
}

// The Trace.packet entries of a frame's content, each with its tag and length.
std::vector<Bytes> SplitPackets(const Bytes& content) {
  std::vector<Bytes> packets;
  size_t at = 0;
  while (at < content.size()) {
    size_t p = at + 1;  // Tag 0x0A, then the length.
    uint64_t length = 0;
    for (int shift = 0;; shift += 7) {
      uint8_t byte = content.at(p++);
      length |= uint64_t{byte & 0x7Fu} << shift;
      if (byte < 0x80) break;
    }
    packets.emplace_back(content.begin() + static_cast<ptrdiff_t>(at),
                         content.begin() + static_cast<ptrdiff_t>(p + length));
    at = p + length;
  }
  return packets;
}

// The decompressed content of each zstd frame of a trace file (the preamble skipped).
std::vector<Bytes> FrameContents(const Bytes& file) {
  std::vector<Bytes> frames;
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  for (size_t at = schema::kPreambleBytes; at < file.size();) {
    size_t n = ZSTD_findFrameCompressedSize(file.data() + at, file.size() - at);
    if (ZSTD_isError(n)) std::exit(1);
    Bytes content(1 << 20);
    ZSTD_inBuffer in{file.data() + at, n, 0};
    ZSTD_outBuffer out{content.data(), content.size(), 0};
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
    if (ZSTD_decompressStream(dctx, &out, &in) != 0) std::exit(1);  // Seeds are small.
    content.resize(out.pos);
    frames.push_back(content);
    at += n;
  }
  ZSTD_freeDCtx(dctx);
  return frames;
}

// A zstd frame of raw (stored) blocks and no checksum: the reader fuzzer's byte mutations of
// it reach the packets instead of dying at the checksum or in the entropy decoder.
Bytes Stored(const Bytes& content) {
  // Magic; frame header descriptor 0 (a window descriptor follows, no checksum, no content
  // size); window 2^(10 + 7) = 128 KiB, the largest block.
  Bytes out = {0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3};
  size_t at = 0;
  do {
    size_t n = std::min<size_t>(content.size() - at, 128 << 10);
    uint32_t block = (at + n == content.size() ? 1u : 0u) | static_cast<uint32_t>(n) << 3;
    for (int i = 0; i < 3; ++i) out.push_back(static_cast<uint8_t>(block >> (8 * i)));
    out.insert(out.end(), content.begin() + static_cast<ptrdiff_t>(at),
               content.begin() + static_cast<ptrdiff_t>(at + n));
    at += n;
  } while (at < content.size());
  return out;
}

// A column packet of `kind` with `count` = 3 events and every column 1..`columns` present
// holding [field, 2^31, 2^64 - 1]: extreme values in every field of every kind (enums out of
// range, ranks whose plus-1 coding overflows int32, wrapping deltas).
Bytes ExtremeColumns(uint32_t kind, uint32_t columns) {
  Bytes body = Cat({Count(3), Start({1, ~uint64_t{0}, 1u << 31})});
  for (uint32_t f = 1; f <= columns; ++f) {
    body = Cat({body, Field(f, Varints({f, uint64_t{1} << 31, ~uint64_t{0}}))});
  }
  return Columns(kind, body);
}

// Control messages: mode byte 0 + a whole message, or 128 + (type - 1) + a body.
void WriteControlSeeds(const std::string& dir) {
  namespace control = ::lumos::agent::control;
  ::mkdir(dir.c_str(), 0755);
  const auto whole = [&](const std::string& name, const std::string& message) {
    Bytes bytes{0};
    bytes.insert(bytes.end(), message.begin(), message.end());
    WriteFile(dir + "/" + name + ".bin", bytes);
  };
  const auto body = [&](const std::string& name, control::MessageType type,
                        const std::string& text) {
    Bytes bytes{static_cast<uint8_t>(128 + static_cast<int>(type) - 1)};
    bytes.insert(bytes.end(), text.begin(), text.end());
    WriteFile(dir + "/" + name + ".bin", bytes);
  };
  whole("status_request", control::EncodeStatusRequest().value());
  control::AgentStatus status;
  status.pid = 4242;
  status.job = "job 7";
  status.host = "node-a";
  status.rank = 3;
  status.world_size = 8;
  status.mode = "on-demand";
  status.state = "capturing";
  status.windows_written = 2;
  status.last_window = "/traces/job 7/20261201T235000Z/job_7.node-a.4242.rank3.pb.zst";
  status.last_window_end_realtime_ns = 1'764'633'000'000'000'000;
  status.bytes_written = 1 << 20;
  status.events_dropped = 5;
  status.iteration = 120;
  status.iteration_known = true;
  whole("status_reply", control::EncodeStatusReply(status).value());
  control::CaptureRequest request;
  request.request_id = 0x1234567890abcdefULL;
  request.iterations = 3;
  request.at_realtime_ns = 1'764'633'600'000'000'000;
  request.iteration_multiple = 10;
  request.window_realtime_ns = request.at_realtime_ns;
  request.output_dir = "/tmp/w%\xc3\xa9 x";
  whole("capture_request", control::EncodeCaptureRequest(request).value());
  request.iterations = 0;
  request.duration_ms = 60'000;
  request.output_dir.clear();
  whole("capture_request_duration", control::EncodeCaptureRequest(request).value());
  whole("capture_reply", control::EncodeCaptureReply({true, ""}).value());
  whole("capture_reply_refused",
        control::EncodeCaptureReply({false, "a window is capturing already"}).value());
  whole("error", control::EncodeError("malformed line 2: no '='"));
  // At the size limits: a path that fills the message, and a body whose re-encoding (the
  // absent keys' defaults added) no longer fits.
  request.output_dir = "/" + std::string(3850, 'p');
  whole("capture_request_long_path", control::EncodeCaptureRequest(request).value());
  body("body_status_long_path", control::MessageType::kStatusReply,
       "last_window=/" + std::string(4060, 'q') + "\n");
  // Broken: the decoders' error paths.
  body("body_signed", control::MessageType::kStatusReply, "rank=-1\nworld_size=-0\nmode=x\n");
  body("body_twice", control::MessageType::kCaptureRequest, "iterations=1\niterations=2\n");
  body("body_both", control::MessageType::kCaptureRequest, "iterations=1\nduration_ms=5\n");
  body("body_escape", control::MessageType::kError, "reason=%4%41%0A%zz\n");
  body("body_no_newline", control::MessageType::kCaptureReply, "accepted=1");
  // Cancel (added later in version 1): request, both replies, a status that names one.
  control::CancelRequest cancel;
  whole("cancel_request_any", control::EncodeCancelRequest(cancel).value());
  cancel.request_id = 0x1234567890abcdefULL;
  whole("cancel_request", control::EncodeCancelRequest(cancel).value());
  whole("cancel_reply",
        control::EncodeCancelReply({true,
                                    "request 1311768467294899695: armed, dropped before "
                                    "it starts"})
            .value());
  whole("cancel_reply_nothing",
        control::EncodeCancelReply({false, "no window is armed or capturing"}).value());
  status.last_cancel =
      "request 12: ended early 3.5 s into its window, by uid 1000 pid 77 "
      "(lumos-ctl); its file is kept";
  whole("status_reply_last_cancel", control::EncodeStatusReply(status).value());
  body("body_cancel_bad", control::MessageType::kCancelRequest,
       "request_id=-1\nrequest_id=2\niterations=3\n");
  body("body_cancel_reply_bad", control::MessageType::kCancelReply, "accepted=2\nwhat=%0A\n");
  std::string bad_version = control::EncodeStatusRequest().value();
  bad_version[4] = 2;
  whole("wrong_version", bad_version);
  std::string oversized = control::EncodeStatusRequest().value();
  oversized[10] = 1;  // Body length 65536.
  whole("oversized", oversized);
}

int Run(const std::string& out_dir) {
  const std::string reader_dir = out_dir + "/trace_reader";
  const std::string packets_dir = out_dir + "/trace_packets";
  ::mkdir(out_dir.c_str(), 0755);
  ::mkdir(reader_dir.c_str(), 0755);
  ::mkdir(packets_dir.c_str(), 0755);
  const std::string scratch = reader_dir + "/.scratch.pb.zst";
  WriteControlSeeds(out_dir + "/control_protocol");

  // Valid traces.
  Bytes one_frame = MakeTrace(scratch, 4, 1 << 20, false);
  Bytes many_frames = MakeTrace(scratch, 12, 300, false);
  Bytes killed = MakeTrace(scratch, 6, 400, true);
  // A string that is not UTF-8 (Latin-1 "café"), as user NVTX text can be.
  Bytes latin1;
  {
    auto writer = schema::TraceFileWriter::Create(scratch, Header(), {});
    if (!writer.ok()) return 1;
    schema::NvtxEvent range;
    range.start_ns = 1'760'000'000'000'000'000;
    range.duration_ns = 1'234;
    range.thread_id = 7001;
    range.name = std::string_view("caf\xe9 layer", 10);
    range.kind = schema::NvtxKind::kPushPop;
    (*writer)->Add(range);
    if (!(*writer)->Close(1'760'000'000'000'002'000).ok()) return 1;
    latin1 = ReadFile(scratch);
  }
  std::remove(scratch.c_str());
  WriteFile(reader_dir + "/latin1_nvtx_name.pb.zst", latin1);
  WriteFile(reader_dir + "/one_frame.pb.zst", one_frame);
  WriteFile(reader_dir + "/many_frames.pb.zst", many_frames);
  WriteFile(reader_dir + "/killed_no_trailer.pb.zst", killed);

  // Damaged variants.
  Bytes cut = many_frames;
  cut.resize(cut.size() - 37);
  WriteFile(reader_dir + "/truncated_mid_frame.pb.zst", cut);
  Bytes cut_preamble(one_frame.begin(), one_frame.begin() + 20);
  WriteFile(reader_dir + "/truncated_preamble.pb.zst", cut_preamble);
  Bytes header_only(one_frame.begin(), one_frame.begin() + schema::kPreambleBytes);
  WriteFile(reader_dir + "/preamble_only.pb.zst", header_only);
  Bytes flipped = many_frames;
  flipped[flipped.size() / 2] ^= 0x5A;
  WriteFile(reader_dir + "/flipped_byte.pb.zst", flipped);
  Bytes garbage = one_frame;
  for (int i = 0; i < 29; ++i) garbage.push_back(static_cast<uint8_t>(0xA5 ^ (i * 37)));
  WriteFile(reader_dir + "/trailing_garbage.pb.zst", garbage);
  Bytes bad_magic = one_frame;
  bad_magic[9] = 'X';
  WriteFile(reader_dir + "/bad_magic.pb.zst", bad_magic);
  Bytes newer_major = one_frame;
  newer_major[16] = static_cast<uint8_t>(schema::kSchemaMajor + 1);
  WriteFile(reader_dir + "/newer_major.pb.zst", newer_major);
  WriteFile(reader_dir + "/empty.pb.zst", Bytes());

  // Frame contents for the packets fuzzer.
  FrameSink sink;
  sink.frame_bytes = 1 << 20;
  AddEvents(&sink, 3);
  sink.Take();
  FrameSink small;
  small.frame_bytes = 250;
  AddEvents(&small, 3);
  small.Take();
  WriteFile(packets_dir + "/events.bin", sink.frames.at(0));
  WriteFile(packets_dir + "/small_frame.bin", small.frames.at(1));

  // Events before any header: a preamble, then a frame of events.
  Bytes no_header(one_frame.begin(), one_frame.begin() + schema::kPreambleBytes);
  Bytes frame = Compress(sink.frames.at(0));
  no_header.insert(no_header.end(), frame.begin(), frame.end());
  WriteFile(reader_dir + "/events_before_header.pb.zst", no_header);

  // The one-frame trace with stored frames (no compression, no checksum).
  {
    Bytes stored(one_frame.begin(), one_frame.begin() + schema::kPreambleBytes);
    for (const Bytes& content : FrameContents(one_frame)) stored = Cat({stored, Stored(content)});
    WriteFile(reader_dir + "/stored_frames.pb.zst", stored);
  }
  // A schema-1 file (preamble and header say major 1) holding column packets, which no 1.x
  // writer makes. Stored, so mutations reach the packets.
  {
    Bytes v1(one_frame.begin(), one_frame.begin() + schema::kPreambleBytes);
    v1[16] = 1;
    Bytes header_v1 = Packet(false, 0, schema::packet_field::kHeader, {0x08, 0x01});
    std::vector<Bytes> packets = SplitPackets(sink.frames.at(0));  // FramePacket first.
    Bytes content = Cat({packets.at(0), header_v1});
    for (size_t i = 1; i < packets.size(); ++i) content = Cat({content, packets[i]});
    WriteFile(reader_dir + "/v1_major_with_columns.pb.zst", Cat({v1, Stored(content)}));
  }

  // Hand-made odd packet streams.
  Bytes kernel_body = {0x08, 0x90, 0x4E, 0x10, 0x05,
                       0x18, 0x07, 0x20, 0x01};  // dur, corr, stream, name 1
  WriteFile(packets_dir + "/odd_interning.bin",
            Cat({Interned(1, "gemm"), Interned(1, "redefined"), Interned(0, "zero iid"),
                 Interned(1u << 24, "largest iid"), Interned(7, ""),
                 Packet(true, -5, schema::packet_field::kKernel, kernel_body),
                 Packet(true, INT64_MIN, schema::packet_field::kKernel, kernel_body),
                 Packet(true, INT64_MAX, schema::packet_field::kKernel, kernel_body)}));
  Bytes frame_body = {0x08, 0x03, 0x10, 0x80, 0x80, 0x80, 0x80, 0x10};  // index 3, base time
  WriteFile(packets_dir + "/frame_packet_twice.bin",
            Cat({Packet(false, 0, schema::packet_field::kFrame, frame_body),
                 Packet(true, 1000, schema::packet_field::kKernel, kernel_body),
                 Packet(false, 0, schema::packet_field::kFrame, frame_body)}));
  WriteFile(packets_dir + "/unknown_fields.bin",
            Bytes{0x10, 0x01, 0x1A, 0x02, 0xFF, 0xFF, 0x21, 1,    2,    3,    4,
                  5,    6,    7,    8,    0x0A, 0x00, 0x0A, 0x03, 0xF8, 0xFF, 0x01});

  // Hand-made column packets (schema 2). Malformed packets come last in their frame.
  namespace pf = schema::packet_field;
  const uint64_t kMax = ~uint64_t{0};
  // Constant columns (one value for count > 1), a constant delta column, absent columns.
  WriteFile(packets_dir + "/columns_constant.bin",
            Cat({FramePacket(), Interned(1, "gemm"),
                 Columns(pf::kKernelColumns,
                         Cat({Count(4),
                              Start({schema::ZigZagEncode(5), schema::ZigZagEncode(10),
                                     schema::ZigZagEncode(-3), schema::ZigZagEncode(7)}),
                              Field(1, Varints({100})),
                              Field(2, Varints({schema::ZigZagEncode(1)})), Field(3, Varints({7})),
                              Field(4, Varints({1})), Field(6, Varints({132, 132, 66, 1}))}))}));
  // count 0 (with an empty start column), count 1 (one value is not a constant), then count 0
  // without a start column.
  WriteFile(packets_dir + "/columns_count_0_and_1.bin",
            Cat({FramePacket(), Interned(1, "range"), Interned(2, "domain"),
                 Columns(pf::kKernelColumns, Cat({Count(0), Start({})})),
                 Columns(pf::kNvtxColumns,
                         Cat({Count(1), Start({schema::ZigZagEncode(1)}), Field(1, Varints({1})),
                              Field(3, Varints({1})), Field(4, Varints({2}))})),
                 Columns(pf::kApiCallColumns, Count(0))}));
  WriteFile(packets_dir + "/columns_huge_count.bin",
            Cat({FramePacket(),
                 Columns(pf::kKernelColumns, Cat({Count(uint64_t{1} << 63), Start({1, 2})}))}));
  WriteFile(packets_dir + "/columns_no_start.bin",
            Cat({FramePacket(),
                 Columns(pf::kMemcpyColumns, Cat({Count(2), Field(1, Varints({5, 6}))}))}));
  WriteFile(packets_dir + "/columns_truncated_varint.bin",
            Cat({FramePacket(),
                 Columns(pf::kSyncColumns, Cat({Count(2), Field(schema::column_field::kStartDeltaNs,
                                                                Bytes{0x02, 0x80})}))}));
  // 130 events: a second block of 2; multi-byte varints up to the column's last byte.
  {
    Bytes starts, durations;
    for (uint64_t i = 0; i < 130; ++i) {
      starts = Cat({starts, Varints({i < 120 ? 2 : (i << 40)})});
      durations = Cat({durations, Varints({i == 129 ? kMax : 1000 + 300 * i})});
    }
    WriteFile(
        packets_dir + "/columns_block_edge.bin",
        Cat({FramePacket(),
             Columns(pf::kApiCallColumns,
                     Cat({Count(130), Field(schema::column_field::kStartDeltaNs, starts),
                          Field(1, durations), Field(3, Varints({schema::ZigZagEncode(-1)}))}))}));
  }
  // Interned ids: 0, defined, undefined, the largest, beyond it.
  WriteFile(
      packets_dir + "/columns_iids.bin",
      Cat({FramePacket(), Interned(1, "a"), Interned(3, "ccc"),
           Columns(pf::kKernelColumns, Cat({Count(6), Start({0, 1, 2, 3, 4, 5}),
                                            Field(4, Varints({0, 1, 2, 3, 1u << 24, kMax}))})),
           Columns(pf::kNvtxColumns,
                   Cat({Count(3), Start({1, 1, 1}), Field(3, Varints({1, uint64_t{1} << 30, 3})),
                        Field(4, Varints({kMax, 3, 0}))})),
           Columns(pf::kHostRangeColumns, Cat({Count(2), Start({1, 1}), Field(3, Varints({3, 2})),
                                               Field(10, Varints({schema::ZigZagEncode(-7)})),
                                               Field(11, Varints({1, 0}))}))}));
  // Every kind with every column at extreme values.
  WriteFile(
      packets_dir + "/columns_every_kind.bin",
      Cat({FramePacket(), Interned(1, "x"), ExtremeColumns(pf::kKernelColumns, 22),
           ExtremeColumns(pf::kApiCallColumns, 12), ExtremeColumns(pf::kMemcpyColumns, 13),
           ExtremeColumns(pf::kMemsetColumns, 10), ExtremeColumns(pf::kSyncColumns, 12),
           ExtremeColumns(pf::kCudaEventColumns, 7), ExtremeColumns(pf::kNvtxColumns, 10),
           ExtremeColumns(pf::kHostRangeColumns, 11), ExtremeColumns(pf::kCollectiveColumns, 21)}));
  // Fields a later minor version might add (skipped), schema-1 rows between column packets, and
  // a column packet behind a group (wire types 3/4) in its TracePacket.
  WriteFile(packets_dir + "/columns_unknown_fields_and_rows.bin",
            Cat({FramePacket(), Interned(1, "gemm"), Packet(true, 10, pf::kKernel, kernel_body),
                 Columns(pf::kKernelColumns,
                         Cat({Count(2), Start({1, 2}), Field(30, Varints({1, 2})),
                              Field(42, Varints({9})), Bytes{0xD8, 0x02, 0x05},  // 43: varint
                              Bytes{0xE1, 0x02, 1, 2, 3, 4, 5, 6, 7, 8},         // 44: fixed64
                              Bytes{0xED, 0x02, 1, 2, 3, 4},                     // 45: fixed32
                              Field(0, Varints({1}))})),
                 Packet(true, 20, pf::kKernel, kernel_body),
                 Field(1, Cat({Bytes{0x7B, 0x7C},  // Group 15, empty.
                               Field(pf::kKernelColumns, Cat({Count(1), Start({1})}))}))}));
  return 0;
}

}  // namespace
}  // namespace lumos::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: lumos_make_fuzz_seeds OUT_DIR\n");
    return 2;
  }
  return lumos::fuzz::Run(argv[1]);
}
