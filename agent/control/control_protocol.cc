#include "agent/control/control_protocol.h"

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>

namespace lumos::agent::control {
namespace {

constexpr uint64_t kMaxDurationMs = 7ULL * 24 * 3600 * 1000;  // A week: longer is a typo.
constexpr uint64_t kMaxU64Value = std::numeric_limits<uint64_t>::max();

void PutU16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xff));
  out->push_back(static_cast<char>(v >> 8));
}
void PutU32(std::string* out, uint32_t v) {
  for (int shift = 0; shift < 32; shift += 8)
    out->push_back(static_cast<char>((v >> shift) & 0xff));
}
uint16_t GetU16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) |
                               (static_cast<uint8_t>(b[at + 1]) << 8));
}
uint32_t GetU32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(b[at + i])) << (8 * i);
  return v;
}

bool KnownType(uint16_t type) {
  return type >= static_cast<uint16_t>(MessageType::kStatusRequest) &&
         type <= static_cast<uint16_t>(MessageType::kCancelReply);
}

Status Reject(Rejection kind, Rejection* out, Status status) {
  if (out != nullptr) *out = kind;
  return status;
}

// A value as it appears in an error message: printable, cut to 40 bytes.
std::string Shown(std::string_view value) {
  std::string shown = EscapeValue(value.substr(0, 40));
  if (value.size() > 40) shown += "...";
  return shown;
}

Status BadValue(std::string_view key, const std::string& why) {
  return Status::Error("bad value for key '" + std::string(key) + "': " + why);
}

StatusOr<uint64_t> ParseUnsigned(std::string_view key, std::string_view value, uint64_t max) {
  if (value.empty() || value.size() > 20)
    return BadValue(key, "'" + Shown(value) + "' is not a number");
  if (value.size() > 1 && value[0] == '0') {
    return BadValue(key, "'" + Shown(value) + "' has a leading zero");
  }
  uint64_t v = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return BadValue(key, "'" + Shown(value) + "' is not a number");
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      return BadValue(key, "'" + Shown(value) + "' is out of range");
    }
    v = v * 10 + digit;
  }
  if (v > max) return BadValue(key, std::to_string(v) + " > max " + std::to_string(max));
  return v;
}

StatusOr<int64_t> ParseSigned(std::string_view key, std::string_view value, int64_t min,
                              int64_t max) {
  const bool negative = !value.empty() && value[0] == '-';
  const std::string_view digits = negative ? value.substr(1) : value;
  if (negative && digits == "0") return BadValue(key, "'-0' is not a number");
  LUMOS_ASSIGN_OR_RETURN(const uint64_t magnitude, ParseUnsigned(key, digits, kMaxU64Value));
  if (!negative) {
    if (max < 0 || magnitude > static_cast<uint64_t>(max)) {
      return BadValue(key, std::string(digits) + " > max " + std::to_string(max));
    }
    const auto v = static_cast<int64_t>(magnitude);
    if (v < min) return BadValue(key, std::string(digits) + " < min " + std::to_string(min));
    return v;
  }
  // -magnitude >= min, i.e. magnitude <= -min, computed without overflow.
  const uint64_t limit = min < 0 ? static_cast<uint64_t>(-(min + 1)) + 1 : 0;
  if (magnitude > limit) {
    return BadValue(key, "-" + std::string(digits) + " < min " + std::to_string(min));
  }
  const int64_t v = magnitude == (uint64_t{1} << 63) ? std::numeric_limits<int64_t>::min()
                                                     : -static_cast<int64_t>(magnitude);
  if (v > max) return BadValue(key, "-" + std::string(digits) + " > max " + std::to_string(max));
  return v;
}

StatusOr<bool> ParseBool(std::string_view key, std::string_view value) {
  if (value == "0") return false;
  if (value == "1") return true;
  return BadValue(key, "'" + Shown(value) + "' is not 0 or 1");
}

// Unescaped; no control characters; at most max_bytes; `absolute`: "" or starting with '/'.
StatusOr<std::string> ParseText(std::string_view key, std::string_view value, size_t max_bytes,
                                bool absolute = false) {
  StatusOr<std::string> text = UnescapeValue(value);
  if (!text.ok()) return BadValue(key, text.status().message());
  if (text->size() > max_bytes) {
    return BadValue(key,
                    std::to_string(text->size()) + " bytes > max " + std::to_string(max_bytes));
  }
  for (char c : *text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      return BadValue(key, "control character 0x" + std::string(1, "0123456789abcdef"[byte >> 4]) +
                               "0123456789abcdef"[byte & 15]);
    }
  }
  if (absolute && !text->empty() && (*text)[0] != '/') {
    return BadValue(key, "'" + Shown(*text) + "' is not an absolute path");
  }
  return text;
}

StatusOr<std::string> ParseWord(std::string_view key, std::string_view value,
                                std::initializer_list<std::string_view> words) {
  for (std::string_view word : words) {
    if (value == word) return std::string(word);
  }
  std::string list;
  for (std::string_view word : words) list += (list.empty() ? "" : ", ") + std::string(word);
  return BadValue(key, "'" + Shown(value) + "' is not one of " + list);
}

// Calls on_field(index, value) for each `key=value` line of `body`, index into `keys`. Checks
// the framing of every line (printable, '=', a known key given once).
template <size_t N, typename OnField>
Status ForEachField(std::string_view body, const std::string_view (&keys)[N], OnField on_field) {
  static_assert(N <= 64);
  uint64_t seen = 0;
  size_t line_number = 0;
  size_t pos = 0;
  while (pos < body.size()) {
    ++line_number;
    const std::string prefix = "malformed line " + std::to_string(line_number) + ": ";
    const size_t end = body.find('\n', pos);
    const std::string_view line =
        body.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    for (char c : line) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 || byte > 0x7e) {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "0x%02x", byte);
        return Status::Error(prefix + "non-printable byte " + hex);
      }
    }
    if (end == std::string_view::npos) return Status::Error(prefix + "no newline at its end");
    pos = end + 1;
    if (line.empty()) return Status::Error(prefix + "empty");
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return Status::Error(prefix + "no '='");
    const std::string_view key = line.substr(0, eq);
    if (key.empty()) return Status::Error(prefix + "no key before '='");
    for (char c : key) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
        return Status::Error(prefix + "key '" + Shown(key) + "' is not [a-z0-9_]+");
      }
    }
    size_t index = N;
    for (size_t i = 0; i < N; ++i) {
      if (keys[i] == key) index = i;
    }
    if (index == N) return Status::Error("unknown key '" + std::string(key) + "'");
    if ((seen >> index) & 1) {
      return Status::Error(prefix + "key '" + std::string(key) + "' given twice");
    }
    seen |= uint64_t{1} << index;
    LUMOS_RETURN_IF_ERROR(on_field(index, line.substr(eq + 1)));
  }
  return Status::Ok();
}

Status ExpectType(const Message& message, MessageType type) {
  if (message.type == type) return Status::Ok();
  return Status::Error(std::string("expected ") + MessageTypeName(type) + ", got " +
                       MessageTypeName(message.type));
}

class BodyBuilder {
 public:
  void Add(std::string_view key, std::string_view value) {
    body_.append(key).append("=").append(EscapeValue(value)).append("\n");
  }
  void Add(std::string_view key, uint64_t value) { Add(key, std::to_string(value)); }
  void Add(std::string_view key, int64_t value) { Add(key, std::to_string(value)); }
  void Add(std::string_view key, uint32_t value) { Add(key, std::to_string(value)); }
  void Add(std::string_view key, int32_t value) { Add(key, std::to_string(value)); }
  void Add(std::string_view key, bool value) { Add(key, std::string_view(value ? "1" : "0")); }
  const std::string& body() const { return body_; }

 private:
  std::string body_;
};

StatusOr<std::string> Frame(MessageType type, const std::string& body) {
  if (body.size() > kMaxBodyBytes) {
    return ErrorStatus("%s too large: body of %zu bytes > max %zu", MessageTypeName(type),
                       body.size(), kMaxBodyBytes);
  }
  std::string out(kMagic, sizeof(kMagic));
  PutU16(&out, kProtocolVersion);
  PutU16(&out, static_cast<uint16_t>(type));
  PutU32(&out, static_cast<uint32_t>(body.size()));
  out += body;
  return out;
}

// Frames `body`, then decodes it with `decode`: what is sent always passes the receiver's checks.
template <typename Decode>
StatusOr<std::string> FrameChecked(MessageType type, const std::string& body, Decode decode) {
  LUMOS_ASSIGN_OR_RETURN(std::string bytes, Frame(type, body));
  StatusOr<Message> message = DecodeMessage(bytes);
  if (!message.ok()) return message.status();
  Status checked = decode(*message);
  if (!checked.ok())
    return checked.WithContext(std::string("cannot send ") + MessageTypeName(type));
  return bytes;
}

// One line, at most kMaxReasonBytes, control characters turned into spaces.
std::string CleanReason(std::string_view reason) {
  std::string out(reason.substr(0, kMaxReasonBytes));
  for (char& c : out) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = ' ';
  }
  return out;
}

constexpr std::string_view kStatusKeys[] = {"pid",
                                            "job",
                                            "host",
                                            "rank",
                                            "world_size",
                                            "mode",
                                            "state",
                                            "windows_written",
                                            "last_window",
                                            "last_window_end_realtime_ns",
                                            "bytes_written",
                                            "events_dropped",
                                            "control_rejected",
                                            "iteration",
                                            "iteration_known",
                                            "last_cancel"};
constexpr std::string_view kStatusRequestKeys[] = {"last_cancel"};
constexpr std::string_view kCaptureKeys[] = {
    "request_id",         "iterations",         "duration_ms", "at_realtime_ns",
    "iteration_multiple", "window_realtime_ns", "output_dir"};
constexpr std::string_view kCaptureReplyKeys[] = {"accepted", "reason"};
constexpr std::string_view kCancelKeys[] = {"request_id"};
constexpr std::string_view kCancelReplyKeys[] = {"accepted", "what"};
constexpr std::string_view kErrorKeys[] = {"reason"};

constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();
constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kMaxU32 = std::numeric_limits<uint32_t>::max();
constexpr int64_t kMaxI32 = std::numeric_limits<int32_t>::max();

}  // namespace

const char* MessageTypeName(MessageType type) {
  switch (type) {
    case MessageType::kStatusRequest:
      return "StatusRequest";
    case MessageType::kStatusReply:
      return "StatusReply";
    case MessageType::kCaptureRequest:
      return "CaptureRequest";
    case MessageType::kCaptureReply:
      return "CaptureReply";
    case MessageType::kError:
      return "Error";
    case MessageType::kCancelRequest:
      return "CancelRequest";
    case MessageType::kCancelReply:
      return "CancelReply";
  }
  return "unknown";
}

StatusOr<Header> DecodeHeader(std::string_view bytes, Rejection* rejection) {
  if (bytes.size() != kHeaderBytes) {
    return Reject(Rejection::kMalformed, rejection,
                  ErrorStatus("truncated header: %zu of %zu bytes", bytes.size(), kHeaderBytes));
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Reject(Rejection::kMalformed, rejection,
                  Status::Error("bad magic (not a Lumos control message)"));
  }
  Header header;
  header.version = GetU16(bytes, 4);
  if (header.version != kProtocolVersion) {
    return Reject(
        Rejection::kWrongVersion, rejection,
        ErrorStatus("wrong version %u (this side speaks %u)", header.version, kProtocolVersion));
  }
  const uint16_t type = GetU16(bytes, 6);
  if (!KnownType(type)) {
    return Reject(Rejection::kMalformed, rejection, ErrorStatus("unknown message type %u", type));
  }
  header.type = static_cast<MessageType>(type);
  header.body_bytes = GetU32(bytes, 8);
  if (header.body_bytes > kMaxBodyBytes) {
    return Reject(
        Rejection::kOversized, rejection,
        ErrorStatus("oversized: body of %u bytes > max %zu", header.body_bytes, kMaxBodyBytes));
  }
  return header;
}

StatusOr<Message> DecodeMessage(std::string_view bytes, Rejection* rejection) {
  LUMOS_ASSIGN_OR_RETURN(const Header header,
                         DecodeHeader(bytes.substr(0, kHeaderBytes), rejection));
  const size_t body_bytes = bytes.size() - kHeaderBytes;
  if (body_bytes != header.body_bytes) {
    return Reject(Rejection::kMalformed, rejection,
                  ErrorStatus("%s: body of %zu bytes, header says %u",
                              body_bytes < header.body_bytes ? "truncated" : "trailing bytes",
                              body_bytes, header.body_bytes));
  }
  return Message{header.type, bytes.substr(kHeaderBytes)};
}

std::string EscapeValue(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte <= 0x7e && c != '%') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back("0123456789ABCDEF"[byte >> 4]);
      out.push_back("0123456789ABCDEF"[byte & 15]);
    }
  }
  return out;
}

StatusOr<std::string> UnescapeValue(std::string_view escaped) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] != '%') {
      out.push_back(escaped[i]);
      continue;
    }
    if (i + 2 >= escaped.size()) {
      return ErrorStatus("'%%' at offset %zu without two hex digits", i);
    }
    const int high = hex(escaped[i + 1]);
    const int low = hex(escaped[i + 2]);
    if (high < 0 || low < 0) {
      return ErrorStatus("'%%' at offset %zu without two upper-case hex digits", i);
    }
    out.push_back(static_cast<char>((high << 4) | low));
    i += 2;
  }
  return out;
}

StatusOr<std::string> EncodeStatusRequest(bool with_last_cancel) {
  // Without: no body, as the first lumos-ctl sent it.
  return Frame(MessageType::kStatusRequest, with_last_cancel ? "last_cancel=1\n" : "");
}

StatusOr<std::string> EncodeStatusReply(const AgentStatus& s) {
  BodyBuilder b;
  b.Add("pid", s.pid);
  b.Add("job", s.job);
  b.Add("host", s.host);
  b.Add("rank", s.rank);
  b.Add("world_size", s.world_size);
  b.Add("mode", s.mode);
  b.Add("state", s.state);
  b.Add("windows_written", s.windows_written);
  b.Add("last_window", s.last_window);
  b.Add("last_window_end_realtime_ns", s.last_window_end_realtime_ns);
  b.Add("bytes_written", s.bytes_written);
  b.Add("events_dropped", s.events_dropped);
  b.Add("control_rejected", s.control_rejected);
  b.Add("iteration", s.iteration);
  b.Add("iteration_known", s.iteration_known);
  if (!s.last_cancel.empty()) b.Add("last_cancel", CleanReason(s.last_cancel));
  return FrameChecked(MessageType::kStatusReply, b.body(),
                      [](const Message& m) { return DecodeStatusReply(m).status(); });
}

StatusOr<std::string> EncodeCaptureRequest(const CaptureRequest& r) {
  BodyBuilder b;
  b.Add("request_id", r.request_id);
  b.Add("iterations", r.iterations);
  b.Add("duration_ms", r.duration_ms);
  b.Add("at_realtime_ns", r.at_realtime_ns);
  b.Add("iteration_multiple", r.iteration_multiple);
  b.Add("window_realtime_ns", r.window_realtime_ns);
  b.Add("output_dir", r.output_dir);
  return FrameChecked(MessageType::kCaptureRequest, b.body(),
                      [](const Message& m) { return DecodeCaptureRequest(m).status(); });
}

StatusOr<std::string> EncodeCaptureReply(const CaptureReply& reply) {
  BodyBuilder b;
  b.Add("accepted", reply.accepted);
  b.Add("reason", CleanReason(reply.reason));
  return FrameChecked(MessageType::kCaptureReply, b.body(),
                      [](const Message& m) { return DecodeCaptureReply(m).status(); });
}

StatusOr<std::string> EncodeCancelRequest(const CancelRequest& r) {
  BodyBuilder b;
  b.Add("request_id", r.request_id);
  return FrameChecked(MessageType::kCancelRequest, b.body(),
                      [](const Message& m) { return DecodeCancelRequest(m).status(); });
}

StatusOr<std::string> EncodeCancelReply(const CancelReply& reply) {
  BodyBuilder b;
  b.Add("accepted", reply.accepted);
  b.Add("what", CleanReason(reply.what));
  return FrameChecked(MessageType::kCancelReply, b.body(),
                      [](const Message& m) { return DecodeCancelReply(m).status(); });
}

std::string EncodeError(std::string_view reason) {
  BodyBuilder b;
  b.Add("reason", CleanReason(reason));
  // A cleaned reason escapes to at most 3 * kMaxReasonBytes + 8 bytes: always fits.
  StatusOr<std::string> bytes = Frame(MessageType::kError, b.body());
  return bytes.ok() ? std::move(bytes).value() : std::string();
}

Status DecodeStatusRequest(const Message& message, bool* with_last_cancel) {
  LUMOS_RETURN_IF_ERROR(ExpectType(message, MessageType::kStatusRequest));
  bool with = false;
  LUMOS_RETURN_IF_ERROR(
      ForEachField(message.body, kStatusRequestKeys, [&with](size_t, std::string_view v) {
        LUMOS_ASSIGN_OR_RETURN(with, ParseBool(kStatusRequestKeys[0], v));
        return Status::Ok();
      }));
  if (with_last_cancel != nullptr) *with_last_cancel = with;
  return Status::Ok();
}

StatusOr<AgentStatus> DecodeStatusReply(const Message& message) {
  LUMOS_RETURN_IF_ERROR(ExpectType(message, MessageType::kStatusReply));
  AgentStatus s;
  Status status = ForEachField(message.body, kStatusKeys, [&s](size_t i, std::string_view v) {
    const std::string_view key = kStatusKeys[i];
    switch (i) {
      case 0: {
        LUMOS_ASSIGN_OR_RETURN(s.pid, ParseUnsigned(key, v, kMaxU32));
        return Status::Ok();
      }
      case 1: {
        LUMOS_ASSIGN_OR_RETURN(s.job, ParseText(key, v, kMaxJobBytes));
        return Status::Ok();
      }
      case 2: {
        LUMOS_ASSIGN_OR_RETURN(s.host, ParseText(key, v, kMaxHostBytes));
        return Status::Ok();
      }
      case 3: {
        LUMOS_ASSIGN_OR_RETURN(s.rank, ParseSigned(key, v, -1, kMaxI32));
        return Status::Ok();
      }
      case 4: {
        LUMOS_ASSIGN_OR_RETURN(s.world_size, ParseSigned(key, v, -1, kMaxI32));
        return Status::Ok();
      }
      case 5: {
        LUMOS_ASSIGN_OR_RETURN(s.mode,
                               ParseWord(key, v, {"", "continuous", "periodic", "on-demand"}));
        return Status::Ok();
      }
      case 6: {
        LUMOS_ASSIGN_OR_RETURN(
            s.state,
            ParseWord(key, v, {"", "dormant", "armed", "capturing", "recording", "stopped"}));
        return Status::Ok();
      }
      case 7: {
        LUMOS_ASSIGN_OR_RETURN(s.windows_written, ParseUnsigned(key, v, kMaxU64));
        return Status::Ok();
      }
      case 8: {
        LUMOS_ASSIGN_OR_RETURN(s.last_window, ParseText(key, v, kMaxPathBytes, true));
        return Status::Ok();
      }
      case 9: {
        LUMOS_ASSIGN_OR_RETURN(s.last_window_end_realtime_ns, ParseSigned(key, v, 0, kMaxI64));
        return Status::Ok();
      }
      case 10: {
        LUMOS_ASSIGN_OR_RETURN(s.bytes_written, ParseUnsigned(key, v, kMaxU64));
        return Status::Ok();
      }
      case 11: {
        LUMOS_ASSIGN_OR_RETURN(s.events_dropped, ParseUnsigned(key, v, kMaxU64));
        return Status::Ok();
      }
      case 12: {
        LUMOS_ASSIGN_OR_RETURN(s.control_rejected, ParseUnsigned(key, v, kMaxU64));
        return Status::Ok();
      }
      case 13: {
        LUMOS_ASSIGN_OR_RETURN(s.iteration, ParseUnsigned(key, v, kMaxU64));
        return Status::Ok();
      }
      case 14: {
        LUMOS_ASSIGN_OR_RETURN(s.iteration_known, ParseBool(key, v));
        return Status::Ok();
      }
      default: {
        LUMOS_ASSIGN_OR_RETURN(s.last_cancel, ParseText(key, v, kMaxReasonBytes));
        return Status::Ok();
      }
    }
  });
  if (!status.ok()) return status;
  return s;
}

StatusOr<CaptureRequest> DecodeCaptureRequest(const Message& message) {
  LUMOS_RETURN_IF_ERROR(ExpectType(message, MessageType::kCaptureRequest));
  CaptureRequest r;
  Status status = ForEachField(message.body, kCaptureKeys, [&r](size_t i, std::string_view v) {
    const std::string_view key = kCaptureKeys[i];
    switch (i) {
      case 0: {
        LUMOS_ASSIGN_OR_RETURN(r.request_id, ParseUnsigned(key, v, kMaxU64));
        return Status::Ok();
      }
      case 1: {
        LUMOS_ASSIGN_OR_RETURN(r.iterations, ParseUnsigned(key, v, kMaxU32));
        return Status::Ok();
      }
      case 2: {
        LUMOS_ASSIGN_OR_RETURN(r.duration_ms, ParseUnsigned(key, v, kMaxDurationMs));
        return Status::Ok();
      }
      case 3: {
        LUMOS_ASSIGN_OR_RETURN(r.at_realtime_ns, ParseSigned(key, v, 0, kMaxI64));
        return Status::Ok();
      }
      case 4: {
        LUMOS_ASSIGN_OR_RETURN(r.iteration_multiple, ParseUnsigned(key, v, kMaxU32));
        return Status::Ok();
      }
      case 5: {
        LUMOS_ASSIGN_OR_RETURN(r.window_realtime_ns, ParseSigned(key, v, 0, kMaxI64));
        return Status::Ok();
      }
      default: {
        LUMOS_ASSIGN_OR_RETURN(r.output_dir, ParseText(key, v, kMaxPathBytes, true));
        return Status::Ok();
      }
    }
  });
  if (!status.ok()) return status;
  if (r.iterations != 0 && r.duration_ms != 0) {
    return BadValue("duration_ms", "iterations is given too (at most one of them)");
  }
  return r;
}

StatusOr<CaptureReply> DecodeCaptureReply(const Message& message) {
  LUMOS_RETURN_IF_ERROR(ExpectType(message, MessageType::kCaptureReply));
  CaptureReply reply;
  Status status =
      ForEachField(message.body, kCaptureReplyKeys, [&reply](size_t i, std::string_view v) {
        if (i == 0) {
          LUMOS_ASSIGN_OR_RETURN(reply.accepted, ParseBool(kCaptureReplyKeys[i], v));
        } else {
          LUMOS_ASSIGN_OR_RETURN(reply.reason, ParseText(kCaptureReplyKeys[i], v, kMaxReasonBytes));
        }
        return Status::Ok();
      });
  if (!status.ok()) return status;
  return reply;
}

StatusOr<CancelRequest> DecodeCancelRequest(const Message& message) {
  LUMOS_RETURN_IF_ERROR(ExpectType(message, MessageType::kCancelRequest));
  CancelRequest r;
  LUMOS_RETURN_IF_ERROR(ForEachField(message.body, kCancelKeys, [&r](size_t, std::string_view v) {
    LUMOS_ASSIGN_OR_RETURN(r.request_id, ParseUnsigned(kCancelKeys[0], v, kMaxU64));
    return Status::Ok();
  }));
  return r;
}

StatusOr<CancelReply> DecodeCancelReply(const Message& message) {
  LUMOS_RETURN_IF_ERROR(ExpectType(message, MessageType::kCancelReply));
  CancelReply reply;
  Status status =
      ForEachField(message.body, kCancelReplyKeys, [&reply](size_t i, std::string_view v) {
        if (i == 0) {
          LUMOS_ASSIGN_OR_RETURN(reply.accepted, ParseBool(kCancelReplyKeys[i], v));
        } else {
          LUMOS_ASSIGN_OR_RETURN(reply.what, ParseText(kCancelReplyKeys[i], v, kMaxReasonBytes));
        }
        return Status::Ok();
      });
  if (!status.ok()) return status;
  return reply;
}

StatusOr<std::string> DecodeError(const Message& message) {
  LUMOS_RETURN_IF_ERROR(ExpectType(message, MessageType::kError));
  std::string reason;
  LUMOS_RETURN_IF_ERROR(
      ForEachField(message.body, kErrorKeys, [&reason](size_t, std::string_view v) {
        LUMOS_ASSIGN_OR_RETURN(reason, ParseText(kErrorKeys[0], v, kMaxReasonBytes));
        return Status::Ok();
      }));
  return reason;
}

}  // namespace lumos::agent::control
