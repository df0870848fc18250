#include "agent/control/control_endpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <string_view>

namespace lumos::agent::control {

namespace {

int64_t MonotonicMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// /proc/<pid>/comm of a peer, control characters replaced; "" when unreadable (it may be gone).
std::string PeerComm(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/comm";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buf[64];
  const ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  if (n <= 0) return "";
  std::string comm(buf, static_cast<size_t>(n));
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  for (char& c : comm) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = '?';
  }
  return comm;
}

}  // namespace

struct ControlEndpoint::State {
  // One connection: its buffer is fixed, filled up to `expected` bytes (the header, then the
  // header plus the body its header announced, never more than kMaxMessageBytes).
  struct Slot {
    int fd = -1;
    bool writing = false;
    int64_t deadline_ms = 0;
    ucred peer{};
    size_t filled = 0;
    size_t expected = kHeaderBytes;
    char buffer[kMaxMessageBytes];
    std::string reply;  // At most kMaxMessageBytes.
    size_t sent = 0;
  };

  ControlHandler* handler = nullptr;
  int listen_fd = -1;
  int wake_fd = -1;
  pid_t owner_pid = 0;
  uid_t uid = 0;
  pthread_t thread{};
  // Set by whichever of the thread (at its end) and a timed-out Stop() comes second, which then
  // frees the state: see Stop().
  std::atomic<bool> handed_over{false};
  Slot slots[kMaxConnections];

  std::atomic<uint64_t> accepted{0}, rejected_foreign_user{0}, rejected_malformed{0},
      rejected_oversized{0}, rejected_version{0}, timed_out{0};

  static void Count(std::atomic<uint64_t>* counter) {
    // Relaxed: a statistic; nothing else is published through it.
    counter->fetch_add(1, std::memory_order_relaxed);
  }
  EndpointCounters Snapshot() const {
    EndpointCounters c;
    c.accepted = accepted.load(std::memory_order_relaxed);
    c.rejected_foreign_user = rejected_foreign_user.load(std::memory_order_relaxed);
    c.rejected_malformed = rejected_malformed.load(std::memory_order_relaxed);
    c.rejected_oversized = rejected_oversized.load(std::memory_order_relaxed);
    c.rejected_version = rejected_version.load(std::memory_order_relaxed);
    c.timed_out = timed_out.load(std::memory_order_relaxed);
    return c;
  }
  void CloseAll() {
    for (Slot& slot : slots) CloseFd(&slot.fd);
    CloseFd(&listen_fd);
    CloseFd(&wake_fd);
  }

  static void* ThreadMain(void* arg);
  void Loop();
  void AcceptAll(int64_t now_ms);
  void Service(Slot& slot);
  void Dispatch(Slot& slot);
  void Reply(Slot& slot, std::string bytes);
  void Refuse(Slot& slot, Rejection rejection, const lumos::Status& why);
  void Flush(Slot& slot);
  void Finish(Slot& slot) {
    CloseFd(&slot.fd);
    slot.reply.clear();
    slot.reply.shrink_to_fit();
  }
};

std::string EndpointName(uint32_t pid) { return "lumos-agent." + std::to_string(pid); }

void* ControlEndpoint::State::ThreadMain(void* arg) {
  auto* state = static_cast<State*>(arg);
  pthread_setname_np(pthread_self(), "lumos-control");
  state->Loop();
  state->CloseAll();
  // A Stop() that gave up waiting left the state to this thread: free it.
  if (state->handed_over.exchange(true, std::memory_order_acq_rel)) delete state;
  return nullptr;
}

void ControlEndpoint::State::Loop() {
  pollfd fds[2 + kMaxConnections];
  Slot* polled[2 + kMaxConnections];
  for (;;) {
    size_t n = 0;
    fds[n++] = {wake_fd, POLLIN, 0};
    bool slot_free = false;
    int64_t next_deadline_ms = -1;
    for (Slot& slot : slots) {
      if (slot.fd < 0) {
        slot_free = true;
        continue;
      }
      polled[n] = &slot;
      fds[n++] = {slot.fd, static_cast<short>(slot.writing ? POLLOUT : POLLIN), 0};
      if (next_deadline_ms < 0 || slot.deadline_ms < next_deadline_ms) {
        next_deadline_ms = slot.deadline_ms;
      }
    }
    // With every slot taken, new clients wait in the backlog until a slot's deadline frees it.
    const size_t listen_index = n;
    if (slot_free) fds[n++] = {listen_fd, POLLIN, 0};
    int timeout_ms = -1;
    if (next_deadline_ms >= 0) {
      const int64_t left = next_deadline_ms - MonotonicMs();
      timeout_ms = left < 0 ? 0 : static_cast<int>(left);
    }
    const int ready = poll(fds, n, timeout_ms);
    if (ready < 0 && errno != EINTR) return;  // Cannot happen with valid descriptors.
    if (ready > 0 && (fds[0].revents & POLLIN) != 0) return;  // Stop().
    for (size_t i = 1; i < listen_index; ++i) {
      if (ready > 0 && fds[i].revents != 0) Service(*polled[i]);
    }
    const int64_t now_ms = MonotonicMs();
    for (Slot& slot : slots) {
      if (slot.fd < 0 || now_ms < slot.deadline_ms) continue;
      Count(&timed_out);
      if (!slot.writing) {
        // Best effort: the client may be waiting for a reply it will never otherwise get.
        Reply(slot, EncodeError("timed out: " + std::to_string(slot.filled) + " of " +
                                std::to_string(slot.expected) + " bytes within " +
                                std::to_string(kConnectionDeadlineMs) + " ms"));
      }
      Finish(slot);
    }
    if (ready > 0 && listen_index < n && (fds[listen_index].revents & POLLIN) != 0) {
      AcceptAll(now_ms);
    }
  }
}

void ControlEndpoint::State::AcceptAll(int64_t now_ms) {
  for (Slot& slot : slots) {
    if (slot.fd >= 0) continue;
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN: none left; anything else: try again at the next poll.
    ucred peer{};
    socklen_t len = sizeof(peer);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || len != sizeof(peer) ||
        peer.uid != uid) {
      // Another user (or unknown): nothing is read from it and nothing is said to it.
      Count(&rejected_foreign_user);
      close(fd);
      continue;
    }
    slot.fd = fd;
    slot.writing = false;
    slot.deadline_ms = now_ms + kConnectionDeadlineMs;
    slot.peer = peer;
    slot.filled = 0;
    slot.expected = kHeaderBytes;
    slot.sent = 0;
  }
}

void ControlEndpoint::State::Service(Slot& slot) {
  if (slot.writing) {
    Flush(slot);
    return;
  }
  while (slot.filled < slot.expected) {
    const ssize_t got = recv(slot.fd, slot.buffer + slot.filled, slot.expected - slot.filled, 0);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (got <= 0) {
      // Closed (or failed) before a whole message. A client that sent nothing (a probe) is
      // not counted.
      if (slot.filled > 0) Count(&rejected_malformed);
      Finish(slot);
      return;
    }
    slot.filled += static_cast<size_t>(got);
    if (slot.filled == kHeaderBytes && slot.expected == kHeaderBytes) {
      Rejection rejection = Rejection::kMalformed;
      StatusOr<Header> header =
          DecodeHeader(std::string_view(slot.buffer, kHeaderBytes), &rejection);
      if (!header.ok()) {
        // The body (perhaps huge) is never read.
        Refuse(slot, rejection, header.status());
        return;
      }
      slot.expected = kHeaderBytes + header->body_bytes;
    }
  }
  Dispatch(slot);
}

void ControlEndpoint::State::Dispatch(Slot& slot) {
  Rejection rejection = Rejection::kMalformed;
  StatusOr<Message> message = DecodeMessage(std::string_view(slot.buffer, slot.filled), &rejection);
  if (!message.ok()) {
    Refuse(slot, rejection, message.status());
    return;
  }
  // The handler is the agent's code: whatever it throws stays here (STYLE.md 3.2).
  try {
    if (message->type == MessageType::kStatusRequest) {
      bool with_last_cancel = false;
      if (Status valid = DecodeStatusRequest(*message, &with_last_cancel); !valid.ok()) {
        Refuse(slot, Rejection::kMalformed, valid);
        return;
      }
      Count(&accepted);
      AgentStatus status = handler->Status();
      // Only to a client that asked: an older lumos-ctl refuses a key it does not know.
      if (!with_last_cancel) status.last_cancel.clear();
      status.control_rejected = Snapshot().rejected();
      StatusOr<std::string> reply = EncodeStatusReply(status);
      Reply(slot, reply.ok() ? std::move(reply).value() : EncodeError(reply.status().message()));
      return;
    }
    if (message->type == MessageType::kCaptureRequest) {
      StatusOr<CaptureRequest> request = DecodeCaptureRequest(*message);
      if (!request.ok()) {
        Refuse(slot, Rejection::kMalformed, request.status());
        return;
      }
      request->peer_uid = slot.peer.uid;
      request->peer_pid = static_cast<uint32_t>(slot.peer.pid);
      request->peer_comm = PeerComm(slot.peer.pid);
      Count(&accepted);
      CaptureReply capture;
      capture.reason = handler->Capture(*request);
      capture.accepted = capture.reason.empty();
      StatusOr<std::string> reply = EncodeCaptureReply(capture);
      Reply(slot, reply.ok() ? std::move(reply).value() : EncodeError(reply.status().message()));
      return;
    }
    if (message->type == MessageType::kCancelRequest) {
      StatusOr<CancelRequest> request = DecodeCancelRequest(*message);
      if (!request.ok()) {
        Refuse(slot, Rejection::kMalformed, request.status());
        return;
      }
      request->peer_uid = slot.peer.uid;
      request->peer_pid = static_cast<uint32_t>(slot.peer.pid);
      request->peer_comm = PeerComm(slot.peer.pid);
      Count(&accepted);
      StatusOr<std::string> reply = EncodeCancelReply(handler->Cancel(*request));
      Reply(slot, reply.ok() ? std::move(reply).value() : EncodeError(reply.status().message()));
      return;
    }
  } catch (...) {
    Reply(slot, EncodeError("the agent failed to answer (internal error)"));
    return;
  }
  Refuse(slot, Rejection::kMalformed,
         Status::Error(std::string("unexpected ") + MessageTypeName(message->type) +
                       " (an agent takes StatusRequest, CaptureRequest and CancelRequest)"));
}

void ControlEndpoint::State::Refuse(Slot& slot, Rejection rejection, const lumos::Status& why) {
  switch (rejection) {
    case Rejection::kMalformed:
      Count(&rejected_malformed);
      break;
    case Rejection::kOversized:
      Count(&rejected_oversized);
      break;
    case Rejection::kWrongVersion:
      Count(&rejected_version);
      break;
  }
  Reply(slot, EncodeError(why.message()));
}

void ControlEndpoint::State::Reply(Slot& slot, std::string bytes) {
  slot.reply = std::move(bytes);
  slot.sent = 0;
  slot.writing = true;
  Flush(slot);
}

void ControlEndpoint::State::Flush(Slot& slot) {
  while (slot.sent < slot.reply.size()) {
    const ssize_t n = send(slot.fd, slot.reply.data() + slot.sent, slot.reply.size() - slot.sent,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) break;  // The client left: nothing more to say.
    slot.sent += static_cast<size_t>(n);
  }
  Finish(slot);
}

StatusOr<std::unique_ptr<ControlEndpoint>> ControlEndpoint::Start(ControlHandler* handler,
                                                                  uint32_t pid) {
  std::string name = EndpointName(pid);
  auto state = std::make_unique<State>();
  state->handler = handler;
  state->owner_pid = getpid();
  state->uid = geteuid();
  state->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (state->listen_fd < 0) {
    return ErrorStatus("control endpoint @%s: socket: %s", name.c_str(), std::strerror(errno));
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: abstract.
  const auto addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (bind(state->listen_fd, reinterpret_cast<const sockaddr*>(&addr), addr_len) != 0) {
    const int error = errno;
    state->CloseAll();
    if (error == EADDRINUSE) {
      return ErrorStatus(
          "control endpoint @%s is in use (a second endpoint here, or a process with this pid "
          "in another pid namespace on this network namespace)",
          name.c_str());
    }
    return ErrorStatus("control endpoint @%s: bind: %s", name.c_str(), std::strerror(error));
  }
  if (listen(state->listen_fd, kListenBacklog) != 0) {
    const int error = errno;
    state->CloseAll();
    return ErrorStatus("control endpoint @%s: listen: %s", name.c_str(), std::strerror(error));
  }
  state->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (state->wake_fd < 0) {
    const int error = errno;
    state->CloseAll();
    return ErrorStatus("control endpoint @%s: eventfd: %s", name.c_str(), std::strerror(error));
  }
  // The thread starts with every signal blocked: a job's signals go to the job's threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const int created = pthread_create(&state->thread, nullptr, &State::ThreadMain, state.get());
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (created != 0) {
    state->CloseAll();
    return ErrorStatus("control endpoint @%s: no thread: %s", name.c_str(), std::strerror(created));
  }
  return std::unique_ptr<ControlEndpoint>(new ControlEndpoint(std::move(name), state.release()));
}

ControlEndpoint::~ControlEndpoint() { Stop(); }

EndpointCounters ControlEndpoint::counters() const {
  std::lock_guard<std::mutex> lock(stop_mutex_);
  return state_ != nullptr ? state_->Snapshot() : final_counters_;
}

void ControlEndpoint::CloseInForkChild() {
  std::lock_guard<std::mutex> lock(stop_mutex_);
  if (state_ == nullptr) return;
  final_counters_ = state_->Snapshot();
  // This process has no copy of the thread; the parent's still uses its own copy of the state.
  state_->CloseAll();
  delete state_;
  state_ = nullptr;
}

void ControlEndpoint::Stop() {
  std::unique_lock<std::mutex> lock(stop_mutex_);
  if (state_ == nullptr) return;
  if (getpid() != state_->owner_pid) {
    lock.unlock();
    CloseInForkChild();
    return;
  }
  final_counters_ = state_->Snapshot();
  const uint64_t one = 1;
  // An eventfd write of 8 bytes cannot block or fail short (EFD_NONBLOCK; the counter is tiny).
  [[maybe_unused]] const ssize_t written = write(state_->wake_fd, &one, sizeof(one));
  timespec deadline{};
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += kStopJoinTimeoutMs / 1000;
  deadline.tv_nsec += static_cast<long>(kStopJoinTimeoutMs % 1000) * 1'000'000;
  if (deadline.tv_nsec >= 1'000'000'000) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1'000'000'000;
  }
  if (pthread_timedjoin_np(state_->thread, nullptr, &deadline) == 0) {
    final_counters_ = state_->Snapshot();
    delete state_;  // The thread closed the descriptors.
  } else {
    // The handler is stuck in a call: leave the state to the thread, which frees it at its end.
    pthread_detach(state_->thread);
    if (state_->handed_over.exchange(true, std::memory_order_acq_rel)) delete state_;
  }
  state_ = nullptr;
}

}  // namespace lumos::agent::control
