#include "agent/runtime/signal_flush.h"

#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>  // gettid

#include <atomic>

#include "agent/runtime/agent_runtime.h"

namespace lumos::agent {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT};
struct sigaction g_previous[NSIG];  // Written once in Install(), before the handler is.
// The thread whose handler waits for a flush; 0: none. Lock-free, so async-signal-safe.
std::atomic<pid_t> g_flushing_thread{0};
static_assert(std::atomic<pid_t>::is_always_lock_free);

void OnTerminatingSignal(int signo, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const struct sigaction& previous = g_previous[signo];
  const bool dies = !(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_DFL;
  const pid_t self = gettid();
  pid_t flushing = 0;
  if (g_flushing_thread.compare_exchange_strong(flushing, self, std::memory_order_acq_rel)) {
    Agent::Get().FlushFromSignal(/*finish=*/dies, FlushOnSignals::kWaitNs);
    g_flushing_thread.store(0, std::memory_order_release);
  } else if (flushing != self || dies) {
    // Another thread's signal is being flushed: this one waits for the same flush. So does a
    // nested signal that will kill the process, so the trace still gets its trailer.
    Agent::Get().FlushFromSignal(/*finish=*/dies, FlushOnSignals::kWaitNs);
  }
  // Else the signal nested in this thread's own wait (SA_NODEFER, or the other signal): it goes
  // on to the job's handler at once, as without the agent; waiting for the same flush again
  // would stack delays of up to kWaitNs.
  errno = saved_errno;
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction != nullptr) previous.sa_sigaction(signo, info, context);
  } else if (previous.sa_handler == SIG_DFL) {
    // Blocked while this handler runs: the re-raised signal arrives when it returns, with
    // the default action.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(signo, &default_action, nullptr);
    raise(signo);
  } else if (previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signo);
  }
}

}  // namespace

void FlushOnSignals::Install() {
  for (int signo : kSignals) {
    struct sigaction current {};
    if (sigaction(signo, nullptr, &current) != 0) continue;
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) continue;
    g_previous[signo] = current;
    struct sigaction ours {};
    ours.sa_sigaction = OnTerminatingSignal;
    ours.sa_mask = current.sa_mask;
    // As the job's handler was: restarting interrupted calls or not, on its stack, blocking
    // the signal while it runs or not (SA_NODEFER), and one-shot (SA_RESETHAND: the kernel
    // resets the action to SIG_DFL as it enters this handler, so the job's handler runs once
    // and the next signal kills, e.g. "press Ctrl-C twice to quit").
    ours.sa_flags =
        SA_SIGINFO | (current.sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER | SA_RESETHAND));
    sigaction(signo, &ours, nullptr);
  }
}

void FlushOnSignals::BlockInThisThread() {
  sigset_t set;
  sigemptyset(&set);
  for (int signo : kSignals) sigaddset(&set, signo);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace lumos::agent
