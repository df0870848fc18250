// Design: the framing every control message shares (control_protocol.h has the messages that
// lumos-ctl and an agent's control endpoint exchange). Pure functions, no I/O: every byte a peer
// sends is checked here or in control_protocol.cc before anything uses it (STYLE.md 3.4).
//
// A message is a fixed 12-byte header and a body, kMaxMessageBytes (4 KiB) at most in all:
//   bytes 0..3   magic "LMCT"
//   bytes 4..5   u16 little-endian protocol version (kProtocolVersion = 1)
//   bytes 6..7   u16 little-endian MessageType
//   bytes 8..11  u32 little-endian body length, at most kMaxBodyBytes
// Magic and version keep their place in every later version, so a reader always knows what it
// got. The body is lines `key=value\n`: keys [a-z0-9_]+, each known for the message type and
// given at most once (a missing key keeps its default); values printable ASCII (0x20..0x7e)
// with '%' escaping ('%' and every byte outside 0x20..0x7e are written "%XX", upper-case hex),
// so a path can hold any byte and the body never holds a control character. Decoded strings are
// then checked: no control characters (paths may hold UTF-8), each within its length limit.
// Numbers are decimal, without sign (but '-' where negative values exist), leading zeros or
// spaces, and in their field's range; booleans are 0 or 1; words are one of their set.
// Framing errors are one line naming what is wrong: "bad magic", "wrong version 2 (this side
// speaks 1)", "oversized: body of 70000 bytes > max 4084", "unknown message type 9",
// "malformed line 2: no '='", "unknown key 'foo'", "bad value for key 'iterations': ...".
// internal:: is the body's codec for control_protocol.cc's messages (a body's lines and values,
// built and checked); nothing else uses it.
// Threading: none; all functions are reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>

#include "base/status.h"

namespace lumos::agent::control {

inline constexpr char kMagic[4] = {'L', 'M', 'C', 'T'};
inline constexpr uint16_t kProtocolVersion = 1;
inline constexpr size_t kHeaderBytes = 12;
inline constexpr size_t kMaxMessageBytes = 4096;
inline constexpr size_t kMaxBodyBytes = kMaxMessageBytes - kHeaderBytes;

enum class MessageType : uint16_t {
  kStatusRequest = 1,  // Empty body.
  kStatusReply = 2,    // AgentStatus.
  kCaptureRequest = 3,
  kCaptureReply = 4,
  kError = 5,  // The peer's message was refused: `reason`.
  // Added in version 1 after the first five (an older agent: "unknown message type 6").
  kCancelRequest = 6,
  kCancelReply = 7,
};
const char* MessageTypeName(MessageType type);

// Which endpoint counter a rejected message goes to.
enum class Rejection : uint8_t { kMalformed, kOversized, kWrongVersion };

struct Header {
  uint16_t version = kProtocolVersion;
  MessageType type = MessageType::kError;
  uint32_t body_bytes = 0;
};

// The first kHeaderBytes of a message (`bytes` holds exactly those). Checks, in this order:
// magic, version, type, body length <= kMaxBodyBytes. On an error, *rejection (when given)
// says which counter it belongs to.
StatusOr<Header> DecodeHeader(std::string_view bytes, Rejection* rejection = nullptr);

// A whole message: header plus exactly body_bytes more. The body's lines are checked against
// the type's keys by the typed decoders (control_protocol.h); here only the framing.
struct Message {
  MessageType type = MessageType::kError;
  std::string_view body;  // Points into the decoded bytes.
};
StatusOr<Message> DecodeMessage(std::string_view bytes, Rejection* rejection = nullptr);

// The value escaping of bodies (exposed for tests and for lumos-ctl's messages).
std::string EscapeValue(std::string_view raw);
StatusOr<std::string> UnescapeValue(std::string_view escaped);

namespace internal {

// ---- building a body and its message ----

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

// The header and `body`; an error when the body exceeds kMaxBodyBytes.
StatusOr<std::string> Frame(MessageType type, const std::string& body);

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

// ---- reading a body ----

// "expected X, got Y" unless the message is of `type`.
Status ExpectType(const Message& message, MessageType type);

// A value as it appears in an error message: printable, cut to 40 bytes.
std::string Shown(std::string_view value);
Status BadValue(std::string_view key, const std::string& why);

StatusOr<uint64_t> ParseUnsigned(std::string_view key, std::string_view value, uint64_t max);
StatusOr<int64_t> ParseSigned(std::string_view key, std::string_view value, int64_t min,
                              int64_t max);
StatusOr<bool> ParseBool(std::string_view key, std::string_view value);
// Unescaped; no control characters; at most max_bytes; `absolute`: "" or starting with '/'.
StatusOr<std::string> ParseText(std::string_view key, std::string_view value, size_t max_bytes,
                                bool absolute = false);
StatusOr<std::string> ParseWord(std::string_view key, std::string_view value,
                                std::initializer_list<std::string_view> words);

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

}  // namespace internal
}  // namespace lumos::agent::control
