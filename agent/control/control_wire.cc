#include "agent/control/control_wire.h"

#include <cstring>
#include <limits>

namespace lumos::agent::control {
namespace {

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

}  // namespace

namespace internal {

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

StatusOr<std::string> ParseText(std::string_view key, std::string_view value, size_t max_bytes,
                                bool absolute) {
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

Status ExpectType(const Message& message, MessageType type) {
  if (message.type == type) return Status::Ok();
  return Status::Error(std::string("expected ") + MessageTypeName(type) + ", got " +
                       MessageTypeName(message.type));
}

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

}  // namespace internal

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

}  // namespace lumos::agent::control
