// The control endpoint (agent/control/control_endpoint.h) over real sockets, with the client
// (control_client.h) and raw clients that misbehave: bad, huge, wrong-version and foreign-user
// messages are refused and counted, silent and half-sent clients hold nobody up, Stop() returns
// with a client connected, the thread is named and blocks signals, a fork child stays off.
#include "agent/control/control_endpoint.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "agent/control/control_client.h"
#include "tests/testing/run_command.h"

namespace lumos::agent::control {
namespace {

using ::lumos::testing::PollUntil;

constexpr int kTimeoutMs = 10'000;  // Generous: the outcome is asserted, never the time.

// A test double for the agent's handler. Unlike the agent's, it may take its own lock: the
// test thread reads what it recorded.
class TestHandler : public ControlHandler {
 public:
  AgentStatus Status() override {
    calls_.fetch_add(1);
    statuses_.fetch_add(1);
    if (throw_) throw std::runtime_error("handler failed");
    AgentStatus s;
    s.pid = static_cast<uint32_t>(getpid());
    s.job = "job-7";
    s.host = "host-a";
    s.rank = 2;
    s.world_size = 8;
    s.mode = "on-demand";
    s.state = "dormant";
    std::lock_guard<std::mutex> lock(mutex_);
    s.last_cancel = last_cancel_;
    return s;
  }
  std::string Capture(const CaptureRequest& request) override {
    calls_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(request);
    return refusal_;
  }
  CancelReply Cancel(const CancelRequest& request) override {
    calls_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex_);
    cancels_.push_back(request);
    return CancelReply{refusal_.empty(), refusal_.empty() ? "request 77: dropped" : refusal_};
  }
  int calls() const { return calls_.load(); }
  int statuses() const { return statuses_.load(); }
  std::vector<CancelRequest> cancels() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cancels_;
  }
  std::vector<CaptureRequest> requests() {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }
  void set_refusal(std::string why) {
    std::lock_guard<std::mutex> lock(mutex_);
    refusal_ = std::move(why);
  }
  void set_throw(bool value) { throw_ = value; }
  void set_last_cancel(std::string what) {
    std::lock_guard<std::mutex> lock(mutex_);
    last_cancel_ = std::move(what);
  }

 private:
  std::atomic<int> calls_{0};
  std::atomic<int> statuses_{0};
  std::atomic<bool> throw_{false};
  std::mutex mutex_;
  std::vector<CaptureRequest> requests_;
  std::vector<CancelRequest> cancels_;
  std::string refusal_;
  std::string last_cancel_;
};

// The endpoint accepted `expected` of this test's messages (of which `own_statuses` status
// queries). Status queries from other processes are accepted too: `lumos-ctl status` asks every
// endpoint on the host, and tests running beside this one (window_capture_test) run it; they
// are the handler's status calls beyond the test's own. Polled: the endpoint counts a message
// before it calls the handler.
void ExpectAccepted(const ControlEndpoint& endpoint, const TestHandler& handler, int expected,
                    int own_statuses) {
  EXPECT_TRUE(PollUntil(
      [&] {
        return endpoint.counters().accepted ==
               static_cast<uint64_t>(expected + handler.statuses() - own_statuses);
      },
      10))
      << "accepted " << endpoint.counters().accepted << ", expected " << expected << " + "
      << handler.statuses() - own_statuses << " status queries of other processes";
}

// No call but other processes' status queries reached the handler.
void ExpectOnlyForeignStatuses(const TestHandler& handler) {
  EXPECT_EQ(handler.calls(), handler.statuses());
}

// A pid no process has (above any pid_max), for a second endpoint in this process.
uint32_t UnusedPid() { return 0x80000000u + static_cast<uint32_t>(getpid()); }

// A raw connection to an endpoint, for clients that misbehave. -1 when it cannot connect.
int Connect(uint32_t pid) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = EndpointName(pid);
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Everything the peer sends until it closes (or kTimeoutMs passes: then what came so far).
std::string ReadToEnd(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, kTimeoutMs) <= 0) return out;
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

// Sends `bytes` on a fresh connection; the reason of the Error reply, or what went wrong.
std::string ErrorReplyTo(uint32_t pid, const std::string& bytes) {
  const int fd = Connect(pid);
  if (fd < 0) return "cannot connect";
  send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  const std::string reply = ReadToEnd(fd);
  close(fd);
  StatusOr<Message> message = DecodeMessage(reply);
  if (!message.ok()) return "bad reply: " + message.status().message();
  StatusOr<std::string> reason = DecodeError(*message);
  return reason.ok() ? *reason : "not an Error reply: " + reason.status().message();
}

std::string Header(uint16_t version, uint16_t type, uint32_t body_bytes) {
  std::string out = "LMCT";
  for (uint16_t v : {version, type}) {
    out.push_back(static_cast<char>(v & 0xff));
    out.push_back(static_cast<char>(v >> 8));
  }
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>(body_bytes >> shift));
  return out;
}

// A version-1 message of `type` with `body`, whatever the body holds.
std::string Raw(uint16_t type, const std::string& body) {
  return Header(1, type, static_cast<uint32_t>(body.size())) + body;
}

std::unique_ptr<ControlEndpoint> StartOrDie(TestHandler* handler, uint32_t pid) {
  StatusOr<std::unique_ptr<ControlEndpoint>> endpoint = ControlEndpoint::Start(handler, pid);
  EXPECT_TRUE(endpoint.ok()) << endpoint.status().message();
  return endpoint.ok() ? std::move(endpoint).value() : nullptr;
}

TEST(ControlEndpointTest, AnswersStatusAndCaptureWithThePeersIdentity) {
  TestHandler handler;
  auto endpoint = StartOrDie(&handler, getpid());
  ASSERT_NE(endpoint, nullptr);
  EXPECT_EQ(endpoint->name(), "lumos-agent." + std::to_string(getpid()));
  StatusOr<AgentStatus> status = QueryStatus(getpid(), kTimeoutMs);
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ(status->job, "job-7");
  EXPECT_EQ(status->rank, 2);
  EXPECT_EQ(status->control_rejected, 0u);

  CaptureRequest request;
  request.request_id = 77;
  request.iterations = 3;
  request.output_dir = "/tmp/windows";
  StatusOr<std::string> reply = SendCapture(getpid(), request, kTimeoutMs);
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(*reply, "");
  handler.set_refusal("a window is being captured (request 76)");
  reply = SendCapture(getpid(), request, kTimeoutMs);
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(*reply, "a window is being captured (request 76)");

  const std::vector<CaptureRequest> seen = handler.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].request_id, 77u);
  EXPECT_EQ(seen[0].iterations, 3u);
  EXPECT_EQ(seen[0].output_dir, "/tmp/windows");
  EXPECT_EQ(seen[0].peer_uid, geteuid());
  EXPECT_EQ(seen[0].peer_pid, static_cast<uint32_t>(getpid()));
  std::string comm;
  std::getline(std::ifstream("/proc/self/comm"), comm);
  EXPECT_EQ(seen[0].peer_comm, comm);
  ExpectAccepted(*endpoint, handler, 3, 1);
  EXPECT_EQ(endpoint->counters().rejected(), 0u);

  // Cancel: the handler's answer, the request id and the peer's identity from the socket.
  handler.set_refusal("");
  CancelRequest cancel;
  cancel.request_id = 77;
  StatusOr<CancelReply> cancelled = SendCancel(getpid(), cancel, kTimeoutMs);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().message();
  EXPECT_EQ(*cancelled, (CancelReply{true, "request 77: dropped"}));
  handler.set_refusal("no window is armed or capturing");
  cancelled = SendCancel(getpid(), CancelRequest{}, kTimeoutMs);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().message();
  EXPECT_EQ(*cancelled, (CancelReply{false, "no window is armed or capturing"}));
  const std::vector<CancelRequest> cancels = handler.cancels();
  ASSERT_EQ(cancels.size(), 2u);
  EXPECT_EQ(cancels[0].request_id, 77u);
  EXPECT_EQ(cancels[1].request_id, 0u);
  EXPECT_EQ(cancels[0].peer_uid, geteuid());
  EXPECT_EQ(cancels[0].peer_pid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(cancels[0].peer_comm, comm);
  ExpectAccepted(*endpoint, handler, 5, 1);
}

// The status key last_cancel came after the first lumos-ctl: an older one refuses a reply with
// a key it does not know (its `status` says the agent is unreachable, its `capture --job` skips
// it). Such a client sends a StatusRequest without a body and must get no last_cancel, even
// after a cancel; this lumos-ctl asks for it and gets it.
TEST(ControlEndpointTest, AnOlderLumosCtlStillReadsTheStatusAfterACancel) {
  TestHandler handler;
  auto endpoint = StartOrDie(&handler, getpid());
  ASSERT_NE(endpoint, nullptr);
  handler.set_last_cancel("request 77: cancelled while armed; no window");
  // The older lumos-ctl's request: the header, no body.
  const std::string older_request = std::string("LMCT\x01\x00\x01\x00\x00\x00\x00\x00", 12);
  StatusOr<std::string> bytes = Exchange(getpid(), older_request, kTimeoutMs);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  StatusOr<Message> message = DecodeMessage(*bytes);
  ASSERT_TRUE(message.ok()) << message.status().message();
  ASSERT_EQ(message->type, MessageType::kStatusReply);
  EXPECT_EQ(message->body.find("last_cancel"), std::string_view::npos) << message->body;
  StatusOr<AgentStatus> status = QueryStatus(getpid(), kTimeoutMs);
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ(status->last_cancel, "request 77: cancelled while armed; no window");
  EXPECT_EQ(endpoint->counters().rejected(), 0u);
}

// This lumos-ctl and an agent older than the key last_cancel (a stand-in answering as that
// agent did: a StatusRequest with a body is refused, "unknown key 'last_cancel'"): it asks
// again without, and reads the status.
TEST(ControlEndpointTest, StatusOfAnAgentOlderThanLastCancel) {
  const uint32_t pid = UnusedPid();
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = EndpointName(pid);
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(listener, reinterpret_cast<const sockaddr*>(&addr), len), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  std::vector<size_t> bodies;
  std::thread older_agent([&] {
    for (int served = 0; served < 2; ++served) {
      pollfd p{listener, POLLIN, 0};
      if (poll(&p, 1, kTimeoutMs) <= 0) return;
      const int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      std::string request;
      char buf[4096];
      size_t wanted = kHeaderBytes;
      while (request.size() < wanted) {
        const ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
        if (request.size() >= kHeaderBytes && wanted == kHeaderBytes) {
          StatusOr<control::Header> header = DecodeHeader(request.substr(0, kHeaderBytes));
          if (header.ok()) wanted += header->body_bytes;
        }
      }
      bodies.push_back(request.size() - std::min(request.size(), kHeaderBytes));
      AgentStatus status;
      status.job = "job-old";
      StatusOr<std::string> status_reply = EncodeStatusReply(status);
      const std::string reply = request.size() > kHeaderBytes
                                    ? EncodeError("unknown key 'last_cancel'")
                                : status_reply.ok() ? *status_reply
                                                    : std::string();
      send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
      close(fd);
    }
  });
  StatusOr<AgentStatus> status = QueryStatus(pid, kTimeoutMs);
  older_agent.join();
  close(listener);
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ(status->job, "job-old");
  EXPECT_EQ(bodies, (std::vector<size_t>{14, 0}));  // "last_cancel=1\n", then none.
}

TEST(ControlEndpointTest, BadMessagesGetTheirReasonAndAreCounted) {
  TestHandler handler;
  auto endpoint = StartOrDie(&handler, getpid());
  ASSERT_NE(endpoint, nullptr);
  const uint32_t pid = getpid();
  EXPECT_EQ(ErrorReplyTo(pid, "GET / HTTP/1.0\r\n\r\n"), "bad magic (not a Lumos control message)");
  EXPECT_EQ(ErrorReplyTo(pid, Header(2, 1, 0)), "wrong version 2 (this side speaks 1)");
  EXPECT_EQ(ErrorReplyTo(pid, Header(1, 1, 1 << 20)),
            "oversized: body of 1048576 bytes > max 4084");
  EXPECT_EQ(ErrorReplyTo(pid, Header(1, 42, 0)), "unknown message type 42");
  EXPECT_EQ(ErrorReplyTo(pid, Raw(3, "iterati\n")), "malformed line 1: no '='");
  EXPECT_EQ(ErrorReplyTo(pid, Raw(3, "peer_uid=0\n")), "unknown key 'peer_uid'");
  EXPECT_EQ(ErrorReplyTo(pid, Raw(3, "a=\x01\x02\n")), "malformed line 1: non-printable byte 0x01");
  EXPECT_EQ(ErrorReplyTo(pid, Raw(3, "iterations=-1\n")),
            "bad value for key 'iterations': '-1' is not a number");
  EXPECT_EQ(ErrorReplyTo(pid, Header(1, 2, 0)),
            "unexpected StatusReply (an agent takes StatusRequest, CaptureRequest and "
            "CancelRequest)");
  // Bad cancels, counted like the others.
  EXPECT_EQ(ErrorReplyTo(pid, Raw(6, "request_id=abc\n")),
            "bad value for key 'request_id': 'abc' is not a number");
  EXPECT_EQ(ErrorReplyTo(pid, Raw(6, "iterations=1\n")), "unknown key 'iterations'");
  EXPECT_EQ(ErrorReplyTo(pid, Header(1, 7, 0)),
            "unexpected CancelReply (an agent takes StatusRequest, CaptureRequest and "
            "CancelRequest)");
  ASSERT_TRUE(PollUntil([&] { return endpoint->counters().rejected() == 12; }, 10));
  const EndpointCounters counters = endpoint->counters();
  EXPECT_EQ(counters.rejected_malformed, 10u);
  EXPECT_EQ(counters.rejected_version, 1u);
  EXPECT_EQ(counters.rejected_oversized, 1u);
  ExpectAccepted(*endpoint, handler, 0, 0);
  ExpectOnlyForeignStatuses(handler);
  // The endpoint goes on, and says how much it refused.
  StatusOr<AgentStatus> status = QueryStatus(pid, kTimeoutMs);
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ(status->control_rejected, 12u);
}

// A body announced as huge is refused from its header: the endpoint never reads it.
TEST(ControlEndpointTest, AHugeBodyIsRefusedWithoutBeingRead) {
  TestHandler handler;
  auto endpoint = StartOrDie(&handler, getpid());
  ASSERT_NE(endpoint, nullptr);
  const int fd = Connect(getpid());
  ASSERT_GE(fd, 0);
  const std::string header = Header(1, 3, 64u << 20);
  ASSERT_EQ(send(fd, header.data(), header.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(header.size()));
  const std::string chunk(1 << 16, 'x');
  for (int i = 0; i < 16; ++i) {
    if (send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) break;
  }
  const std::string reply = ReadToEnd(fd);
  close(fd);
  StatusOr<Message> message = DecodeMessage(reply);
  ASSERT_TRUE(message.ok()) << message.status().message();
  StatusOr<std::string> reason = DecodeError(*message);
  ASSERT_TRUE(reason.ok());
  EXPECT_EQ(*reason, "oversized: body of 67108864 bytes > max 4084");
  ASSERT_TRUE(PollUntil([&] { return endpoint->counters().rejected_oversized == 1; }, 10));
  ExpectOnlyForeignStatuses(handler);
}

// Another user's connection is closed without a word and counted; nothing of it is read.
TEST(ControlEndpointTest, AForeignUserIsRefusedAndCounted) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to connect as another user (uid 65534)";
  TestHandler handler;
  auto endpoint = StartOrDie(&handler, getpid());
  ASSERT_NE(endpoint, nullptr);
  StatusOr<std::string> request = EncodeStatusRequest();
  ASSERT_TRUE(request.ok());
  const uint32_t pid = getpid();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only system calls here: the parent has threads.
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
    const int fd = Connect(pid);
    if (fd < 0) _exit(2);
    send(fd, request->data(), request->size(), MSG_NOSIGNAL);
    char byte;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, kTimeoutMs) <= 0) _exit(4);
    // Closed with no reply: EOF, or ECONNRESET when the request was left unread.
    _exit(recv(fd, &byte, 1, 0) > 0 ? 1 : 0);
  }
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(WIFEXITED(wait_status));
  EXPECT_EQ(WEXITSTATUS(wait_status), 0) << "1: got a reply, 2: no connect, 3: no setuid, 4: hung";
  ASSERT_TRUE(PollUntil([&] { return endpoint->counters().rejected_foreign_user == 1; }, 10));
  ExpectAccepted(*endpoint, handler, 0, 0);
  ExpectOnlyForeignStatuses(handler);
}

// A client that connects and says nothing, and one that sends half a header, hold up nobody;
// each is told it timed out, and counted.
TEST(ControlEndpointTest, SilentAndHalfSentClientsDoNotBlockOthers) {
  TestHandler handler;
  auto endpoint = StartOrDie(&handler, getpid());
  ASSERT_NE(endpoint, nullptr);
  const int silent = Connect(getpid());
  const int half = Connect(getpid());
  ASSERT_GE(silent, 0);
  ASSERT_GE(half, 0);
  ASSERT_EQ(send(half, "LMCT\x01\x00", 6, MSG_NOSIGNAL), 6);
  StatusOr<AgentStatus> status = QueryStatus(getpid(), kTimeoutMs);
  ASSERT_TRUE(status.ok()) << status.status().message();
  for (const auto& [fd, reason] : {std::pair{silent, "timed out: 0 of 12 bytes within 500 ms"},
                                   std::pair{half, "timed out: 6 of 12 bytes within 500 ms"}}) {
    const std::string reply = ReadToEnd(fd);
    close(fd);
    StatusOr<Message> message = DecodeMessage(reply);
    ASSERT_TRUE(message.ok()) << message.status().message();
    StatusOr<std::string> got = DecodeError(*message);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, reason);
  }
  ASSERT_TRUE(PollUntil([&] { return endpoint->counters().timed_out == 2; }, 10));
  ExpectAccepted(*endpoint, handler, 1, 1);
}

// More silent clients than the endpoint has slots: a real client still gets its answer.
TEST(ControlEndpointTest, MoreSilentClientsThanSlotsStillLetOthersThrough) {
  TestHandler handler;
  auto endpoint = StartOrDie(&handler, getpid());
  ASSERT_NE(endpoint, nullptr);
  std::vector<int> silent;
  for (size_t i = 0; i < ControlEndpoint::kMaxConnections + 4; ++i) {
    const int fd = Connect(getpid());
    ASSERT_GE(fd, 0);
    silent.push_back(fd);
  }
  StatusOr<AgentStatus> status = QueryStatus(getpid(), kTimeoutMs);
  EXPECT_TRUE(status.ok()) << status.status().message();
  for (int fd : silent) close(fd);
}

TEST(ControlEndpointTest, StopReturnsWithAClientConnectedAndFreesTheName) {
  TestHandler handler;
  auto endpoint = StartOrDie(&handler, getpid());
  ASSERT_NE(endpoint, nullptr);
  const int fd = Connect(getpid());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(QueryStatus(getpid(), kTimeoutMs).ok());
  endpoint->Stop();
  endpoint->Stop();              // Idempotent.
  EXPECT_EQ(ReadToEnd(fd), "");  // Closed by the endpoint, nothing said.
  close(fd);
  ExpectAccepted(*endpoint, handler, 1, 1);  // Kept after Stop().
  StatusOr<AgentStatus> gone = QueryStatus(getpid(), kTimeoutMs);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().message(), "no agent endpoint @lumos-agent." + std::to_string(getpid()));
  auto again = StartOrDie(&handler, getpid());
  EXPECT_NE(again, nullptr);
}

TEST(ControlEndpointTest, ASecondEndpointWithTheSameNameIsAnError) {
  TestHandler handler;
  auto endpoint = StartOrDie(&handler, UnusedPid());
  ASSERT_NE(endpoint, nullptr);
  StatusOr<std::unique_ptr<ControlEndpoint>> second = ControlEndpoint::Start(&handler, UnusedPid());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message().rfind(
                "control endpoint @" + EndpointName(UnusedPid()) + " is in use", 0),
            0u)
      << second.status().message();
}

TEST(ControlEndpointTest, ListedInProcNetUnixWhileRunning) {
  TestHandler handler;
  auto endpoint = StartOrDie(&handler, UnusedPid());
  ASSERT_NE(endpoint, nullptr);
  std::vector<uint32_t> pids = ListAgentEndpoints();
  EXPECT_NE(std::find(pids.begin(), pids.end(), UnusedPid()), pids.end());
  endpoint->Stop();
  pids = ListAgentEndpoints();
  EXPECT_EQ(std::find(pids.begin(), pids.end(), UnusedPid()), pids.end());
}

// The thread is "lumos-control" and blocks the job's signals.
TEST(ControlEndpointTest, ItsThreadIsNamedAndBlocksSignals) {
  TestHandler handler;
  auto endpoint = StartOrDie(&handler, getpid());
  ASSERT_NE(endpoint, nullptr);
  std::string sig_blocked;
  ASSERT_TRUE(PollUntil(
      [&] {
        for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
          std::string comm;
          std::getline(std::ifstream(task.path() / "comm"), comm);
          if (comm != "lumos-control") continue;
          std::ifstream status(task.path() / "status");
          for (std::string line; std::getline(status, line);) {
            if (line.rfind("SigBlk:", 0) == 0) sig_blocked = line.substr(7);
          }
          return true;
        }
        return false;
      },
      10));
  const uint64_t mask = std::stoull(sig_blocked, nullptr, 16);
  for (int signal_number : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGHUP, SIGPIPE, SIGCHLD}) {
    EXPECT_NE(mask & (uint64_t{1} << (signal_number - 1)), 0u) << signal_number;
  }
}

// Whatever the handler throws stays in the endpoint: the client gets an Error reply.
TEST(ControlEndpointTest, AHandlerThatThrowsGetsAnErrorReply) {
  TestHandler handler;
  handler.set_throw(true);
  auto endpoint = StartOrDie(&handler, getpid());
  ASSERT_NE(endpoint, nullptr);
  StatusOr<AgentStatus> status = QueryStatus(getpid(), kTimeoutMs);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().message(),
            "refused by the agent: the agent failed to answer (internal error)");
  handler.set_throw(false);
  EXPECT_TRUE(QueryStatus(getpid(), kTimeoutMs).ok());
}

// A fork child's Stop() closes its own copies only: the parent's endpoint keeps serving.
TEST(ControlEndpointTest, AForkChildsStopLeavesTheParentServing) {
  TestHandler handler;
  auto endpoint = StartOrDie(&handler, getpid());
  ASSERT_NE(endpoint, nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    endpoint->Stop();
    _exit(0);
  }
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
  StatusOr<AgentStatus> status = QueryStatus(getpid(), kTimeoutMs);
  EXPECT_TRUE(status.ok()) << status.status().message();
}

}  // namespace
}  // namespace lumos::agent::control
