#include "agent/control/control_protocol.h"

#include <limits>

namespace lumos::agent::control {
namespace {

using internal::BadValue;
using internal::BodyBuilder;
using internal::ExpectType;
using internal::ForEachField;
using internal::Frame;
using internal::FrameChecked;
using internal::ParseBool;
using internal::ParseSigned;
using internal::ParseText;
using internal::ParseUnsigned;
using internal::ParseWord;

constexpr uint64_t kMaxDurationMs = 7ULL * 24 * 3600 * 1000;  // A week: longer is a typo.

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
