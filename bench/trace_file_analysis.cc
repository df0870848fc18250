#include "bench/trace_file_analysis.h"

#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "modeler/trace/trace_reader.h"
#include "schema/varint.h"

namespace lumos::bench {
namespace {

namespace pb = modeler::pb;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

using Frames = std::vector<std::vector<pb::TracePacket>>;

// The oneof field number of a packet (0 when none is set).
int KindOf(const pb::TracePacket& packet) { return static_cast<int>(packet.data_case()); }

std::string KindName(int kind) {
  const FieldDescriptor* f = pb::TracePacket::descriptor()->FindFieldByNumber(kind);
  return f != nullptr ? f->name() : "none";
}

// The event message inside a packet, or null.
Message* Body(pb::TracePacket* packet) {
  const FieldDescriptor* f = pb::TracePacket::descriptor()->FindFieldByNumber(KindOf(*packet));
  if (f == nullptr) return nullptr;
  return packet->GetReflection()->MutableMessage(packet, f);
}

// The reader hands out absolute ids; on disk, correlation_id, external_id and
// sequence_number are zigzag deltas from the previous packet of the same kind in the frame
// (schema/lumos/trace.proto). Re-applies that coding so re-serialized frames match the file.
class IdCoder {
 public:
  void Reset() { last_.clear(); }
  void Encode(pb::TracePacket* packet) {
    Message* body = Body(packet);
    if (body == nullptr) return;
    for (const char* name : {"correlation_id", "external_id", "sequence_number"}) {
      const FieldDescriptor* f = body->GetDescriptor()->FindFieldByName(name);
      if (f == nullptr || f->cpp_type() != FieldDescriptor::CPPTYPE_UINT64) continue;
      uint64_t& last = last_[{KindOf(*packet), f->number()}];
      uint64_t value = body->GetReflection()->GetUInt64(*body, f);
      body->GetReflection()->SetUInt64(body, f,
                                       schema::ZigZagEncode(static_cast<int64_t>(value - last)));
      last = value;
    }
  }

 private:
  std::map<std::pair<int, int>, uint64_t> last_;
};

void AppendPacket(const pb::TracePacket& packet, std::string* out) {
  std::string bytes = packet.SerializeAsString();
  out->push_back(0x0A);
  for (uint64_t n = bytes.size();; n >>= 7) {
    if (n < 0x80) {
      out->push_back(static_cast<char>(n));
      break;
    }
    out->push_back(static_cast<char>((n & 0x7F) | 0x80));
  }
  out->append(bytes);
}

// Compressed size of all frames, leaving out packets of `skip_kind` (0: none) and clearing
// field `clear_field` of packets of `clear_kind` (0: none; field -1: the packet's
// start_delta_ns). Also returns the raw size.
size_t Compressed(const Frames& frames, int level, int skip_kind, int clear_kind, int clear_field,
                  size_t* raw = nullptr) {
  size_t total = 0, raw_total = 0;
  std::string content;
  std::vector<char> out;
  IdCoder ids;
  for (const auto& frame : frames) {
    content.clear();
    ids.Reset();
    for (const pb::TracePacket& packet : frame) {
      int kind = KindOf(packet);
      if (kind == skip_kind && skip_kind != 0) continue;
      pb::TracePacket copy = packet;
      ids.Encode(&copy);
      if (kind == clear_kind && clear_kind != 0) {
        if (clear_field < 0) {
          copy.clear_start_delta_ns();
        } else {
          Message* body = Body(&copy);
          const FieldDescriptor* f = body->GetDescriptor()->FindFieldByNumber(clear_field);
          body->GetReflection()->ClearField(body, f);
        }
      }
      AppendPacket(copy, &content);
    }
    out.resize(ZSTD_compressBound(content.size()));
    size_t n = ZSTD_compress(out.data(), out.size(), content.data(), content.size(), level);
    total += ZSTD_isError(n) ? 0 : n;
    raw_total += content.size();
  }
  if (raw != nullptr) *raw = raw_total;
  return total;
}

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool IsIdField(const std::string& name) {
  return name.find("correlation") != std::string::npos ||
         name.find("external") != std::string::npos || name.find("sequence") != std::string::npos ||
         name == "seq_number" || name == "cuda_event_sync_id";
}

// Compressed size of the frames in a column layout (a simulation, not a format): per frame
// and packet kind, one stream per field that the kind uses in the frame, holding one value
// per packet of that kind (0 / empty when absent): varints, zigzag for signed fields, ids as
// zigzag deltas within the column, start_delta_ns as a column of its own, strings and
// messages length-prefixed; plus a stream of packet kinds; all compressed as one zstd frame.
// Close to a frame of per-kind messages with packed repeated fields.
size_t ColumnarCompressed(const Frames& frames, int level, size_t* raw) {
  size_t total = 0, raw_total = 0;
  std::vector<char> out;
  for (const auto& frame : frames) {
    // Fields each kind uses in this frame.
    std::map<int, std::vector<const FieldDescriptor*>> used;
    std::map<int, bool> timed;
    for (const pb::TracePacket& packet : frame) {
      int kind = KindOf(packet);
      if (packet.has_start_delta_ns()) timed[kind] = true;
      pb::TracePacket copy = packet;
      const Message* body = Body(&copy);
      if (body == nullptr) continue;
      std::vector<const FieldDescriptor*> fields;
      body->GetReflection()->ListFields(*body, &fields);
      auto& list = used[kind];
      for (const FieldDescriptor* f : fields) {
        if (std::find(list.begin(), list.end(), f) == list.end()) list.push_back(f);
      }
    }
    std::map<std::pair<int, int>, std::string> columns;  // (kind, field) -> bytes
    std::map<std::pair<int, int>, uint64_t> last;
    std::string kinds;
    for (const pb::TracePacket& packet : frame) {
      int kind = KindOf(packet);
      kinds.push_back(static_cast<char>(kind));
      if (timed[kind])
        PutVarint(schema::ZigZagEncode(packet.start_delta_ns()), &columns[{kind, 0}]);
      pb::TracePacket copy = packet;
      const Message* body = Body(&copy);
      if (body == nullptr) continue;
      const auto* reflection = body->GetReflection();
      for (const FieldDescriptor* f : used[kind]) {
        std::string& column = columns[{kind, f->number()}];
        if (f->is_repeated() || f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE ||
            f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
          std::string bytes;
          if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING && !f->is_repeated()) {
            bytes = reflection->GetString(*body, f);
          } else if (f->is_repeated() ? reflection->FieldSize(*body, f) > 0
                                      : reflection->HasField(*body, f)) {
            bytes = body->SerializeAsString();  // Rare (header, communicators): keep it simple.
          }
          PutVarint(bytes.size(), &column);
          column += bytes;
          continue;
        }
        uint64_t v = 0;
        switch (f->cpp_type()) {
          case FieldDescriptor::CPPTYPE_INT32:
            v = schema::ZigZagEncode(reflection->GetInt32(*body, f));
            break;
          case FieldDescriptor::CPPTYPE_INT64:
            v = schema::ZigZagEncode(reflection->GetInt64(*body, f));
            break;
          case FieldDescriptor::CPPTYPE_UINT32:
            v = reflection->GetUInt32(*body, f);
            break;
          case FieldDescriptor::CPPTYPE_UINT64:
            v = reflection->GetUInt64(*body, f);
            break;
          case FieldDescriptor::CPPTYPE_BOOL:
            v = reflection->GetBool(*body, f) ? 1 : 0;
            break;
          case FieldDescriptor::CPPTYPE_ENUM:
            v = static_cast<uint64_t>(reflection->GetEnumValue(*body, f));
            break;
          default:
            break;
        }
        if (IsIdField(f->name())) {
          uint64_t& prev = last[{kind, f->number()}];
          auto d = static_cast<int64_t>(v - prev);
          prev = v;
          v = schema::ZigZagEncode(d);
        }
        PutVarint(v, &column);
      }
    }
    std::string content = kinds;
    for (const auto& [key, column] : columns) content += column;
    out.resize(ZSTD_compressBound(content.size()));
    size_t n = ZSTD_compress(out.data(), out.size(), content.data(), content.size(), level);
    total += ZSTD_isError(n) ? 0 : n;
    raw_total += content.size();
  }
  *raw = raw_total;
  return total;
}

}  // namespace

Status AnalyzeTraceFile(const std::string& path, int zstd_level) {
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<modeler::TraceReader> reader,
                         modeler::TraceReader::Open(path));
  Frames frames;
  modeler::ReadResult result;
  LUMOS_RETURN_IF_ERROR(reader->ReadPackets(
      [&](const pb::TracePacket& packet, const modeler::PacketContext&) {
        if (packet.has_frame() || frames.empty()) frames.emplace_back();
        frames.back().push_back(packet);
        return Status::Ok();
      },
      &result));
  if (!result.damage.ok()) std::printf("warning: %s\n", result.damage.message().c_str());

  std::map<int, size_t> count, raw;
  size_t events = 0;
  for (const auto& frame : frames) {
    for (const pb::TracePacket& packet : frame) {
      int kind = KindOf(packet);
      ++count[kind];
      raw[kind] += packet.ByteSizeLong() + 2;
      if (packet.has_start_delta_ns()) ++events;
    }
  }
  size_t raw_total = 0;
  const size_t total = Compressed(frames, zstd_level, 0, 0, 0, &raw_total);
  std::printf("%s: %zu bytes on disk, %zu frames, %zu events (timed packets)\n", path.c_str(),
              static_cast<size_t>(reader->file_bytes()), frames.size(), events);
  std::printf("recompressed at zstd %d: %zu bytes = %.2f B/event (raw %.2f B/event)\n\n",
              zstd_level, total, static_cast<double>(total) / static_cast<double>(events),
              static_cast<double>(raw_total) / static_cast<double>(events));
  size_t columnar_raw = 0;
  const size_t columnar = ColumnarCompressed(frames, zstd_level, &columnar_raw);
  std::printf(
      "the same frames in a column layout (simulated, ids delta-coded): %.2f B/event "
      "(raw %.2f B/event)\n\n",
      static_cast<double>(columnar) / static_cast<double>(events),
      static_cast<double>(columnar_raw) / static_cast<double>(events));
  std::printf("%-16s %9s %9s %9s  %s\n", "kind", "packets", "raw B/pkt", "zstd B/pkt",
              "share of compressed");
  std::vector<std::pair<size_t, int>> by_size;
  for (const auto& [kind, n] : count) {
    size_t without = Compressed(frames, zstd_level, kind, 0, 0);
    size_t marginal = total > without ? total - without : 0;
    by_size.emplace_back(marginal, kind);
    std::printf("%-16s %9zu %9.2f %9.2f  %5.1f%%\n", KindName(kind).c_str(), n,
                static_cast<double>(raw[kind]) / static_cast<double>(n),
                static_cast<double>(marginal) / static_cast<double>(n),
                100.0 * static_cast<double>(marginal) / static_cast<double>(total));
  }
  // Fields of the three kinds that cost the most: what clearing each saves.
  std::sort(by_size.rbegin(), by_size.rend());
  for (size_t i = 0; i < std::min<size_t>(3, by_size.size()); ++i) {
    int kind = by_size[i].second;
    const FieldDescriptor* kf = pb::TracePacket::descriptor()->FindFieldByNumber(kind);
    if (kf == nullptr || kf->message_type() == nullptr) continue;
    std::printf("\n%s: compressed bytes saved per packet by clearing one field\n",
                KindName(kind).c_str());
    const auto* type = kf->message_type();
    size_t no_delta = Compressed(frames, zstd_level, 0, kind, -1);
    if (no_delta < total) {
      std::printf("  %-28s %6.2f\n", "(packet) start_delta_ns",
                  static_cast<double>(total - no_delta) / static_cast<double>(count[kind]));
    }
    for (int f = 0; f < type->field_count(); ++f) {
      const FieldDescriptor* field = type->field(f);
      size_t cleared = Compressed(frames, zstd_level, 0, kind, field->number());
      if (cleared >= total) continue;
      std::printf("  %-28s %6.2f\n", field->name().c_str(),
                  static_cast<double>(total - cleared) / static_cast<double>(count[kind]));
    }
  }
  return Status::Ok();
}

}  // namespace lumos::bench
