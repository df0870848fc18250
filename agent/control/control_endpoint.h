// Design: the agent's per-process control endpoint, which lumos-ctl talks to
// (control_wire.h and control_protocol.h are the wire format, control_client.h the other side).
//   Socket: a Linux abstract unix stream socket "@lumos-agent.<pid>" (SOCK_CLOEXEC,
//     non-blocking). Abstract names have no file permissions, so the owner-only rule is the
//     peer's credentials: every connection's SO_PEERCRED uid must equal this process's
//     effective uid, else it is closed at once, nothing read from it, and counted. Abstract
//     names live in the network namespace: lumos-ctl reaches the agents of its own one.
//   Thread: ONE thread, "lumos-control", created with pthread_create (no thread to be had: an
//     error Status, never an exception) with every signal blocked. It polls the listening
//     socket, a stop eventfd and up to kMaxConnections connections at once, each with its own
//     fixed kMaxMessageBytes buffer and a deadline of kConnectionDeadlineMs from its accept:
//     a client that sends nothing, or half a message, holds one slot until its deadline and
//     never delays another client. Per connection: one message (header first; a body length
//     over the maximum is refused from the header alone), decoded, handed to the handler when
//     valid, one reply (an Error reply with the reason when not), then the connection is
//     closed. It never allocates per byte received, never trusts a length, and one bad client
//     never stops it. The handler is called on this thread only, one call at a time; it must
//     be quick and must not take the job's threads' locks (ControlHandler).
//   Counters: relaxed atomics (each is a statistic read on its own; nothing is published
//     through them); a status reply's control_rejected is their rejected() sum.
//   Stop(): wakes the thread through the eventfd and joins it, waiting at most kStopJoinTimeoutMs
//     (a handler stuck in a call: the thread is then detached and its state left to it; it
//     frees the state when it ends). Connections still open are closed. Idempotent,
//     thread-safe; the destructor calls it.
//   fork(): the child inherits the sockets (CLOEXEC only covers exec) but not the thread, so
//     nothing in it serves them; the agent stays off in a fork child for its whole life.
//     Stop() in a process other than the one that started the endpoint (a fork child) only
//     closes its copies of the descriptors: it never writes the parent's eventfd or joins a
//     thread it does not have. CloseInForkChild() does the same, for a pthread_atfork child
//     handler, so the name is not held open by a child that outlives its parent.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "agent/control/control_protocol.h"
#include "base/status.h"

namespace lumos::agent::control {

// Implemented by the agent. Both methods run on the endpoint's thread, one call at a time.
class ControlHandler {
 public:
  virtual ~ControlHandler() = default;
  // Must be quick and lock-free for the job (atomics, a snapshot). control_rejected is filled
  // by the endpoint afterwards.
  virtual AgentStatus Status() = 0;
  // "" = accepted; else why it is refused (one line). The request is checked already
  // (control_protocol.h); peer_uid / peer_pid / peer_comm come from the connection.
  virtual std::string Capture(const CaptureRequest& request) = 0;
  // `lumos-ctl cancel`: what is cancelled, or why nothing is (accepted false). Checked and
  // filled as Capture's request.
  virtual CancelReply Cancel(const CancelRequest& request) = 0;
};

// The endpoint's counters, a snapshot.
struct EndpointCounters {
  uint64_t accepted = 0;               // Valid requests handed to the handler.
  uint64_t rejected_foreign_user = 0;  // Another uid (or credentials that could not be read).
  uint64_t rejected_malformed = 0;     // Bad magic, unknown type, bad body, truncated, ...
  uint64_t rejected_oversized = 0;     // Header's body length > kMaxBodyBytes.
  uint64_t rejected_version = 0;       // Another protocol version.
  uint64_t timed_out = 0;              // No whole message, or reply not taken, by the deadline.

  uint64_t rejected() const {
    return rejected_foreign_user + rejected_malformed + rejected_oversized + rejected_version +
           timed_out;
  }
};

// "lumos-agent.<pid>": the abstract socket name, without its leading NUL ("@" in
// /proc/net/unix).
std::string EndpointName(uint32_t pid);

class ControlEndpoint {
 public:
  static constexpr int kConnectionDeadlineMs = 500;
  static constexpr int kStopJoinTimeoutMs = 1000;
  static constexpr size_t kMaxConnections = 8;
  static constexpr int kListenBacklog = 16;

  // Binds "@lumos-agent.<pid>" (`pid`: the agent's getpid(); tests may pick others) and starts
  // the thread. `handler` must outlive the endpoint (or, after a Stop() that timed out, live
  // forever: the agent's handler is in a NoDestructor). Errors: the name is taken (another
  // process in another pid namespace with this pid, or a second endpoint here), socket or
  // thread creation failed; each one line.
  static StatusOr<std::unique_ptr<ControlEndpoint>> Start(ControlHandler* handler, uint32_t pid);

  ~ControlEndpoint();
  ControlEndpoint(const ControlEndpoint&) = delete;
  ControlEndpoint& operator=(const ControlEndpoint&) = delete;

  void Stop();
  // For a pthread_atfork child handler (see above): closes this copy of the descriptors only.
  void CloseInForkChild();

  EndpointCounters counters() const;
  const std::string& name() const { return name_; }

  struct State;  // Shared with the thread (control_endpoint.cc).

 private:
  ControlEndpoint(std::string name, State* state) : name_(std::move(name)), state_(state) {}

  std::string name_;
  // Owned; left to the thread when Stop() times out (see above). Null after Stop().
  State* state_ = nullptr;
  // Serialises Stop() callers and guards state_; the endpoint's thread never takes it.
  mutable std::mutex stop_mutex_;
  EndpointCounters final_counters_;  // The counters at Stop(), for counters() afterwards.
};

}  // namespace lumos::agent::control
