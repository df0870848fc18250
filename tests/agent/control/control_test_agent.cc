// A test double for the agent, for lumos-ctl's tests: a process that serves a real control
// endpoint (ControlEndpoint, its own pid) with a scripted handler instead of the agent's.
//   control_test_agent --job J --rank R --ready FILE --log FILE [--refuse REASON] [--old 1]
// Writes its pid to FILE (--ready, atomically: a temporary file renamed) once the endpoint
// listens, appends one line per capture or cancel request to --log (its fields, as the handler
// got them), refuses every capture (and finds nothing to cancel) with REASON when given, and
// serves until it is killed. --old 1: an agent older than the cancel message instead, answering
// every message with the Error such an agent's DecodeHeader gives for a type it does not know.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent/control/control_endpoint.h"

namespace {

using lumos::agent::control::AgentStatus;
using lumos::agent::control::CancelReply;
using lumos::agent::control::CancelRequest;
using lumos::agent::control::CaptureRequest;

class ScriptedHandler : public lumos::agent::control::ControlHandler {
 public:
  ScriptedHandler(std::string job, int rank, std::string log, std::string refusal)
      : job_(std::move(job)), rank_(rank), log_(std::move(log)), refusal_(std::move(refusal)) {}

  AgentStatus Status() override {
    AgentStatus s;
    s.pid = static_cast<uint32_t>(getpid());
    s.job = job_;
    s.host = "test-host";
    s.rank = rank_;
    s.world_size = 2;
    s.mode = "on-demand";
    s.state = "dormant";
    s.windows_written = 1;
    s.last_window = "/windows/w1/" + job_ + ".rank" + std::to_string(rank_) + ".pb.zst";
    s.bytes_written = 4096;
    s.events_dropped = 3;
    return s;
  }

  std::string Capture(const CaptureRequest& r) override {
    if (std::FILE* file = std::fopen(log_.c_str(), "a")) {
      std::fprintf(file,
                   "request_id=%llu iterations=%u duration_ms=%llu at_realtime_ns=%lld "
                   "iteration_multiple=%u window_realtime_ns=%lld output_dir=%s peer_uid=%u "
                   "peer_comm=%s\n",
                   static_cast<unsigned long long>(r.request_id), r.iterations,
                   static_cast<unsigned long long>(r.duration_ms),
                   static_cast<long long>(r.at_realtime_ns), r.iteration_multiple,
                   static_cast<long long>(r.window_realtime_ns), r.output_dir.c_str(), r.peer_uid,
                   r.peer_comm.c_str());
      std::fclose(file);
    }
    return refusal_;
  }

  CancelReply Cancel(const CancelRequest& r) override {
    if (std::FILE* file = std::fopen(log_.c_str(), "a")) {
      std::fprintf(file, "cancel request_id=%llu peer_uid=%u peer_comm=%s\n",
                   static_cast<unsigned long long>(r.request_id), r.peer_uid, r.peer_comm.c_str());
      std::fclose(file);
    }
    CancelReply reply;
    reply.accepted = refusal_.empty();
    reply.what = refusal_.empty() ? "request 12: armed, dropped before it starts" : refusal_;
    return reply;
  }

 private:
  std::string job_;
  int rank_;
  std::string log_;
  std::string refusal_;
};

// An agent that predates the cancel message: one Error reply per connection, as its decoder
// refused the (new) type 6.
[[noreturn]] void ServeAsOldAgent(const std::string& ready) {
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const std::string name = lumos::agent::control::EndpointName(static_cast<uint32_t>(getpid()));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (bind(listener, reinterpret_cast<const sockaddr*>(&addr), length) != 0 ||
      listen(listener, 8) != 0) {
    std::perror("control_test_agent --old");
    std::exit(1);
  }
  const std::string temp = ready + ".tmp";
  if (std::FILE* file = std::fopen(temp.c_str(), "w")) {
    std::fprintf(file, "%d\n", getpid());
    std::fclose(file);
    std::rename(temp.c_str(), ready.c_str());
  }
  for (;;) {
    const int connection = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    char header[lumos::agent::control::kHeaderBytes];
    if (recv(connection, header, sizeof(header), MSG_WAITALL) == sizeof(header)) {
      const unsigned type =
          static_cast<unsigned char>(header[6]) | (static_cast<unsigned char>(header[7]) << 8);
      const std::string reply =
          lumos::agent::control::EncodeError("unknown message type " + std::to_string(type));
      (void)send(connection, reply.data(), reply.size(), MSG_NOSIGNAL);
    }
    close(connection);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string job, ready, log, refusal;
  int rank = -1;
  bool old = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--job") job = argv[i + 1];
    if (flag == "--rank") rank = std::atoi(argv[i + 1]);
    if (flag == "--ready") ready = argv[i + 1];
    if (flag == "--log") log = argv[i + 1];
    if (flag == "--refuse") refusal = argv[i + 1];
    if (flag == "--old") old = std::string(argv[i + 1]) == "1";
  }
  if (old) ServeAsOldAgent(ready);
  ScriptedHandler handler(job, rank, log, refusal);
  auto endpoint =
      lumos::agent::control::ControlEndpoint::Start(&handler, static_cast<uint32_t>(getpid()));
  if (!endpoint.ok()) {
    std::fprintf(stderr, "control_test_agent: %s\n", endpoint.status().message().c_str());
    return 1;
  }
  const std::string temp = ready + ".tmp";
  if (std::FILE* file = std::fopen(temp.c_str(), "w")) {
    std::fprintf(file, "%d\n", getpid());
    std::fclose(file);
    std::rename(temp.c_str(), ready.c_str());
  }
  for (;;) pause();
}
