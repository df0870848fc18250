// Design: lumos-ctl's side of the control protocol (control_protocol.h): find the agents'
// endpoints on this host, send one request to one of them, read its one reply.
// Each call connects to "@lumos-agent.<pid>" (control_endpoint.h), checks that the endpoint
// belongs to this user (SO_PEERCRED uid == geteuid(): a name another user took is not talked
// to), sends one message and reads one reply, all within `timeout_ms` (non-blocking, poll);
// every reply byte is checked like any peer's. Errors are one line: no endpoint, another
// user's endpoint, closed without a reply (the agent refused this user, or stopped), timed
// out, or the reply's decode error; an Error reply reads "refused by the agent: <reason>".
// Threading: none shared; calls are independent.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/control/control_protocol.h"
#include "base/status.h"

namespace lumos::agent::control {

// The agent's status; control_rejected is its endpoint's count.
StatusOr<AgentStatus> QueryStatus(uint32_t pid, int timeout_ms);
// "" when the agent accepted the capture, else its reason for refusing it.
StatusOr<std::string> SendCapture(uint32_t pid, const CaptureRequest& request, int timeout_ms);

// The agent's answer to a cancel. An agent older than the cancel message answers "unknown
// message type": that error's message then starts with kOlderAgentPrefix.
inline constexpr std::string_view kOlderAgentPrefix = "this agent is older than lumos-ctl cancel";
StatusOr<CancelReply> SendCancel(uint32_t pid, const CancelRequest& request, int timeout_ms);

// One exchange of raw bytes (any message, even a bad one: tests): the reply's bytes, framing
// checked (DecodeMessage succeeds on them).
StatusOr<std::string> Exchange(uint32_t pid, std::string_view request, int timeout_ms);

// The pids of every "@lumos-agent.<pid>" in /proc/net/unix (this network namespace),
// deduplicated and sorted; empty when it cannot be read.
std::vector<uint32_t> ListAgentEndpoints();
// The same, from the text of a /proc/net/unix.
std::vector<uint32_t> ParseAgentEndpoints(std::string_view proc_net_unix);

}  // namespace lumos::agent::control
