// Design: the messages between lumos-ctl and an agent's control endpoint (control_endpoint.h),
// their fields and their checks. Pure functions, no I/O: every byte a peer sends is checked
// before anything uses it (STYLE.md 3.4). The framing every message shares (the 12-byte header,
// the `key=value` body, value escaping, framing errors) is control_wire.h's.
//
// Each message type has its keys (control_protocol.cc), each value its range: numbers within
// their field's range, booleans 0 or 1, words one of their set, texts within their length limit
// (paths absolute).
// Types added later keep version 1 (an older agent answers an Error "unknown message type N",
// which tells lumos-ctl what it runs); keys added later to a reply are sent only when they say
// something (an older lumos-ctl reads the reply until then).
// Threading: none; all functions are reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/control/control_wire.h"
#include "base/status.h"

namespace lumos::agent::control {

// Longest output_dir / last_window path (PATH_MAX - 1), job id (as LUMOS_JOB_ID) and host name.
inline constexpr size_t kMaxPathBytes = 4095;
inline constexpr size_t kMaxJobBytes = 128;
inline constexpr size_t kMaxHostBytes = 255;
inline constexpr size_t kMaxReasonBytes = 512;

// A capture window asked for by lumos-ctl (see the README's `lumos-ctl capture`).
struct CaptureRequest {
  uint64_t request_id = 0;     // lumos-ctl picks one random value per command; every process it
                               // reaches gets the same one.
  uint32_t iterations = 0;     // --iterations K (whole iterations); 0 = not given.
  uint64_t duration_ms = 0;    // --duration S (seconds, stored in ms); at most one of iterations
                               // and duration_ms is non-zero; both 0 = the agent's default.
  int64_t at_realtime_ns = 0;  // --at TIME: start at the first iteration boundary at or after
                               // this CLOCK_REALTIME instant; 0 = at the next boundary.
  uint32_t iteration_multiple = 0;  // --every-iteration N: start at the next iteration whose
                                    // index is a multiple of N; 0 = none.
  int64_t window_realtime_ns = 0;   // Names the window directory: --at, else lumos-ctl's
                                    // CLOCK_REALTIME now; the same for every process of a command.
  std::string output_dir;           // -o DIR made absolute by lumos-ctl; "" = LUMOS_OUTPUT_DIR.
  // Filled by the endpoint from SO_PEERCRED and /proc/<pid>/comm, never from the message (a
  // message naming these keys is refused: unknown key).
  uint32_t peer_uid = 0;
  uint32_t peer_pid = 0;
  std::string peer_comm;

  bool operator==(const CaptureRequest& other) const = default;
};

// `lumos-ctl cancel`: the window a capture request armed (waiting for its iteration or its --at
// time) is dropped before it starts; one that is capturing ends now, its file kept and closed,
// its CaptureWindow's missed_target saying who cancelled it.
struct CancelRequest {
  uint64_t request_id = 0;  // --request ID: only that request's window; 0 = whichever window is
                            // armed or capturing (a periodic one too), or the request waiting.
  // Filled by the endpoint, as CaptureRequest's.
  uint32_t peer_uid = 0;
  uint32_t peer_pid = 0;
  std::string peer_comm;

  bool operator==(const CancelRequest& other) const = default;
};

struct CancelReply {
  bool accepted = false;  // A window (or a waiting request) is cancelled.
  std::string what;       // One line: what is cancelled and how, or why nothing is.

  bool operator==(const CancelReply& other) const = default;
};

// What one agent says about itself (`lumos-ctl status`).
struct AgentStatus {
  uint32_t pid = 0;
  std::string job;  // "" unknown.
  std::string host;
  int32_t rank = -1;  // -1 unknown.
  int32_t world_size = -1;
  std::string mode;   // "continuous" | "periodic" | "on-demand"
  std::string state;  // "dormant" | "armed" | "capturing" | "recording" (continuous) | "stopped"
  uint64_t windows_written = 0;
  std::string last_window;  // Path of the last window's file; "" none.
  int64_t last_window_end_realtime_ns = 0;
  uint64_t bytes_written = 0;
  uint64_t events_dropped = 0;
  uint64_t control_rejected = 0;  // Filled by the endpoint (its own counters), not the handler.
  uint64_t iteration = 0;         // The iteration index the agent is at, when iteration_known.
  bool iteration_known = false;
  // What the last `lumos-ctl cancel` did ("request 12 cancelled while armed by uid ..."); ""
  // none, and then the key is not sent (an older lumos-ctl refuses unknown keys).
  std::string last_cancel;

  bool operator==(const AgentStatus& other) const = default;
};

struct CaptureReply {
  bool accepted = false;
  std::string reason;  // Why not, one line; "" when accepted.

  bool operator==(const CaptureReply& other) const = default;
};

// Encoders: a whole message, or an error when it would exceed kMaxMessageBytes (a very long
// path) or a field is out of its range (the decoder's checks, applied before sending).
// with_last_cancel: asks for the status key last_cancel, which came after the first lumos-ctl
// and is sent only to a client that asks (an older lumos-ctl refuses a reply with a key it does
// not know). An older agent refuses the request ("unknown key 'last_cancel'"): ask again without.
StatusOr<std::string> EncodeStatusRequest(bool with_last_cancel = false);
StatusOr<std::string> EncodeStatusReply(const AgentStatus& status);
StatusOr<std::string> EncodeCaptureRequest(const CaptureRequest& request);
StatusOr<std::string> EncodeCaptureReply(const CaptureReply& reply);
StatusOr<std::string> EncodeCancelRequest(const CancelRequest& request);
StatusOr<std::string> EncodeCancelReply(const CancelReply& reply);
// The reason is cut to kMaxReasonBytes; never fails.
std::string EncodeError(std::string_view reason);

// Body decoders (the message's type must match: else "expected X, got Y").
Status DecodeStatusRequest(const Message& message, bool* with_last_cancel = nullptr);
StatusOr<AgentStatus> DecodeStatusReply(const Message& message);
// peer_* stay 0 / "": the endpoint fills them.
StatusOr<CaptureRequest> DecodeCaptureRequest(const Message& message);
StatusOr<CaptureReply> DecodeCaptureReply(const Message& message);
// peer_* stay 0 / "": the endpoint fills them.
StatusOr<CancelRequest> DecodeCancelRequest(const Message& message);
StatusOr<CancelReply> DecodeCancelReply(const Message& message);
StatusOr<std::string> DecodeError(const Message& message);

}  // namespace lumos::agent::control
