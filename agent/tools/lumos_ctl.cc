// lumos-ctl status|capture: talks to the agents on this host through their control endpoints
// (agent/control/: "@lumos-agent.<pid>" abstract sockets, same user only).
//   status [--json]: every agent's pid, job, rank, mode, state, windows, bytes, drops, rejected
//     control messages and last window; an endpoint that does not answer is listed as
//     unreachable, with why (exit 1).
//   capture (--pid P | --job J | --all) [--iterations K | --duration S] [--at TIME]
//     [--every-iteration N] [-o DIR]: asks each process for one window; one request id and one
//     window time for all of them, so that the ranks of a job (on one host, or on many with
//     the same --at) write one window. One line per process: accepted (with the request id,
//     which cancel --request takes), refused (why) or unreachable (why). Exit 0 when all accepted;
//     1 when any refused or was unreachable, or none matched; 2 bad arguments (--at in the past
//     included).
//   cancel (--pid P | --job J | --all) [--request ID]: drops the window a capture armed (before
//     it starts) or ends a capturing one now (its file kept). One line per process: cancelled
//     (what), nothing to cancel (why), older agent, or unreachable. Exit 0 when every process
//     answered (cancelled or not); 1 when one was unreachable or too old, or none matched.
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "agent/control/control_client.h"
#include "agent/control/control_protocol.h"
#include "agent/core/agent_config.h"
#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"

#ifndef LUMOS_VERSION
#define LUMOS_VERSION "unknown"
#endif

namespace {

namespace control = lumos::agent::control;
using lumos::Status;
using lumos::StatusOr;

constexpr int64_t kNsPerS = 1'000'000'000;
constexpr int64_t kMaxAheadNs = 7LL * 24 * 3600 * kNsPerS;  // --at further ahead: a typo.
constexpr int kDefaultTimeoutMs = 2000;

constexpr char kUsage[] =
    "usage: lumos-ctl <command> [options] [--help]\n"
    "       lumos-ctl --version\n"
    "\n"
    "Controls the Lumos agents on this host (same user, same network namespace) through their\n"
    "control endpoints (@lumos-agent.<pid>).\n"
    "\n"
    "commands:\n"
    "  status [--json]            every agent: pid, job, rank, mode, state, windows written,\n"
    "                             bytes, drops, rejected control messages, last window, last\n"
    "                             cancel\n"
    "  capture (--pid P | --job J | --all) [--iterations K | --duration S] [--at TIME]\n"
    "          [--every-iteration N] [-o DIR]\n"
    "                             start one capture window in each process named\n"
    "  cancel (--pid P | --job J | --all) [--request ID]\n"
    "                             drop an armed window before it starts, or end a capturing\n"
    "                             one now (its file kept)\n"
    "\n"
    "Run `lumos-ctl <command> --help` for the options of each command.\n"
    "\n"
    "exit status: 0 all good; 1 an agent refused, was unreachable, or none matched; 2 bad\n"
    "arguments. Problems go to stderr, one line each; results to stdout.\n";

int64_t RealtimeNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNsPerS + ts.tv_nsec;
}

// "2026-12-01T23:50:00Z" (".123" when there are sub-second digits).
std::string FormatRealtime(int64_t ns) {
  const time_t seconds = static_cast<time_t>(ns / kNsPerS);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[64];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &utc);
  std::string out = buf;
  if (const int64_t ms = (ns % kNsPerS) / 1'000'000; ms != 0) {
    char frac[8];
    std::snprintf(frac, sizeof(frac), ".%03lld", static_cast<long long>(ms));
    out += frac;
  }
  return out + "Z";
}

// A non-negative decimal number, digits with an optional fraction ("30", "1.5"), in ns units of
// `unit_ns`; nullopt when it is not one.
std::optional<int64_t> ParseScaled(std::string_view text, int64_t unit_ns) {
  if (text.empty() || text.size() > 24) return std::nullopt;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || c == '.')) return std::nullopt;
  }
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  const double ns = value * static_cast<double>(unit_ns);
  if (ns > 9.0e18) return std::nullopt;
  return static_cast<int64_t>(std::llround(ns));
}

// --at TIME: RFC 3339 UTC ("2026-12-01T23:50:00Z", fractional seconds allowed), "+30s" / "+2m"
// / "+1h" from now, or "@<unix seconds>". The CLOCK_REALTIME instant in ns.
StatusOr<int64_t> ParseAt(const std::string& text, int64_t now_ns) {
  const std::string forms =
      "--at " + text +
      ": not a time (2026-12-01T23:50:00Z in UTC, +30s / +2m / +1h from now, or @<unix seconds>)";
  int64_t at_ns = 0;
  if (!text.empty() && text[0] == '+') {
    const char unit = text.size() >= 2 ? text.back() : '\0';
    const int64_t unit_ns = unit == 's'   ? kNsPerS
                            : unit == 'm' ? 60 * kNsPerS
                            : unit == 'h' ? 3600 * kNsPerS
                                          : 0;
    const std::optional<int64_t> offset =
        unit_ns == 0 ? std::nullopt
                     : ParseScaled(std::string_view(text).substr(1, text.size() - 2), unit_ns);
    if (!offset) return Status::Error(forms);
    at_ns = now_ns + *offset;
  } else if (!text.empty() && text[0] == '@') {
    const std::optional<int64_t> seconds = ParseScaled(std::string_view(text).substr(1), kNsPerS);
    if (!seconds) return Status::Error(forms);
    at_ns = *seconds;
  } else {
    // YYYY-MM-DDTHH:MM:SS[.fraction]Z
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, used = 0;
    if (text.size() < 20 ||
        std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                    &second, &used) != 6 ||
        used != 19 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
        text[16] != ':' || text.back() != 'Z') {
      return Status::Error(forms);
    }
    int64_t fraction_ns = 0;
    if (text.size() > 20) {
      const std::string_view fraction = std::string_view(text).substr(19, text.size() - 20);
      const std::optional<int64_t> ns = ParseScaled("0" + std::string(fraction), kNsPerS);
      if (fraction.size() < 2 || fraction[0] != '.' || !ns) return Status::Error(forms);
      fraction_ns = *ns;
    }
    tm utc{};
    utc.tm_year = year - 1900;
    utc.tm_mon = month - 1;
    utc.tm_mday = day;
    utc.tm_hour = hour;
    utc.tm_min = minute;
    utc.tm_sec = second;
    const time_t seconds = timegm(&utc);
    // timegm normalises out-of-range fields (Feb 30 → Mar 2): such a date is not a date.
    if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59 ||
        utc.tm_mday != day || utc.tm_mon != month - 1 || seconds < 0) {
      return Status::Error(forms);
    }
    at_ns = static_cast<int64_t>(seconds) * kNsPerS + fraction_ns;
  }
  if (at_ns <= now_ns) {
    return Status::Error("--at " + text + ": " + FormatRealtime(at_ns) + " is in the past (now " +
                         FormatRealtime(now_ns) + ")");
  }
  if (at_ns - now_ns > kMaxAheadNs) {
    return Status::Error("--at " + text + ": " + FormatRealtime(at_ns) +
                         " is more than 7 days ahead");
  }
  return at_ns;
}

uint64_t RandomRequestId() {
  uint64_t id = 0;
  if (getrandom(&id, sizeof(id), 0) != static_cast<ssize_t>(sizeof(id))) {
    id = static_cast<uint64_t>(RealtimeNowNs()) ^ (static_cast<uint64_t>(getpid()) << 32);
  }
  return id == 0 ? 1 : id;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", byte);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

std::string RankText(const control::AgentStatus& s) {
  if (s.rank < 0) return "-";
  return std::to_string(s.rank) + (s.world_size > 0 ? "/" + std::to_string(s.world_size) : "");
}

int RunStatus(const std::vector<std::string>& args) {
  bool json = false;
  int timeout_ms = kDefaultTimeoutMs;
  lumos::cli::ArgParser parser("lumos-ctl status", "[--json] [--timeout-ms MS]");
  parser
      .Description(
          "Lists every Lumos agent on this host that this user can reach (its control endpoint\n"
          "@lumos-agent.<pid> in this network namespace): pid, job, rank/world size, mode,\n"
          "state, windows written, bytes written, events dropped, control messages rejected,\n"
          "and the last window's file; under it, what the last `lumos-ctl cancel` did.\n"
          "An endpoint that does not answer is listed as\n"
          "unreachable, with why (another user's agent, one that is stopping).")
      .Flag("--json", "one JSON array, an object per agent", &json)
      .Int("--timeout-ms", "MS", "how long to wait for each agent (default 2000)", 1, 60'000,
           &timeout_ms)
      .Epilogue(
          "exit status: 0 every agent answered (or none was found); 1 one did not; 2 bad "
          "arguments.");
  if (std::optional<int> exit = parser.ParseOrExit(args, stdout, stderr)) return *exit;
  lumos::cli::CommandOutcome outcome("lumos-ctl status", stdout, stderr);
  const std::vector<uint32_t> pids = control::ListAgentEndpoints();
  if (json) std::printf("[");
  if (!json && pids.empty()) std::printf("no Lumos agent on this host\n");
  if (!json && !pids.empty()) {
    std::printf("%-8s %-16s %-7s %-11s %-10s %7s %12s %8s %8s  %s\n", "PID", "JOB", "RANK", "MODE",
                "STATE", "WINDOWS", "BYTES", "DROPS", "REJECTED", "LAST WINDOW");
  }
  bool first = true;
  for (uint32_t pid : pids) {
    StatusOr<control::AgentStatus> s = control::QueryStatus(pid, timeout_ms);
    if (!s.ok()) outcome.InputProblem("pid " + std::to_string(pid) + ": " + s.status().message());
    if (json) {
      std::printf("%s\n  {\"pid\": %u, ", first ? "" : ",", pid);
      if (!s.ok()) {
        std::printf("\"reachable\": false, \"error\": %s}",
                    JsonString(s.status().message()).c_str());
      } else {
        std::printf(
            "\"reachable\": true, \"job\": %s, \"host\": %s, \"rank\": %d, \"world_size\": %d, "
            "\"mode\": %s, \"state\": %s, \"windows_written\": %llu, \"last_window\": %s, "
            "\"last_window_end_realtime_ns\": %lld, \"bytes_written\": %llu, "
            "\"events_dropped\": %llu, \"control_rejected\": %llu, \"iteration\": %s, "
            "\"last_cancel\": %s}",
            JsonString(s->job).c_str(), JsonString(s->host).c_str(), s->rank, s->world_size,
            JsonString(s->mode).c_str(), JsonString(s->state).c_str(),
            static_cast<unsigned long long>(s->windows_written), JsonString(s->last_window).c_str(),
            static_cast<long long>(s->last_window_end_realtime_ns),
            static_cast<unsigned long long>(s->bytes_written),
            static_cast<unsigned long long>(s->events_dropped),
            static_cast<unsigned long long>(s->control_rejected),
            s->iteration_known ? std::to_string(s->iteration).c_str() : "null",
            JsonString(s->last_cancel).c_str());
      }
      first = false;
    } else if (!s.ok()) {
      std::printf("%-8u unreachable: %s\n", pid, s.status().message().c_str());
    } else {
      std::printf("%-8u %-16s %-7s %-11s %-10s %7llu %12llu %8llu %8llu  %s\n", pid,
                  OrDash(s->job).c_str(), RankText(*s).c_str(), OrDash(s->mode).c_str(),
                  OrDash(s->state).c_str(), static_cast<unsigned long long>(s->windows_written),
                  static_cast<unsigned long long>(s->bytes_written),
                  static_cast<unsigned long long>(s->events_dropped),
                  static_cast<unsigned long long>(s->control_rejected),
                  OrDash(s->last_window).c_str());
      if (!s->last_cancel.empty())
        std::printf("%-8s last cancel: %s\n", "", s->last_cancel.c_str());
    }
  }
  if (json) std::printf("%s]\n", pids.empty() ? "" : "\n");
  return outcome.Finish();
}

// The processes a command names: --pid P (pid), --job J (job: every agent whose status says
// J), else --all (every endpoint). An agent whose job cannot be read is not asked (said on
// stderr, not a failure: another user's agent).
std::vector<uint32_t> Targets(std::optional<uint32_t> pid, std::optional<std::string> job,
                              int timeout_ms, const char* command) {
  if (pid.has_value()) return {*pid};
  std::vector<uint32_t> targets;
  for (uint32_t candidate : control::ListAgentEndpoints()) {
    if (!job.has_value()) {
      targets.push_back(candidate);
      continue;
    }
    StatusOr<control::AgentStatus> s = control::QueryStatus(candidate, timeout_ms);
    if (!s.ok()) {
      std::fprintf(stderr, "%s: pid %u not asked (job unknown): %s\n", command, candidate,
                   s.status().message().c_str());
    } else if (s->job == *job) {
      targets.push_back(candidate);
    }
  }
  return targets;
}

// --pid P | --job J | --all: the agents capture and cancel ask.
struct Selection {
  uint32_t pid = 0;
  std::string job;
  bool all = false, pid_given = false, job_given = false;

  void AddOptions(lumos::cli::ArgParser* parser) {
    parser->Int("--pid", "P", "this process", uint32_t{1}, UINT32_MAX, &pid)
        .Given(&pid_given)
        .String("--job", "J", "every process of job J on this host (its LUMOS_JOB_ID)", &job)
        .Given(&job_given)
        .Flag("--all", "every agent on this host", &all);
  }
  bool ExactlyOne() const {
    return static_cast<int>(pid_given) + static_cast<int>(job_given) + static_cast<int>(all) == 1;
  }
  std::vector<uint32_t> Resolve(int timeout_ms, const char* command) const {
    return Targets(pid_given ? std::optional<uint32_t>(pid) : std::nullopt,
                   all ? std::nullopt : std::optional(job), timeout_ms, command);
  }
  // Why Resolve found none.
  std::string NoneText() const {
    return all ? "no Lumos agent on this host" : "no Lumos agent of job '" + job + "' on this host";
  }
};

int RunCapture(const std::vector<std::string>& args) {
  Selection selection;
  std::string at, output_dir;
  bool duration_given = false;
  uint32_t iterations = 0, every = 0;
  double duration_s = 0;
  int timeout_ms = kDefaultTimeoutMs;
  lumos::cli::ArgParser parser(
      "lumos-ctl capture",
      "(--pid P | --job J | --all) [--iterations K | --duration S] [--at TIME] "
      "[--every-iteration N] [-o DIR]");
  parser.Description(
      "Starts one capture window in each process named: the agent records K whole\n"
      "iterations (or S seconds; neither: its default), starting at the first iteration\n"
      "boundary at or after TIME (none: the next one), or at the next iteration whose index\n"
      "is a multiple of N. Every process gets the same request id and window time, so all\n"
      "ranks of a job capture the same iterations: for a job on many hosts, run the same\n"
      "command on each (pdsh, a DaemonSet) with one --at.");
  selection.AddOptions(&parser);
  parser
      .Int("--iterations", "K", "capture K whole iterations", uint32_t{1}, UINT32_MAX, &iterations)
      .Double("--duration", "S", "capture S seconds (fractions allowed)", 0.001, 7 * 24 * 3600.0,
              false, &duration_s)
      .Given(&duration_given)
      .String("--at", "TIME",
              "start at the first iteration boundary at or after TIME: 2026-12-01T23:50:00Z "
              "(UTC), +30s / +2m / +1h from now, or @<unix seconds>; never in the past",
              &at)
      .Int("--every-iteration", "N", "start at the next iteration whose index is a multiple of N",
           uint32_t{1}, UINT32_MAX, &every)
      .String("-o", "DIR",
              "where the window goes (made absolute here; default: the agent's LUMOS_OUTPUT_DIR)",
              &output_dir)
      .Int("--timeout-ms", "MS", "how long to wait for each agent (default 2000)", 1, 60'000,
           &timeout_ms)
      .Epilogue(
          "exit status: 0 every process accepted; 1 one refused or was unreachable, or none\n"
          "matched; 2 bad arguments (an --at in the past included).");
  if (std::optional<int> exit = parser.ParseOrExit(args, stdout, stderr)) return *exit;
  if (!selection.ExactlyOne()) {
    return parser.UsageError(stderr, "give exactly one of --pid, --job, --all");
  }
  if (iterations != 0 && duration_given) {
    return parser.UsageError(stderr, "give at most one of --iterations, --duration");
  }
  const int64_t now_ns = RealtimeNowNs();
  control::CaptureRequest request;
  request.request_id = RandomRequestId();
  request.iterations = iterations;
  request.duration_ms =
      duration_given
          ? static_cast<uint64_t>(std::max<long long>(1, std::llround(duration_s * 1000)))
          : 0;
  request.iteration_multiple = every;
  if (!at.empty()) {
    StatusOr<int64_t> at_ns = ParseAt(at, now_ns);
    if (!at_ns.ok()) return parser.UsageError(stderr, at_ns.status().message());
    request.at_realtime_ns = *at_ns;
  }
  request.window_realtime_ns = request.at_realtime_ns != 0 ? request.at_realtime_ns : now_ns;
  if (!output_dir.empty()) request.output_dir = lumos::agent::AbsoluteDirectory(output_dir);
  // The request must be sendable at all before any process is asked (a path too long).
  if (StatusOr<std::string> encoded = control::EncodeCaptureRequest(request); !encoded.ok()) {
    return parser.UsageError(stderr, "-o " + output_dir + ": " + encoded.status().message());
  }

  lumos::cli::CommandOutcome outcome("lumos-ctl capture", stdout, stderr);
  const std::vector<uint32_t> targets = selection.Resolve(timeout_ms, "lumos-ctl capture");
  if (targets.empty()) return outcome.Fail(selection.NoneText());
  for (uint32_t target : targets) {
    StatusOr<std::string> refusal = control::SendCapture(target, request, timeout_ms);
    if (!refusal.ok()) {
      std::printf("pid %u: unreachable: %s\n", target, refusal.status().message().c_str());
      outcome.InputProblem("pid " + std::to_string(target) + " unreachable");
    } else if (!refusal->empty()) {
      std::printf("pid %u: refused: %s\n", target, refusal->c_str());
      outcome.InputProblem("pid " + std::to_string(target) + " refused");
    } else {
      std::printf("pid %u: accepted (request %llu)\n", target,
                  static_cast<unsigned long long>(request.request_id));
    }
  }
  return outcome.Finish();
}

int RunCancel(const std::vector<std::string>& args) {
  Selection selection;
  std::string request_text;
  int timeout_ms = kDefaultTimeoutMs;
  lumos::cli::ArgParser parser("lumos-ctl cancel", "(--pid P | --job J | --all) [--request ID]");
  parser.Description(
      "Cancels the capture window of each process named: one that is armed (waiting for its\n"
      "iteration or its --at time) is dropped before it starts, and writes nothing; one that\n"
      "is capturing ends now, its file kept and closed, its CaptureWindow record saying who\n"
      "cancelled it. With --request, only the window of that request (its id is in the\n"
      "window's header, and in `lumos-ctl status` after a cancel); without, whichever window\n"
      "is armed or capturing, periodic ones too (the next periodic slot still comes).");
  selection.AddOptions(&parser);
  parser
      .String("--request", "ID",
              "only the window of this capture request (a decimal id, as the window's header "
              "and `lumos-ctl status` show it)",
              &request_text)
      .Int("--timeout-ms", "MS", "how long to wait for each agent (default 2000)", 1, 60'000,
           &timeout_ms)
      .Epilogue(
          "exit status: 0 every process answered (whether it had a window to cancel or not);\n"
          "1 one was unreachable or older than this command, or none matched; 2 bad arguments.");
  if (std::optional<int> exit = parser.ParseOrExit(args, stdout, stderr)) return *exit;
  if (!selection.ExactlyOne()) {
    return parser.UsageError(stderr, "give exactly one of --pid, --job, --all");
  }
  uint64_t request_id = 0;
  if (!request_text.empty()) {
    const auto [end, error] =
        std::from_chars(request_text.data(), request_text.data() + request_text.size(), request_id);
    if (error != std::errc() || end != request_text.data() + request_text.size() ||
        request_id == 0) {
      return parser.UsageError(stderr,
                               "--request " + request_text + ": not a request id (1 to 2^64-1)");
    }
  }
  lumos::cli::CommandOutcome outcome("lumos-ctl cancel", stdout, stderr);
  const std::vector<uint32_t> targets = selection.Resolve(timeout_ms, "lumos-ctl cancel");
  if (targets.empty()) return outcome.Fail(selection.NoneText());
  control::CancelRequest request;
  request.request_id = request_id;
  for (uint32_t target : targets) {
    StatusOr<control::CancelReply> reply = control::SendCancel(target, request, timeout_ms);
    if (!reply.ok()) {
      const std::string& why = reply.status().message();
      if (why.rfind(control::kOlderAgentPrefix, 0) == 0) {
        std::printf("pid %u: %s\n", target, why.c_str());
        outcome.InputProblem("pid " + std::to_string(target) + " cannot cancel");
      } else {
        std::printf("pid %u: unreachable: %s\n", target, why.c_str());
        outcome.InputProblem("pid " + std::to_string(target) + " unreachable");
      }
    } else if (reply->accepted) {
      std::printf("pid %u: cancelled: %s\n", target, reply->what.c_str());
    } else {
      std::printf("pid %u: nothing to cancel: %s\n", target, reply->what.c_str());
    }
  }
  return outcome.Finish();
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kCommands = "status, capture, cancel";
  if (argc < 2) {
    std::fputs(
        lumos::cli::UsageErrorText("lumos-ctl", std::string("no command given (") + kCommands + ")")
            .c_str(),
        stderr);
    return lumos::cli::kExitUsage;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  std::string program = "lumos-ctl";
  int status = 0;
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
  } else if (command == "--version") {
    std::printf("lumos-ctl %s\n", LUMOS_VERSION);
  } else if (command == "status") {
    program += " status";
    status = RunStatus(args);
  } else if (command == "capture") {
    program += " capture";
    status = RunCapture(args);
  } else if (command == "cancel") {
    program += " cancel";
    status = RunCancel(args);
  } else {
    const std::string what = command[0] == '-' ? "option" : "command";
    std::fputs(lumos::cli::UsageErrorText("lumos-ctl", "unknown " + what + " '" + command +
                                                           "' (commands: " + kCommands +
                                                           "; or --help, --version)")
                   .c_str(),
               stderr);
    return lumos::cli::kExitUsage;
  }
  return lumos::cli::CloseStdout(program, status);
}
