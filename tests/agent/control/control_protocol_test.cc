// The control wire format (agent/control/control_protocol.h): every message type round-trips,
// and every kind of bad message (framing, version, size, type, lines, keys, values) is refused
// with its one-line reason and the counter it belongs to.
#include "agent/control/control_protocol.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "agent/control/control_client.h"

namespace lumos::agent::control {
namespace {

// A message with any header fields and body, as a hostile peer could send it.
std::string RawMessage(uint16_t type, const std::string& body, uint16_t version = 1,
                       int64_t body_bytes = -1, const char* magic = "LMCT") {
  std::string out(magic, 4);
  const uint32_t length =
      body_bytes < 0 ? static_cast<uint32_t>(body.size()) : static_cast<uint32_t>(body_bytes);
  out.push_back(static_cast<char>(version & 0xff));
  out.push_back(static_cast<char>(version >> 8));
  out.push_back(static_cast<char>(type & 0xff));
  out.push_back(static_cast<char>(type >> 8));
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>(length >> shift));
  return out + body;
}

constexpr uint16_t kCapture = static_cast<uint16_t>(MessageType::kCaptureRequest);
constexpr uint16_t kStatus = static_cast<uint16_t>(MessageType::kStatusReply);

// The reason a CaptureRequest with this body is refused ("" when accepted).
std::string CaptureBodyError(const std::string& body) {
  const std::string bytes = RawMessage(kCapture, body);
  StatusOr<Message> message = DecodeMessage(bytes);
  if (!message.ok()) return message.status().message();
  StatusOr<CaptureRequest> request = DecodeCaptureRequest(*message);
  return request.ok() ? "" : request.status().message();
}

constexpr uint16_t kCancel = static_cast<uint16_t>(MessageType::kCancelRequest);

std::string CancelBodyError(const std::string& body) {
  const std::string bytes = RawMessage(kCancel, body);
  StatusOr<Message> message = DecodeMessage(bytes);
  if (!message.ok()) return message.status().message();
  StatusOr<CancelRequest> request = DecodeCancelRequest(*message);
  return request.ok() ? "" : request.status().message();
}

std::string StatusBodyError(const std::string& body) {
  const std::string bytes = RawMessage(kStatus, body);
  StatusOr<Message> message = DecodeMessage(bytes);
  if (!message.ok()) return message.status().message();
  StatusOr<AgentStatus> status = DecodeStatusReply(*message);
  return status.ok() ? "" : status.status().message();
}

AgentStatus FullStatus() {
  AgentStatus s;
  s.pid = 4242;
  s.job = "job%7 with spaces";
  s.host = "node-17.cluster";
  s.rank = 3;
  s.world_size = 64;
  s.mode = "periodic";
  s.state = "capturing";
  s.windows_written = 12;
  s.last_window =
      "/scratch/traces/w\xc3\xa9"
      "ek=1/job.host.4242.rank3.pb.zst";
  s.last_window_end_realtime_ns = 1'790'000'000'123'456'789;
  s.bytes_written = 1ULL << 40;
  s.events_dropped = 17;
  s.control_rejected = 2;
  s.iteration = UINT64_MAX;
  s.iteration_known = true;
  return s;
}

TEST(ControlProtocolTest, EveryMessageRoundTrips) {
  StatusOr<std::string> status_request = EncodeStatusRequest();
  ASSERT_TRUE(status_request.ok());
  EXPECT_EQ(status_request->size(), kHeaderBytes);
  StatusOr<Message> message = DecodeMessage(*status_request);
  ASSERT_TRUE(message.ok()) << message.status().message();
  EXPECT_TRUE(DecodeStatusRequest(*message).ok());

  const AgentStatus status = FullStatus();
  StatusOr<std::string> status_bytes = EncodeStatusReply(status);
  ASSERT_TRUE(status_bytes.ok()) << status_bytes.status().message();
  message = DecodeMessage(*status_bytes);
  ASSERT_TRUE(message.ok());
  StatusOr<AgentStatus> status_back = DecodeStatusReply(*message);
  ASSERT_TRUE(status_back.ok()) << status_back.status().message();
  EXPECT_EQ(*status_back, status);

  CaptureRequest request;
  request.request_id = 0xfedcba9876543210ULL;
  request.duration_ms = 2500;
  request.at_realtime_ns = 1'796'169'000'000'000'000;
  request.iteration_multiple = 100;
  request.window_realtime_ns = request.at_realtime_ns;
  request.output_dir = "/data/100% done";
  StatusOr<std::string> request_bytes = EncodeCaptureRequest(request);
  ASSERT_TRUE(request_bytes.ok()) << request_bytes.status().message();
  message = DecodeMessage(*request_bytes);
  ASSERT_TRUE(message.ok());
  StatusOr<CaptureRequest> request_back = DecodeCaptureRequest(*message);
  ASSERT_TRUE(request_back.ok()) << request_back.status().message();
  EXPECT_EQ(*request_back, request);

  for (const CaptureReply& reply : {CaptureReply{true, ""}, CaptureReply{false, "busy: w1"}}) {
    StatusOr<std::string> bytes = EncodeCaptureReply(reply);
    ASSERT_TRUE(bytes.ok());
    message = DecodeMessage(*bytes);
    ASSERT_TRUE(message.ok());
    StatusOr<CaptureReply> back = DecodeCaptureReply(*message);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, reply);
  }

  for (const uint64_t id : {uint64_t{0}, uint64_t{12}, UINT64_MAX}) {
    CancelRequest cancel;
    cancel.request_id = id;
    StatusOr<std::string> bytes = EncodeCancelRequest(cancel);
    ASSERT_TRUE(bytes.ok()) << bytes.status().message();
    message = DecodeMessage(*bytes);
    ASSERT_TRUE(message.ok());
    EXPECT_EQ(message->type, MessageType::kCancelRequest);
    StatusOr<CancelRequest> back = DecodeCancelRequest(*message);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, cancel);
  }
  for (const CancelReply& reply :
       {CancelReply{true, "request 12: armed, dropped before it starts"},
        CancelReply{false, "no window is armed or capturing"}, CancelReply{false, ""}}) {
    StatusOr<std::string> bytes = EncodeCancelReply(reply);
    ASSERT_TRUE(bytes.ok());
    message = DecodeMessage(*bytes);
    ASSERT_TRUE(message.ok());
    StatusOr<CancelReply> back = DecodeCancelReply(*message);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, reply);
  }
  // A status with a last cancel carries it; one without does not send the key (an older
  // lumos-ctl, which refuses unknown keys, reads it).
  AgentStatus cancelled = FullStatus();
  cancelled.last_cancel = "request 12: cancelled while armed, by uid 1000 pid 7 (lumos-ctl)";
  StatusOr<std::string> cancelled_bytes = EncodeStatusReply(cancelled);
  ASSERT_TRUE(cancelled_bytes.ok());
  message = DecodeMessage(*cancelled_bytes);
  ASSERT_TRUE(message.ok());
  status_back = DecodeStatusReply(*message);
  ASSERT_TRUE(status_back.ok()) << status_back.status().message();
  EXPECT_EQ(*status_back, cancelled);
  EXPECT_EQ(status_bytes->find("last_cancel"), std::string::npos);
  EXPECT_NE(cancelled_bytes->find("last_cancel="), std::string::npos);

  const std::string error = EncodeError("wrong version 2 (this side speaks 1)");
  message = DecodeMessage(error);
  ASSERT_TRUE(message.ok());
  StatusOr<std::string> reason = DecodeError(*message);
  ASSERT_TRUE(reason.ok());
  EXPECT_EQ(*reason, "wrong version 2 (this side speaks 1)");
}

// The body of a message is printable ASCII whatever its strings hold.
TEST(ControlProtocolTest, BodiesArePrintableAndEscapingCoversEveryByte) {
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte.push_back(static_cast<char>(b));
  const std::string escaped = EscapeValue(every_byte);
  for (char c : escaped) EXPECT_TRUE(c >= 0x20 && c <= 0x7e) << static_cast<int>(c);
  StatusOr<std::string> back = UnescapeValue(escaped);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, every_byte);
  EXPECT_EQ(EscapeValue("100%\n"), "100%25%0A");
  for (const char* bad : {"%", "%4", "a%zz", "%4a"}) {
    EXPECT_FALSE(UnescapeValue(bad).ok()) << bad;
  }
  StatusOr<std::string> bytes = EncodeStatusReply(FullStatus());
  ASSERT_TRUE(bytes.ok());
  for (size_t i = kHeaderBytes; i < bytes->size(); ++i) {
    const char c = (*bytes)[i];
    EXPECT_TRUE(c == '\n' || (c >= 0x20 && c <= 0x7e)) << i;
  }
}

TEST(ControlProtocolTest, HeaderErrorsNameWhatIsWrongAndTheirCounter) {
  struct Case {
    std::string bytes;
    std::string reason;
    Rejection rejection;
  };
  const Case cases[] = {
      {RawMessage(1, "", 1, -1, "GET "), "bad magic (not a Lumos control message)",
       Rejection::kMalformed},
      {RawMessage(1, "", 2), "wrong version 2 (this side speaks 1)", Rejection::kWrongVersion},
      {RawMessage(1, "", 0), "wrong version 0 (this side speaks 1)", Rejection::kWrongVersion},
      {RawMessage(9, ""), "unknown message type 9", Rejection::kMalformed},
      {RawMessage(8, ""), "unknown message type 8", Rejection::kMalformed},
      {RawMessage(0, ""), "unknown message type 0", Rejection::kMalformed},
      {RawMessage(1, "", 1, 70000), "oversized: body of 70000 bytes > max 4084",
       Rejection::kOversized},
      {RawMessage(1, "", 1, 0xffffffff), "oversized: body of 4294967295 bytes > max 4084",
       Rejection::kOversized},
      {RawMessage(1, "", 1, 4085), "oversized: body of 4085 bytes > max 4084",
       Rejection::kOversized},
      {"LMCT\x01", "truncated header: 5 of 12 bytes", Rejection::kMalformed},
      {RawMessage(3, "request_id=1\n", 1, 20), "truncated: body of 13 bytes, header says 20",
       Rejection::kMalformed},
      {RawMessage(3, "request_id=1\n", 1, 5), "trailing bytes: body of 13 bytes, header says 5",
       Rejection::kMalformed},
  };
  for (const Case& c : cases) {
    Rejection rejection = Rejection::kMalformed;
    StatusOr<Message> message = DecodeMessage(c.bytes, &rejection);
    ASSERT_FALSE(message.ok()) << c.reason;
    EXPECT_EQ(message.status().message(), c.reason);
    EXPECT_EQ(rejection, c.rejection) << c.reason;
  }
  // The largest body there is passes the framing.
  EXPECT_TRUE(DecodeMessage(RawMessage(3, std::string(kMaxBodyBytes, 'x'))).ok());
}

TEST(ControlProtocolTest, MalformedLinesAreRefusedWithTheirLineNumber) {
  EXPECT_EQ(CaptureBodyError("request_id=1\niterations\n"), "malformed line 2: no '='");
  EXPECT_EQ(CaptureBodyError("request_id=1\n\n"), "malformed line 2: empty");
  EXPECT_EQ(CaptureBodyError("request_id=1"), "malformed line 1: no newline at its end");
  EXPECT_EQ(CaptureBodyError("=1\n"), "malformed line 1: no key before '='");
  EXPECT_EQ(CaptureBodyError("Request_ID=1\n"),
            "malformed line 1: key 'Request_ID' is not [a-z0-9_]+");
  EXPECT_EQ(CaptureBodyError("request_id=1\nrequest_id=2\n"),
            "malformed line 2: key 'request_id' given twice");
  EXPECT_EQ(CaptureBodyError("output_dir=/tmp/\x07x\n"),
            "malformed line 1: non-printable byte 0x07");
  EXPECT_EQ(CaptureBodyError("output_dir=/tmp/\xc3\xa9\n"),
            "malformed line 1: non-printable byte 0xc3");
  EXPECT_EQ(CaptureBodyError(std::string("request_id=1\0\n", 14)),
            "malformed line 1: non-printable byte 0x00");
  EXPECT_EQ(CaptureBodyError("request_id=1\r\n"), "malformed line 1: non-printable byte 0x0d");
}

TEST(ControlProtocolTest, UnknownKeysAreRefused) {
  EXPECT_EQ(CaptureBodyError("colour=red\n"), "unknown key 'colour'");
  // The peer's identity comes from the socket, never from the message.
  EXPECT_EQ(CaptureBodyError("peer_uid=0\n"), "unknown key 'peer_uid'");
  EXPECT_EQ(CaptureBodyError("peer_comm=lumos-ctl\n"), "unknown key 'peer_comm'");
  // A status reply's keys are not a capture request's.
  EXPECT_EQ(CaptureBodyError("job=x\n"), "unknown key 'job'");
  // A status request has no keys at all.
  const std::string bytes = RawMessage(1, "pid=1\n");
  StatusOr<Message> message = DecodeMessage(bytes);
  ASSERT_TRUE(message.ok());
  Status status = DecodeStatusRequest(*message);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "unknown key 'pid'");
}

TEST(ControlProtocolTest, EveryValueIsChecked) {
  EXPECT_EQ(CaptureBodyError("iterations=ten\n"),
            "bad value for key 'iterations': 'ten' is not a number");
  EXPECT_EQ(CaptureBodyError("iterations=\n"),
            "bad value for key 'iterations': '' is not a number");
  EXPECT_EQ(CaptureBodyError("iterations=+5\n"),
            "bad value for key 'iterations': '+5' is not a number");
  EXPECT_EQ(CaptureBodyError("iterations= 5\n"),
            "bad value for key 'iterations': ' 5' is not a number");
  EXPECT_EQ(CaptureBodyError("iterations=05\n"),
            "bad value for key 'iterations': '05' has a leading zero");
  EXPECT_EQ(CaptureBodyError("iterations=4294967296\n"),
            "bad value for key 'iterations': 4294967296 > max 4294967295");
  EXPECT_EQ(CaptureBodyError("request_id=18446744073709551616\n"),
            "bad value for key 'request_id': '18446744073709551616' is out of range");
  EXPECT_EQ(CaptureBodyError("duration_ms=604800001\n"),
            "bad value for key 'duration_ms': 604800001 > max 604800000");
  EXPECT_EQ(CaptureBodyError("at_realtime_ns=-1\n"),
            "bad value for key 'at_realtime_ns': -1 < min 0");
  EXPECT_EQ(CaptureBodyError("at_realtime_ns=9223372036854775808\n"),
            "bad value for key 'at_realtime_ns': 9223372036854775808 > max 9223372036854775807");
  EXPECT_EQ(CaptureBodyError("output_dir=relative/dir\n"),
            "bad value for key 'output_dir': 'relative/dir' is not an absolute path");
  EXPECT_EQ(CaptureBodyError("output_dir=/tmp/%0Ax\n"),
            "bad value for key 'output_dir': control character 0x0a");
  EXPECT_EQ(CaptureBodyError("output_dir=/tmp/%ZZ\n"),
            "bad value for key 'output_dir': '%' at offset 5 without two upper-case hex digits");
  EXPECT_EQ(CaptureBodyError("output_dir=/" + std::string(kMaxPathBytes, 'a') + "\n"),
            "oversized: body of 4108 bytes > max 4084");
  EXPECT_EQ(CaptureBodyError("iterations=3\nduration_ms=1000\n"),
            "bad value for key 'duration_ms': iterations is given too (at most one of them)");
  EXPECT_EQ(CaptureBodyError("request_id=7\niterations=3\n"), "");

  EXPECT_EQ(StatusBodyError("rank=-2\n"), "bad value for key 'rank': -2 < min -1");
  EXPECT_EQ(StatusBodyError("rank=-0\n"), "bad value for key 'rank': '-0' is not a number");
  EXPECT_EQ(StatusBodyError("rank=2147483648\n"),
            "bad value for key 'rank': 2147483648 > max 2147483647");
  EXPECT_EQ(StatusBodyError("world_size=-1\nrank=-1\n"), "");
  EXPECT_EQ(StatusBodyError("mode=sometimes\n"),
            "bad value for key 'mode': 'sometimes' is not one of continuous, periodic, on-demand");
  EXPECT_EQ(StatusBodyError("state=Capturing\n"),
            "bad value for key 'state': 'Capturing' is not one of dormant, armed, capturing, "
            "recording, stopped");
  EXPECT_EQ(StatusBodyError("iteration_known=yes\n"),
            "bad value for key 'iteration_known': 'yes' is not 0 or 1");
  EXPECT_EQ(StatusBodyError("job=" + std::string(kMaxJobBytes + 1, 'j') + "\n"),
            "bad value for key 'job': 129 bytes > max 128");
}

TEST(ControlProtocolTest, BadCancelMessagesAreRefused) {
  EXPECT_EQ(CancelBodyError(""), "");  // Every key has its default: the window there is.
  EXPECT_EQ(CancelBodyError("request_id=42\n"), "");
  EXPECT_EQ(CancelBodyError("request_id=x\n"),
            "bad value for key 'request_id': 'x' is not a number");
  EXPECT_EQ(CancelBodyError("request_id=-1\n"),
            "bad value for key 'request_id': '-1' is not a number");
  EXPECT_EQ(CancelBodyError("request_id=18446744073709551616\n"),
            "bad value for key 'request_id': '18446744073709551616' is out of range");
  EXPECT_EQ(CancelBodyError("request_id=1\nrequest_id=2\n"),
            "malformed line 2: key 'request_id' given twice");
  EXPECT_EQ(CancelBodyError("request_id=1"), "malformed line 1: no newline at its end");
  // A capture's keys are not a cancel's; the peer's identity is never in the message.
  EXPECT_EQ(CancelBodyError("iterations=3\n"), "unknown key 'iterations'");
  EXPECT_EQ(CancelBodyError("peer_uid=0\n"), "unknown key 'peer_uid'");
  // A cancel reply is not a request (and the other way round).
  const std::string reply =
      RawMessage(static_cast<uint16_t>(MessageType::kCancelReply), "accepted=1\nwhat=x\n");
  StatusOr<Message> message = DecodeMessage(reply);
  ASSERT_TRUE(message.ok());
  EXPECT_EQ(DecodeCancelRequest(*message).status().message(),
            "expected CancelRequest, got CancelReply");
  EXPECT_TRUE(DecodeCancelReply(*message).ok());
  const std::string bad_reply =
      RawMessage(static_cast<uint16_t>(MessageType::kCancelReply), "accepted=2\n");
  message = DecodeMessage(bad_reply);
  ASSERT_TRUE(message.ok());
  EXPECT_EQ(DecodeCancelReply(*message).status().message(),
            "bad value for key 'accepted': '2' is not 0 or 1");
  EXPECT_EQ(StatusBodyError("last_cancel=a%0Ab\n"),
            "bad value for key 'last_cancel': control character 0x0a");
}

// What a sender could not have the receiver accept, it does not send.
TEST(ControlProtocolTest, EncodersRefuseWhatTheDecoderWould) {
  CaptureRequest request;
  request.output_dir = "/" + std::string(2000, '\xff');  // Escaped: three bytes each.
  StatusOr<std::string> bytes = EncodeCaptureRequest(request);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().message(), "CaptureRequest too large: body of 6112 bytes > max 4084");
  request.output_dir = "relative";
  bytes = EncodeCaptureRequest(request);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().message(),
            "cannot send CaptureRequest: bad value for key 'output_dir': 'relative' is not an "
            "absolute path");
  request.output_dir = "";
  request.iterations = 2;
  request.duration_ms = 3;
  EXPECT_FALSE(EncodeCaptureRequest(request).ok());
  AgentStatus status = FullStatus();
  status.job = "a\nb";
  EXPECT_FALSE(EncodeStatusReply(status).ok());
  // Reasons are cleaned rather than refused: a handler's reason always reaches lumos-ctl.
  StatusOr<std::string> reply = EncodeCaptureReply({false, "two\nlines" + std::string(900, 'x')});
  ASSERT_TRUE(reply.ok());
  StatusOr<Message> message = DecodeMessage(*reply);
  ASSERT_TRUE(message.ok());
  StatusOr<CaptureReply> back = DecodeCaptureReply(*message);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->reason.size(), kMaxReasonBytes);
  EXPECT_EQ(back->reason.substr(0, 10), "two lines" + std::string("x"));
}

// Every one-byte corruption of a valid request either is refused or decodes to a request that
// passes the checks again: nothing in between, no crash.
TEST(ControlProtocolTest, EveryOneByteCorruptionIsRefusedOrStillValid) {
  CaptureRequest request;
  request.request_id = 99;
  request.iterations = 5;
  request.iteration_multiple = 10;
  request.output_dir = "/tmp/out";
  StatusOr<std::string> good = EncodeCaptureRequest(request);
  ASSERT_TRUE(good.ok());
  size_t refused = 0;
  for (size_t i = 0; i < good->size(); ++i) {
    for (int value : {0x00, 0x0a, 0x25, 0x3d, 0x7f, 0xff, 0x31}) {
      std::string bytes = *good;
      if (static_cast<unsigned char>(bytes[i]) == value) continue;
      bytes[i] = static_cast<char>(value);
      StatusOr<Message> message = DecodeMessage(bytes);
      if (!message.ok()) {
        ++refused;
        continue;
      }
      if (message->type != MessageType::kCaptureRequest) {
        ++refused;
        continue;
      }
      StatusOr<CaptureRequest> decoded = DecodeCaptureRequest(*message);
      if (!decoded.ok()) {
        ++refused;
        continue;
      }
      EXPECT_TRUE(EncodeCaptureRequest(*decoded).ok()) << "byte " << i << " = " << value;
    }
  }
  EXPECT_GT(refused, good->size());
}

TEST(ControlProtocolTest, EndpointsAreFoundInProcNetUnix) {
  const std::string text =
      "Num       RefCount Protocol Flags    Type St Inode Path\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 31337 @lumos-agent.1234\n"
      "0000000000000000: 00000003 00000000 00000000 0001 03 31338 @lumos-agent.1234\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 31339 @lumos-agent.77\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 31340 /run/lumos-agent.5\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 31341 @lumos-agent.0012\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 31342 @lumos-agent.12x\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 31343 @lumos-agent.99999999999\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 31344 @lumos-agent.\n"
      "0000000000000000: 00000003 00000000 00000000 0001 03 31345\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 31346 @lumos-agent.4294967295";
  EXPECT_EQ(ParseAgentEndpoints(text), (std::vector<uint32_t>{77, 1234, 4294967295u}));
  EXPECT_TRUE(ParseAgentEndpoints("").empty());
}

}  // namespace
}  // namespace lumos::agent::control
