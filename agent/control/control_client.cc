#include "agent/control/control_client.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "agent/control/control_endpoint.h"

namespace lumos::agent::control {
namespace {

int64_t MonotonicMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Waits for `events` on fd until deadline_ms: false when the deadline passed.
bool WaitFor(int fd, short events, int64_t deadline_ms) {
  for (;;) {
    const int64_t left = deadline_ms - MonotonicMs();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int ready = poll(&p, 1, static_cast<int>(left));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return true;  // Let the next call report the error.
  }
}

// Reads exactly `size` bytes into `out`: "" on success, else why not.
std::string ReadExactly(int fd, char* out, size_t size, int64_t deadline_ms, size_t* got) {
  while (*got < size) {
    const ssize_t n = recv(fd, out + *got, size - *got, MSG_DONTWAIT);
    if (n > 0) {
      *got += static_cast<size_t>(n);
      continue;
    }
    // An endpoint that refused the connection unread (another user) resets it.
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return "closed";
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return std::strerror(errno);
    if (!WaitFor(fd, POLLIN, deadline_ms)) return "timed out";
  }
  return "";
}

}  // namespace

StatusOr<std::string> Exchange(uint32_t pid, std::string_view request, int timeout_ms) {
  const std::string name = EndpointName(pid);
  const int64_t deadline_ms = MonotonicMs() + timeout_ms;
  Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) return ErrorStatus("@%s: socket: %s", name.c_str(), std::strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  for (;;) {
    if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), addr_len) == 0) break;
    if (errno == ECONNREFUSED || errno == ENOENT) {
      return ErrorStatus("no agent endpoint @%s", name.c_str());
    }
    // A full backlog: every slot of the endpoint is busy. Try again until the deadline.
    if (errno == EAGAIN && MonotonicMs() < deadline_ms) {
      timespec pause{0, 10'000'000};
      nanosleep(&pause, nullptr);
      continue;
    }
    return ErrorStatus("@%s: connect: %s", name.c_str(),
                       errno == EAGAIN ? "busy (timed out)" : std::strerror(errno));
  }
  ucred peer{};
  socklen_t len = sizeof(peer);
  if (getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || len != sizeof(peer)) {
    return ErrorStatus("@%s: cannot read its owner: %s", name.c_str(), std::strerror(errno));
  }
  if (peer.uid != geteuid()) {
    return ErrorStatus("@%s belongs to uid %u, not to this user (uid %u): not talked to",
                       name.c_str(), peer.uid, geteuid());
  }
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n =
        send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!WaitFor(fd.get(), POLLOUT, deadline_ms)) {
        return ErrorStatus("@%s: timed out sending", name.c_str());
      }
      continue;
    }
    break;  // The agent closed early (it refused the message): its reply may be there.
  }
  char buffer[kMaxMessageBytes];
  size_t got = 0;
  std::string why = ReadExactly(fd.get(), buffer, kHeaderBytes, deadline_ms, &got);
  if (why == "closed" && got == 0) {
    return ErrorStatus("@%s closed the connection without a reply", name.c_str());
  }
  if (!why.empty()) return ErrorStatus("@%s: reply: %s", name.c_str(), why.c_str());
  StatusOr<Header> header = DecodeHeader(std::string_view(buffer, kHeaderBytes));
  if (!header.ok()) return header.status().WithContext("@" + name + ": reply");
  why = ReadExactly(fd.get(), buffer, kHeaderBytes + header->body_bytes, deadline_ms, &got);
  if (!why.empty()) {
    return ErrorStatus("@%s: reply: %s after %zu of %zu bytes", name.c_str(), why.c_str(), got,
                       kHeaderBytes + header->body_bytes);
  }
  return std::string(buffer, got);
}

namespace {

// The reply's message, an Error reply turned into "refused by the agent: <reason>".
StatusOr<Message> ReplyMessage(uint32_t pid, const std::string& bytes) {
  const std::string context = "@" + EndpointName(pid) + ": reply";
  StatusOr<Message> message = DecodeMessage(bytes);
  if (!message.ok()) return message.status().WithContext(context);
  if (message->type == MessageType::kError) {
    StatusOr<std::string> reason = DecodeError(*message);
    if (!reason.ok()) return reason.status().WithContext(context);
    return Status::Error("refused by the agent: " + *reason);
  }
  return message;
}

}  // namespace

StatusOr<AgentStatus> QueryStatus(uint32_t pid, int timeout_ms) {
  LUMOS_ASSIGN_OR_RETURN(const std::string request, EncodeStatusRequest(true));
  LUMOS_ASSIGN_OR_RETURN(std::string bytes, Exchange(pid, request, timeout_ms));
  StatusOr<Message> reply = ReplyMessage(pid, bytes);
  if (!reply.ok() &&
      reply.status().message().rfind("refused by the agent: unknown key 'last_cancel'", 0) == 0) {
    // An agent older than lumos-ctl cancel: the first lumos-ctl's request, without a body.
    LUMOS_ASSIGN_OR_RETURN(const std::string plain, EncodeStatusRequest(false));
    LUMOS_ASSIGN_OR_RETURN(bytes, Exchange(pid, plain, timeout_ms));
    reply = ReplyMessage(pid, bytes);
  }
  if (!reply.ok()) return reply.status();
  const Message message = *reply;
  StatusOr<AgentStatus> status = DecodeStatusReply(message);
  if (!status.ok()) return status.status().WithContext("@" + EndpointName(pid) + ": reply");
  return status;
}

StatusOr<std::string> SendCapture(uint32_t pid, const CaptureRequest& request, int timeout_ms) {
  LUMOS_ASSIGN_OR_RETURN(const std::string bytes, EncodeCaptureRequest(request));
  LUMOS_ASSIGN_OR_RETURN(const std::string reply_bytes, Exchange(pid, bytes, timeout_ms));
  LUMOS_ASSIGN_OR_RETURN(const Message message, ReplyMessage(pid, reply_bytes));
  StatusOr<CaptureReply> reply = DecodeCaptureReply(message);
  if (!reply.ok()) return reply.status().WithContext("@" + EndpointName(pid) + ": reply");
  if (reply->accepted) return std::string();
  return reply->reason.empty() ? std::string("refused (no reason given)") : reply->reason;
}

StatusOr<CancelReply> SendCancel(uint32_t pid, const CancelRequest& request, int timeout_ms) {
  LUMOS_ASSIGN_OR_RETURN(const std::string bytes, EncodeCancelRequest(request));
  LUMOS_ASSIGN_OR_RETURN(const std::string reply_bytes, Exchange(pid, bytes, timeout_ms));
  const std::string context = "@" + EndpointName(pid) + ": reply";
  StatusOr<Message> message = DecodeMessage(reply_bytes);
  if (!message.ok()) return message.status().WithContext(context);
  if (message->type == MessageType::kError) {
    StatusOr<std::string> reason = DecodeError(*message);
    if (!reason.ok()) return reason.status().WithContext(context);
    const std::string unknown =
        "unknown message type " + std::to_string(static_cast<int>(MessageType::kCancelRequest));
    if (reason->rfind(unknown, 0) == 0) {
      return Status::Error(std::string(kOlderAgentPrefix) + " (it answered: " + *reason + ")");
    }
    return Status::Error("refused by the agent: " + *reason);
  }
  StatusOr<CancelReply> reply = DecodeCancelReply(*message);
  if (!reply.ok()) return reply.status().WithContext(context);
  return reply;
}

std::vector<uint32_t> ParseAgentEndpoints(std::string_view text) {
  static constexpr std::string_view kPrefix = "@lumos-agent.";
  std::vector<uint32_t> pids;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    // The path is the last field; abstract names start with '@'.
    const size_t space = line.rfind(' ');
    const std::string_view path = space == std::string_view::npos ? line : line.substr(space + 1);
    if (path.substr(0, kPrefix.size()) != kPrefix) continue;
    const std::string_view digits = path.substr(kPrefix.size());
    if (digits.empty() || digits.size() > 10 || digits[0] == '0') continue;
    uint64_t pid = 0;
    bool ok = true;
    for (char c : digits) {
      if (c < '0' || c > '9') ok = false;
      pid = pid * 10 + static_cast<uint64_t>(c - '0');
    }
    if (ok && pid <= UINT32_MAX) pids.push_back(static_cast<uint32_t>(pid));
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

std::vector<uint32_t> ListAgentEndpoints() {
  std::FILE* file = std::fopen("/proc/net/unix", "re");
  if (file == nullptr) return {};
  std::string text;
  char chunk[1 << 16];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0) text.append(chunk, n);
  std::fclose(file);
  return ParseAgentEndpoints(text);
}

}  // namespace lumos::agent::control
