// libFuzzer target: the control protocol (agent/control/control_protocol.h), the bytes a peer
// sends to an agent's control endpoint and lumos-ctl reads back. The first input byte picks the
// mode, the rest is the message:
//   0..127    the rest is a whole message: DecodeMessage, then the decoder of its type;
//   128..255  the rest is a body, framed as type 1 + (byte - 128) % 7 (make_fuzz_seeds.cc writes
//             128 + type - 1), so mutations reach the body
//             parsers without having to keep a header right.
// Every decoder must return a Status for any input: never crash, hang, leak or read out of
// bounds (ASan + UBSan). What decodes must survive a round trip: encoding it succeeds (or fails
// only for its size), the encoding decodes to the same value, and encodes to the same bytes
// again (the encoding is canonical). The value escaping round-trips any bytes. A broken
// property traps. Seeds: tests/data/fuzz_seeds/control_protocol/ (make_fuzz_seeds.cc).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/control/control_protocol.h"

namespace {

namespace control = ::lumos::agent::control;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Decoded value -> Encode -> Decode: the same value, and the same bytes once more.
template <typename T, typename Encode, typename Decode>
void RoundTrip(const T& value, Encode encode, Decode decode) {
  lumos::StatusOr<std::string> bytes = encode(value);
  if (!bytes.ok()) {
    // Only a value whose encoding is longer than its decoded input (defaults of absent keys
    // added) may fail to encode: for its size.
    Check(bytes.status().message().find("too large") != std::string::npos);
    return;
  }
  Check(bytes->size() <= control::kMaxMessageBytes);
  lumos::StatusOr<control::Message> message = control::DecodeMessage(*bytes);
  Check(message.ok());
  lumos::StatusOr<T> again = decode(*message);
  Check(again.ok());
  Check(*again == value);
  lumos::StatusOr<std::string> bytes_again = encode(*again);
  Check(bytes_again.ok() && *bytes_again == *bytes);
}

void DecodeBody(const control::Message& message) {
  // Every decoder on every message: the wrong type must be refused, never misread.
  // A status request's body is empty or asks for the last cancellation ("last_cancel=1").
  bool with_last_cancel = false;
  const lumos::Status request = control::DecodeStatusRequest(message, &with_last_cancel);
  const bool is_request = message.type == control::MessageType::kStatusRequest;
  Check(!request.ok() || is_request);
  Check(request.ok() || !(is_request && message.body.empty()));
  lumos::StatusOr<control::AgentStatus> status = control::DecodeStatusReply(message);
  lumos::StatusOr<control::CaptureRequest> capture = control::DecodeCaptureRequest(message);
  lumos::StatusOr<control::CaptureReply> reply = control::DecodeCaptureReply(message);
  lumos::StatusOr<std::string> error = control::DecodeError(message);
  lumos::StatusOr<control::CancelRequest> cancel = control::DecodeCancelRequest(message);
  lumos::StatusOr<control::CancelReply> cancel_reply = control::DecodeCancelReply(message);
  const int decoded = (request.ok() ? 1 : 0) + (status.ok() ? 1 : 0) + (capture.ok() ? 1 : 0) +
                      (reply.ok() ? 1 : 0) + (error.ok() ? 1 : 0) + (cancel.ok() ? 1 : 0) +
                      (cancel_reply.ok() ? 1 : 0);
  Check(decoded <= 1);
  if (request.ok()) {
    lumos::StatusOr<std::string> bytes = control::EncodeStatusRequest(with_last_cancel);
    Check(bytes.ok());
    lumos::StatusOr<control::Message> again = control::DecodeMessage(*bytes);
    bool with_again = !with_last_cancel;
    Check(again.ok() && control::DecodeStatusRequest(*again, &with_again).ok() &&
          with_again == with_last_cancel);
  }
  if (status.ok()) {
    RoundTrip(*status, control::EncodeStatusReply,
              [](const control::Message& m) { return control::DecodeStatusReply(m); });
  }
  if (capture.ok()) {
    // The endpoint's fields never come from the wire.
    Check(capture->peer_uid == 0 && capture->peer_pid == 0 && capture->peer_comm.empty());
    Check(capture->iterations == 0 || capture->duration_ms == 0);
    Check(capture->output_dir.empty() || capture->output_dir[0] == '/');
    RoundTrip(*capture, control::EncodeCaptureRequest,
              [](const control::Message& m) { return control::DecodeCaptureRequest(m); });
  }
  if (reply.ok()) {
    Check(reply->reason.size() <= control::kMaxReasonBytes);
    RoundTrip(*reply, control::EncodeCaptureReply,
              [](const control::Message& m) { return control::DecodeCaptureReply(m); });
  }
  if (cancel.ok()) {
    Check(cancel->peer_uid == 0 && cancel->peer_pid == 0 && cancel->peer_comm.empty());
    RoundTrip(*cancel, control::EncodeCancelRequest,
              [](const control::Message& m) { return control::DecodeCancelRequest(m); });
  }
  if (cancel_reply.ok()) {
    Check(cancel_reply->what.size() <= control::kMaxReasonBytes);
    RoundTrip(*cancel_reply, control::EncodeCancelReply,
              [](const control::Message& m) { return control::DecodeCancelReply(m); });
  }
  if (status.ok()) Check(status->last_cancel.size() <= control::kMaxReasonBytes);
  if (error.ok()) {
    Check(error->size() <= control::kMaxReasonBytes);
    RoundTrip(
        *error,
        [](const std::string& reason) -> lumos::StatusOr<std::string> {
          return control::EncodeError(reason);
        },
        [](const control::Message& m) { return control::DecodeError(m); });
  }
}

std::string Frame(control::MessageType type, std::string_view body) {
  std::string out(control::kMagic, sizeof(control::kMagic));
  const auto put = [&out](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  put(control::kProtocolVersion, 2);
  put(static_cast<uint16_t>(type), 2);
  put(body.size(), 4);
  out.append(body);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  // Escaping: any bytes come back as they were, and the escaped form is printable.
  const std::string escaped = control::EscapeValue(rest);
  for (char c : escaped) Check(c >= 0x20 && c <= 0x7e);
  lumos::StatusOr<std::string> unescaped = control::UnescapeValue(escaped);
  Check(unescaped.ok() && *unescaped == rest);
  (void)control::UnescapeValue(rest);

  std::string framed;
  std::string_view bytes = rest;
  if (data[0] >= 128) {
    framed = Frame(static_cast<control::MessageType>(1 + (data[0] - 128) % 7), rest);
    bytes = framed;
  }
  control::Rejection rejection = control::Rejection::kMalformed;
  (void)control::DecodeHeader(bytes.substr(0, control::kHeaderBytes), &rejection);
  lumos::StatusOr<control::Message> message = control::DecodeMessage(bytes, &rejection);
  if (!message.ok()) return 0;
  Check(bytes.size() <= control::kMaxMessageBytes);
  Check(message->body.size() + control::kHeaderBytes == bytes.size());
  DecodeBody(*message);
  return 0;
}
