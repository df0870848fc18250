// lumos-ctl as a user runs it (the real binary, real processes): status and capture against
// control_test_agent processes, a test double for the agent that serves a real endpoint with a
// scripted handler. Tests that list every endpoint on the host run the agents and lumos-ctl
// in a private network namespace (unshare -n: abstract sockets are per network namespace), so
// that other tests' endpoints running at the same time are not seen; they skip where that is
// not allowed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent::control {
namespace {

using ::lumos::testing::RunCommand;

struct Agent {
  std::string job;
  int rank = 0;
  std::string refuse;    // Refuses every capture with this reason.
  bool foreign = false;  // Runs as uid 65534.
  bool old = false;      // An agent older than the cancel message.
};

struct CtlRun {
  int exit_code = -1;
  std::string out, err;
};

struct AgentsRun {
  std::vector<CtlRun> ctl;
  std::vector<std::string> pids;
  std::vector<std::string> logs;  // Each agent's capture requests, one line each.
  std::string cwd;                // Where lumos-ctl ran.
  std::string harness_err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Trimmed(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

bool CanIsolate() { return RunCommand("unshare -n true").exit_code == 0; }

// Starts `agents`, waits until each listens, runs each of `ctl_args` (shell words; $P0, $P1, ...
// are the agents' pids, $T the temporary directory) from $T/cwd, then stops the agents.
AgentsRun RunWithAgents(const std::vector<Agent>& agents, const std::vector<std::string>& ctl_args,
                        bool isolated) {
  ::lumos::testing::TempDir dir;
  chmod(dir.path().c_str(), 0777);  // A foreign agent writes its ready file here.
  const std::string t = dir.path();
  std::string script = "T=" + t + "\nmkdir -p $T/cwd\n";
  for (size_t i = 0; i < agents.size(); ++i) {
    const std::string n = std::to_string(i);
    script += std::string(agents[i].foreign ? "setpriv --reuid=65534 --regid=65534 --clear-groups "
                                            : "") +
              CONTROL_TEST_AGENT_PATH " --job '" + agents[i].job + "' --rank " +
              std::to_string(agents[i].rank) + " --ready $T/ready" + n + " --log $T/log" + n +
              (agents[i].refuse.empty() ? "" : " --refuse '" + agents[i].refuse + "'") +
              (agents[i].old ? " --old 1" : "") + " </dev/null &\necho $! >>$T/bg\n";
  }
  script += "i=0\nwhile [ $i -lt 400 ]; do\n  all=1\n";
  for (size_t i = 0; i < agents.size(); ++i) {
    script += "  [ -s $T/ready" + std::to_string(i) + " ] || all=0\n";
  }
  script += "  [ $all = 1 ] && break\n  sleep 0.05; i=$((i+1))\ndone\n";
  for (size_t i = 0; i < agents.size(); ++i) {
    script += "P" + std::to_string(i) + "=$(cat $T/ready" + std::to_string(i) + ")\n";
  }
  for (size_t c = 0; c < ctl_args.size(); ++c) {
    const std::string n = std::to_string(c);
    script += "(cd $T/cwd && " LUMOS_CTL_PATH " " + ctl_args[c] + " >$T/out" + n + " 2>$T/err" + n +
              "; echo $? >$T/rc" + n + ")\n";
  }
  script += "[ -f $T/bg ] && kill $(cat $T/bg) 2>/dev/null\nwait\n";
  { std::ofstream(t + "/script.sh") << script; }
  const ::lumos::testing::CommandResult result =
      RunCommand(std::string(isolated ? "unshare -n " : "") + "sh " + t + "/script.sh");
  AgentsRun run;
  run.harness_err = result.err;
  run.cwd = t + "/cwd";
  for (size_t c = 0; c < ctl_args.size(); ++c) {
    const std::string n = std::to_string(c);
    CtlRun ctl;
    const std::string rc = Trimmed(ReadFile(t + "/rc" + n));
    ctl.exit_code = rc.empty() ? -1 : std::stoi(rc);
    ctl.out = ReadFile(t + "/out" + n);
    ctl.err = ReadFile(t + "/err" + n);
    run.ctl.push_back(ctl);
  }
  for (size_t i = 0; i < agents.size(); ++i) {
    run.pids.push_back(Trimmed(ReadFile(t + "/ready" + std::to_string(i))));
    run.logs.push_back(ReadFile(t + "/log" + std::to_string(i)));
  }
  return run;
}

// The value of `key` in a log line "k1=v1 k2=v2 ...".
std::string Field(const std::string& line, const std::string& key) {
  const size_t at = line.find(key + "=");
  if (at == std::string::npos) return "<none>";
  const size_t start = at + key.size() + 1;
  return line.substr(start, line.find_first_of(" \n", start) - start);
}

std::string UniqueJob(const char* what) {
  return std::string(what) + "-" + std::to_string(getpid());
}

TEST(LumosCtlTest, StatusListsEveryAgent) {
  if (!CanIsolate()) GTEST_SKIP() << "needs `unshare -n` (root) to see only this test's agents";
  const AgentsRun run =
      RunWithAgents({{"ctl-job", 0}, {"ctl-job", 1}}, {"status", "status --json"}, true);
  ASSERT_EQ(run.ctl.size(), 2u) << run.harness_err;
  const CtlRun& table = run.ctl[0];
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.err, "");
  std::istringstream lines(table.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 3u) << table.out;
  EXPECT_EQ(rows[0].rfind("PID ", 0), 0u) << rows[0];
  for (int rank : {0, 1}) {
    const std::string& pid = run.pids[rank];
    bool found = false;
    for (const std::string& row : rows) {
      if (row.rfind(pid + " ", 0) != 0) continue;
      found = true;
      std::istringstream words(row);
      std::vector<std::string> w;
      for (std::string word; words >> word;) w.push_back(word);
      ASSERT_EQ(w.size(), 10u) << row;
      EXPECT_EQ(w[1], "ctl-job");
      EXPECT_EQ(w[2], std::to_string(rank) + "/2");
      EXPECT_EQ(w[3], "on-demand");
      EXPECT_EQ(w[4], "dormant");
      EXPECT_EQ(w[5], "1");     // windows
      EXPECT_EQ(w[6], "4096");  // bytes
      EXPECT_EQ(w[7], "3");     // drops
      EXPECT_EQ(w[8], "0");     // rejected
      EXPECT_EQ(w[9], "/windows/w1/ctl-job.rank" + std::to_string(rank) + ".pb.zst");
    }
    EXPECT_TRUE(found) << pid << " not in\n" << table.out;
  }
  const CtlRun& json = run.ctl[1];
  EXPECT_EQ(json.exit_code, 0) << json.err;
  for (int rank : {0, 1}) {
    EXPECT_NE(json.out.find("{\"pid\": " + run.pids[rank] +
                            ", \"reachable\": true, \"job\": \"ctl-job\", \"host\": \"test-host\", "
                            "\"rank\": " +
                            std::to_string(rank) + ", \"world_size\": 2, \"mode\": \"on-demand\""),
              std::string::npos)
        << json.out;
  }
  EXPECT_EQ(json.out.front(), '[');
  EXPECT_EQ(json.out.substr(json.out.size() - 2), "]\n");
}

TEST(LumosCtlTest, NoAgentIsNoError) {
  if (!CanIsolate()) GTEST_SKIP() << "needs `unshare -n` (root) to see only this test's agents";
  const AgentsRun run = RunWithAgents({}, {"status", "status --json", "capture --all"}, true);
  ASSERT_EQ(run.ctl.size(), 3u) << run.harness_err;
  EXPECT_EQ(run.ctl[0].exit_code, 0);
  EXPECT_EQ(run.ctl[0].out, "no Lumos agent on this host\n");
  EXPECT_EQ(run.ctl[1].out, "[]\n");
  // A capture that reaches nobody did not do what was asked.
  EXPECT_EQ(run.ctl[2].exit_code, 1);
  EXPECT_EQ(run.ctl[2].err, "lumos-ctl capture: no Lumos agent on this host\n");
}

// Another user's agent is never talked to: listed as unreachable, with why.
TEST(LumosCtlTest, AnotherUsersAgentIsUnreachable) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run an agent as another user (uid 65534)";
  if (!CanIsolate()) GTEST_SKIP() << "needs `unshare -n` (root) to see only this test's agents";
  Agent foreign{"ctl-job", 1};
  foreign.foreign = true;
  const AgentsRun run = RunWithAgents({{"ctl-job", 0}, foreign}, {"status", "capture --all"}, true);
  ASSERT_EQ(run.ctl.size(), 2u) << run.harness_err;
  ASSERT_FALSE(run.pids[1].empty()) << run.harness_err;
  const std::string why = "@lumos-agent." + run.pids[1] +
                          " belongs to uid 65534, not to this user (uid 0): not talked to";
  EXPECT_EQ(run.ctl[0].exit_code, 1);
  const size_t row = run.ctl[0].out.find("\n" + run.pids[1] + " ");
  ASSERT_NE(row, std::string::npos) << run.ctl[0].out;
  EXPECT_EQ(run.ctl[0].out.find("unreachable: " + why + "\n"),
            run.ctl[0].out.find_first_not_of(' ', row + 1 + run.pids[1].size()))
      << run.ctl[0].out;
  EXPECT_EQ(run.ctl[0].err, "lumos-ctl status: pid " + run.pids[1] + ": " + why + "\n");
  EXPECT_EQ(run.ctl[1].exit_code, 1);
  EXPECT_NE(run.ctl[1].out.find("pid " + run.pids[0] + ": accepted (request "), std::string::npos);
  EXPECT_NE(run.ctl[1].out.find("pid " + run.pids[1] + ": unreachable: " + why + "\n"),
            std::string::npos)
      << run.ctl[1].out;
  EXPECT_EQ(run.logs[1], "");
}

TEST(LumosCtlTest, CaptureByPidReachesThatProcessOnly) {
  const std::string job = UniqueJob("by-pid");
  const AgentsRun run = RunWithAgents({{job, 0}, {job, 1}},
                                      {"capture --pid $P0 --iterations 5 -o rel/out",
                                       "capture --pid $P1 --at 2020-01-01T00:00:00Z"},
                                      CanIsolate());
  ASSERT_EQ(run.ctl.size(), 2u) << run.harness_err;
  EXPECT_EQ(run.ctl[0].exit_code, 0) << run.ctl[0].err;
  EXPECT_EQ(run.ctl[0].out, "pid " + run.pids[0] + ": accepted (request " +
                                Field(run.logs[0], "request_id") + ")\n");
  EXPECT_EQ(run.ctl[0].err, "");
  const std::string& line = run.logs[0];
  ASSERT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  EXPECT_EQ(Field(line, "iterations"), "5");
  EXPECT_EQ(Field(line, "duration_ms"), "0");
  EXPECT_EQ(Field(line, "at_realtime_ns"), "0");
  EXPECT_NE(Field(line, "window_realtime_ns"), "0");
  EXPECT_NE(Field(line, "request_id"), "0");
  EXPECT_EQ(Field(line, "output_dir"), run.cwd + "/rel/out");  // Made absolute by lumos-ctl.
  EXPECT_EQ(Field(line, "peer_uid"), std::to_string(geteuid()));
  EXPECT_EQ(Field(line, "peer_comm"), "lumos-ctl");
  // An --at in the past is a bad argument: nothing is sent.
  EXPECT_EQ(run.ctl[1].exit_code, 2);
  EXPECT_EQ(run.ctl[1].err.rfind("lumos-ctl capture: --at 2020-01-01T00:00:00Z: "
                                 "2020-01-01T00:00:00Z is in the past (now ",
                                 0),
            0u)
      << run.ctl[1].err;
  EXPECT_EQ(run.logs[1], "");
}

// Every process of the job, and only those, gets one request: the same id and window time.
TEST(LumosCtlTest, CaptureByJobReachesThatJobWithOneRequest) {
  const std::string job = UniqueJob("by-job");
  const AgentsRun run = RunWithAgents(
      {{job, 0}, {job, 1}, {job + "-other", 0}},
      {"capture --job " + job + " --duration 1.5 --at +60s --every-iteration 10"}, CanIsolate());
  ASSERT_EQ(run.ctl.size(), 1u) << run.harness_err;
  EXPECT_EQ(run.ctl[0].exit_code, 0) << run.ctl[0].err;
  const std::string accepted = ": accepted (request " + Field(run.logs[0], "request_id") + ")\n";
  const std::string accepted0 = "pid " + run.pids[0] + accepted;
  const std::string accepted1 = "pid " + run.pids[1] + accepted;
  EXPECT_TRUE(run.ctl[0].out == accepted0 + accepted1 || run.ctl[0].out == accepted1 + accepted0)
      << run.ctl[0].out;  // In pid order.
  ASSERT_FALSE(run.logs[0].empty());
  ASSERT_FALSE(run.logs[1].empty());
  for (const char* key : {"request_id", "duration_ms", "at_realtime_ns", "iteration_multiple",
                          "window_realtime_ns", "output_dir"}) {
    EXPECT_EQ(Field(run.logs[0], key), Field(run.logs[1], key)) << key;
  }
  EXPECT_EQ(Field(run.logs[0], "duration_ms"), "1500");
  EXPECT_EQ(Field(run.logs[0], "iterations"), "0");
  EXPECT_EQ(Field(run.logs[0], "iteration_multiple"), "10");
  EXPECT_EQ(Field(run.logs[0], "output_dir"), "");
  EXPECT_NE(Field(run.logs[0], "at_realtime_ns"), "0");
  // The window is named after --at.
  EXPECT_EQ(Field(run.logs[0], "window_realtime_ns"), Field(run.logs[0], "at_realtime_ns"));
  EXPECT_EQ(run.logs[2], "");
}

TEST(LumosCtlTest, RefusalsAndUnreachableProcessesExit1) {
  if (!CanIsolate()) GTEST_SKIP() << "needs `unshare -n` (root) to see only this test's agents";
  Agent busy{"ctl-job", 1};
  busy.refuse = "a window is being captured (request 12)";
  const AgentsRun run = RunWithAgents(
      {{"ctl-job", 0}, busy},
      {"capture --all", "capture --pid 4294967295", "capture --job no-such-job"}, true);
  ASSERT_EQ(run.ctl.size(), 3u) << run.harness_err;
  EXPECT_EQ(run.ctl[0].exit_code, 1);
  EXPECT_NE(run.ctl[0].out.find("pid " + run.pids[0] + ": accepted (request "), std::string::npos);
  EXPECT_NE(run.ctl[0].out.find("pid " + run.pids[1] +
                                ": refused: a window is being captured (request 12)\n"),
            std::string::npos)
      << run.ctl[0].out;
  EXPECT_EQ(run.ctl[0].err, "lumos-ctl capture: pid " + run.pids[1] + " refused\n");
  EXPECT_EQ(run.ctl[1].exit_code, 1);
  EXPECT_EQ(run.ctl[1].out,
            "pid 4294967295: unreachable: no agent endpoint @lumos-agent.4294967295\n");
  EXPECT_EQ(run.ctl[2].exit_code, 1);
  EXPECT_EQ(run.ctl[2].out, "");
  EXPECT_EQ(run.ctl[2].err,
            "lumos-ctl capture: no Lumos agent of job 'no-such-job' on this host\n");
}

// cancel: one line per process (cancelled, nothing to cancel, an older agent, unreachable); only
// an agent that could not answer the cancel fails the command.
TEST(LumosCtlTest, CancelSaysWhatEachProcessDid) {
  const std::string job = UniqueJob("cancel");
  Agent idle{job, 1};
  idle.refuse = "no window is armed or capturing";
  Agent old{job + "-old", 0};
  old.old = true;
  const AgentsRun run =
      RunWithAgents({{job, 0}, idle, old},
                    {"cancel --pid $P0 --request 12", "cancel --pid $P1", "cancel --pid $P2",
                     "cancel --job " + job, "cancel --pid 4294967295"},
                    CanIsolate());
  ASSERT_EQ(run.ctl.size(), 5u) << run.harness_err;
  EXPECT_EQ(run.ctl[0].exit_code, 0) << run.ctl[0].err;
  EXPECT_EQ(run.ctl[0].out,
            "pid " + run.pids[0] + ": cancelled: request 12: armed, dropped before it starts\n");
  // The handler got the request id and who asked.
  EXPECT_NE(run.logs[0].find("cancel request_id=12 peer_uid=" + std::to_string(geteuid()) +
                             " peer_comm=lumos-ctl\n"),
            std::string::npos)
      << run.logs[0];
  // Nothing to cancel is an answer, not a failure.
  EXPECT_EQ(run.ctl[1].exit_code, 0) << run.ctl[1].err;
  EXPECT_EQ(run.ctl[1].out,
            "pid " + run.pids[1] + ": nothing to cancel: no window is armed or capturing\n");
  EXPECT_NE(run.logs[1].find("cancel request_id=0 "), std::string::npos) << run.logs[1];
  // An agent older than the cancel message: one line that says so.
  EXPECT_EQ(run.ctl[2].exit_code, 1);
  EXPECT_EQ(run.ctl[2].out, "pid " + run.pids[2] +
                                ": this agent is older than lumos-ctl cancel (it answered: "
                                "unknown message type 6)\n");
  EXPECT_EQ(run.ctl[2].err, "lumos-ctl cancel: pid " + run.pids[2] + " cannot cancel\n");
  // --job: both processes of the job (not the other job's).
  EXPECT_EQ(run.ctl[3].exit_code, 0) << run.ctl[3].err;
  EXPECT_NE(run.ctl[3].out.find("pid " + run.pids[0] + ": cancelled: "), std::string::npos);
  EXPECT_NE(run.ctl[3].out.find("pid " + run.pids[1] + ": nothing to cancel: "), std::string::npos);
  EXPECT_EQ(run.ctl[3].out.find("pid " + run.pids[2]), std::string::npos) << run.ctl[3].out;
  EXPECT_EQ(run.ctl[4].exit_code, 1);
  EXPECT_EQ(run.ctl[4].out,
            "pid 4294967295: unreachable: no agent endpoint @lumos-agent.4294967295\n");
}

std::string Ctl(const std::string& args) { return std::string(LUMOS_CTL_PATH) + " " + args; }

std::string Usage(const std::string& program, const std::string& message) {
  return program + ": " + message + "\n(run `" + program + " --help` for usage)\n";
}

TEST(LumosCtlTest, BadArgumentsExit2) {
  struct Case {
    std::string args;
    std::string program;
    std::string message;
  };
  const Case cases[] = {
      {"", "lumos-ctl", "no command given (status, capture, cancel)"},
      {"snapshot", "lumos-ctl",
       "unknown command 'snapshot' (commands: status, capture, cancel; or --help, --version)"},
      {"cancel", "lumos-ctl cancel", "give exactly one of --pid, --job, --all"},
      {"cancel --all --job j", "lumos-ctl cancel", "give exactly one of --pid, --job, --all"},
      {"cancel --all --request 0", "lumos-ctl cancel",
       "--request 0: not a request id (1 to 2^64-1)"},
      {"cancel --all --request=-5", "lumos-ctl cancel",
       "--request -5: not a request id (1 to 2^64-1)"},
      {"cancel --all --request 12x", "lumos-ctl cancel",
       "--request 12x: not a request id (1 to 2^64-1)"},
      {"cancel --all --request 18446744073709551616", "lumos-ctl cancel",
       "--request 18446744073709551616: not a request id (1 to 2^64-1)"},
      {"cancel --all --iterations 3", "lumos-ctl cancel", ""},
      {"capture", "lumos-ctl capture", "give exactly one of --pid, --job, --all"},
      {"capture --pid 5 --all", "lumos-ctl capture", "give exactly one of --pid, --job, --all"},
      {"capture --all --iterations 3 --duration 2", "lumos-ctl capture",
       "give at most one of --iterations, --duration"},
      {"capture --all --at tomorrow", "lumos-ctl capture",
       "--at tomorrow: not a time (2026-12-01T23:50:00Z in UTC, +30s / +2m / +1h from now, or "
       "@<unix seconds>)"},
      {"capture --all --at 2030-02-30T00:00:00Z", "lumos-ctl capture",
       "--at 2030-02-30T00:00:00Z: not a time (2026-12-01T23:50:00Z in UTC, +30s / +2m / +1h "
       "from now, or @<unix seconds>)"},
      {"capture --all --at +30", "lumos-ctl capture",
       "--at +30: not a time (2026-12-01T23:50:00Z in UTC, +30s / +2m / +1h from now, or "
       "@<unix seconds>)"},
      {"capture --all --at @0", "lumos-ctl capture",
       "--at @0: 1970-01-01T00:00:00Z is in the past (now "},
      {"capture --all --at +30d", "lumos-ctl capture",
       "--at +30d: not a time (2026-12-01T23:50:00Z in UTC, +30s / +2m / +1h from now, or "
       "@<unix seconds>)"},
      {"capture --all --at +200h", "lumos-ctl capture", "--at +200h: "},
      {"capture --all --every-iteration 0", "lumos-ctl capture", "--every-iteration "},
      {"capture --all --iterations -1", "lumos-ctl capture", "--iterations "},
      {"capture --all --duration 0", "lumos-ctl capture", "--duration "},
      {"capture --pid 0", "lumos-ctl capture", "--pid "},
      {"status --timeout-ms 0", "lumos-ctl status", "--timeout-ms "},
      {"status extra", "lumos-ctl status", ""},
  };
  for (const Case& c : cases) {
    const auto r = RunCommand(Ctl(c.args));
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_EQ(r.out, "") << c.args;
    const std::string expected = Usage(c.program, c.message);
    if (c.message.empty() || c.message.back() == ' ') {
      // Only the start of the message is fixed (the parser's own wording, or the time now).
      EXPECT_EQ(r.err.rfind(c.program + ": " + c.message, 0), 0u) << c.args << ": " << r.err;
    } else {
      EXPECT_EQ(r.err, expected) << c.args;
    }
  }
}

TEST(LumosCtlTest, HelpAndVersion) {
  const auto top = RunCommand(Ctl("--help"));
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("capture (--pid P | --job J | --all)"), std::string::npos);
  const auto capture = RunCommand(Ctl("capture --help"));
  EXPECT_EQ(capture.exit_code, 0);
  for (const char* option : {"--pid", "--job", "--all", "--iterations", "--duration", "--at",
                             "--every-iteration", "-o", "--timeout-ms"}) {
    EXPECT_NE(capture.out.find(option), std::string::npos) << option;
  }
  EXPECT_NE(top.out.find("cancel (--pid P | --job J | --all) [--request ID]"), std::string::npos);
  const auto cancel = RunCommand(Ctl("cancel --help"));
  EXPECT_EQ(cancel.exit_code, 0);
  for (const char* option : {"--pid", "--job", "--all", "--request", "--timeout-ms"}) {
    EXPECT_NE(cancel.out.find(option), std::string::npos) << option;
  }
  const auto version = RunCommand(Ctl("--version"));
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, std::string("lumos-ctl ") + LUMOS_PROJECT_VERSION + "\n");
  // Output that cannot be written is a failure, never exit 0.
  const auto full = RunCommand(Ctl("--help >/dev/full"));
  EXPECT_EQ(full.exit_code, 1);
}

}  // namespace
}  // namespace lumos::agent::control
