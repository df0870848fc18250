// A small NVTX user for the agent's end-to-end tests. It behaves the same with and without the
// agent (same stdout, exit 0). Modes:
//   basic (default): 4 push/pop (nested, long name, in a domain), 3 start/end (one ended on
//     another thread, one in a domain), 3 marks (A, Ex, in a domain), an unbalanced pop.
//   fork: the parent pushes "parent-before", forks a child that pushes "child-range", marks
//     "child-mark" and exits, then pushes "parent-after".
//   wait: pushes "before-signal", prints "ready" and waits for a signal (SIGTERM kills it).
//   deep: pushes 40 nested ranges and pops them all (8 deeper than the agent's stack).
//   handled: installs its own SIGTERM handler first, pushes "before-signal", prints "ready",
//     waits for SIGTERM, then pushes "after-signal", prints "handled" and exits 0.
//   chain: every entry point the agent hooks a known number of times (the counts below), for
//     the chaining tests; prints what NVTX returned: "push D.. pop D..", "starts ID.." (the
//     ids of all 7 start/end ranges). A domain "lumos.early" is created before the first
//     nvtxNameOsThreadA, which is where a lazily patching chained library installs itself.
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

nvtxEventAttributes_t AsciiAttributes(const char* text) {
  nvtxEventAttributes_t attributes = {};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.colorType = NVTX_COLOR_ARGB;
  attributes.color = 0xFF00FF00;
  attributes.category = 7;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = text;
  return attributes;
}

int Basic() {
  nvtxRangePushA("outer");
  nvtxRangePushA("inner");
  nvtxRangePop();
  nvtxRangePop();
  nvtxRangePushA("this-is-a-very-long-range-name-over-24-bytes");
  nvtxRangePop();
  nvtxRangePop();  // Unbalanced: must be ignored.

  nvtxMarkA("mark-a");
  nvtxEventAttributes_t mark = AsciiAttributes("mark-ex");
  nvtxMarkEx(&mark);

  nvtxRangeId_t local = nvtxRangeStartA("local-range");
  nvtxRangeEnd(local);
  nvtxRangeId_t cross = nvtxRangeStartA("cross-thread");
  std::thread ender([cross] { nvtxRangeEnd(cross); });
  ender.join();

  nvtxDomainHandle_t domain = nvtxDomainCreateA("lumos.test");
  nvtxStringHandle_t registered = nvtxDomainRegisterStringA(domain, "registered-name");
  nvtxEventAttributes_t push = AsciiAttributes("");
  push.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  push.message.registered = registered;
  nvtxDomainRangePushEx(domain, &push);
  nvtxDomainRangePop(domain);
  nvtxEventAttributes_t start = AsciiAttributes("domain-range");
  nvtxRangeId_t domain_range = nvtxDomainRangeStartEx(domain, &start);
  nvtxDomainRangeEnd(domain, domain_range);
  nvtxEventAttributes_t domain_mark = AsciiAttributes("domain-mark");
  nvtxDomainMarkEx(domain, &domain_mark);
  std::printf("workload done\n");
  return 0;
}

int Fork() {
  nvtxRangePushA("parent-before");
  nvtxRangePop();
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    nvtxRangePushA("child-range");
    nvtxMarkA("child-mark");
    nvtxRangePop();
    std::exit(0);  // Runs atexit handlers: the agent's must not write in the child.
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return 1;
  }
  nvtxRangePushA("parent-after");
  nvtxRangePop();
  std::printf("fork workload done\n");
  return 0;
}

int Deep() {
  for (int i = 0; i < 40; ++i) nvtxRangePushA("nested");
  for (int i = 0; i < 40; ++i) nvtxRangePop();
  std::printf("deep workload done\n");
  return 0;
}

// The chain mode's calls, per entry point (tests/agent/nvtx/nvtx_chain_test.cc checks them).
int Chain() {
  nvtxDomainHandle_t early = nvtxDomainCreateA("lumos.early");  // DomainCreateA 1 of 2.
  nvtxNameOsThreadA(0, "chain-main");                           // NameOsThreadA 1.
  int push[5], pop[5];
  push[0] = nvtxRangePushA("chain-push-a-1");  // RangePushA 2.
  push[1] = nvtxRangePushA("chain-push-a-2");
  nvtxEventAttributes_t attributes = AsciiAttributes("chain-push-ex");
  for (int i = 2; i < 5; ++i) push[i] = nvtxRangePushEx(&attributes);  // RangePushEx 3.
  for (int& result : pop) result = nvtxRangePop();                     // RangePop 5.
  nvtxRangeId_t starts[7];
  starts[0] = nvtxRangeStartA("chain-start-a");  // RangeStartA 2.
  starts[1] = nvtxRangeStartA("chain-start-a");
  attributes = AsciiAttributes("chain-start-ex");
  for (int i = 2; i < 5; ++i) starts[i] = nvtxRangeStartEx(&attributes);  // RangeStartEx 3.
  for (int i = 0; i < 5; ++i) nvtxRangeEnd(starts[i]);                    // RangeEnd 5.
  attributes = AsciiAttributes("chain-mark");
  nvtxMarkA("chain-mark-a");  // MarkA 2.
  nvtxMarkA("chain-mark-a");
  for (int i = 0; i < 3; ++i) nvtxMarkEx(&attributes);  // MarkEx 3.

  nvtxDomainHandle_t domain = nvtxDomainCreateA("lumos.chain");  // DomainCreateA 2 of 2.
  nvtxStringHandle_t names[2] = {nvtxDomainRegisterStringA(domain, "chain-registered-1"),
                                 nvtxDomainRegisterStringA(domain, "chain-registered-2")};
  nvtxEventAttributes_t registered = AsciiAttributes("");
  registered.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  for (int i = 0; i < 3; ++i) {  // DomainRangePushEx 3, DomainRangePop 3.
    registered.message.registered = names[i % 2];
    nvtxDomainRangePushEx(domain, &registered);
    nvtxDomainRangePop(domain);
  }
  registered.message.registered = names[1];
  for (int i = 5; i < 7; ++i) starts[i] = nvtxDomainRangeStartEx(domain, &registered);  // 2.
  for (int i = 5; i < 7; ++i) nvtxDomainRangeEnd(domain, starts[i]);                    // 2.
  attributes = AsciiAttributes("chain-domain-mark");
  for (int i = 0; i < 4; ++i) nvtxDomainMarkEx(domain, &attributes);  // DomainMarkEx 5.
  attributes = AsciiAttributes("chain-early-mark");
  nvtxDomainMarkEx(early, &attributes);
  nvtxDomainDestroy(domain);  // DomainDestroy 1.

  std::printf("push %d %d %d %d %d pop %d %d %d %d %d\nstarts", push[0], push[1], push[2], push[3],
              push[4], pop[0], pop[1], pop[2], pop[3], pop[4]);
  for (nvtxRangeId_t id : starts) std::printf(" %llu", static_cast<unsigned long long>(id));
  std::printf("\nchain workload done\n");
  return 0;
}

volatile sig_atomic_t g_terminate = 0;

void OnTerminate(int) { g_terminate = 1; }

int WaitForSignal(bool handled) {
  if (handled) {
    struct sigaction action {};
    action.sa_handler = OnTerminate;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
  }
  // Blocked until sigsuspend: no signal can slip in between the check and the wait.
  sigset_t terminate, previous;
  sigemptyset(&terminate);
  sigaddset(&terminate, SIGTERM);
  sigprocmask(SIG_BLOCK, &terminate, &previous);
  nvtxRangePushA("before-signal");
  nvtxRangePop();
  std::printf("ready\n");
  std::fflush(stdout);
  while (!g_terminate) sigsuspend(&previous);
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  nvtxRangePushA("after-signal");
  nvtxRangePop();
  std::printf("handled\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "fork") == 0) return Fork();
  if (argc > 1 && std::strcmp(argv[1], "deep") == 0) return Deep();
  if (argc > 1 && std::strcmp(argv[1], "chain") == 0) return Chain();
  if (argc > 1 && std::strcmp(argv[1], "wait") == 0) return WaitForSignal(false);
  if (argc > 1 && std::strcmp(argv[1], "handled") == 0) return WaitForSignal(true);
  return Basic();
}
