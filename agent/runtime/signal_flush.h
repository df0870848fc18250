// Design: SIGTERM and SIGINT flush the trace without breaking the job's own handling. The
// handler (async-signal-safe: atomics, write(), nanosleep()) asks the agent's writer thread to
// write out what was recorded (Agent::FlushFromSignal) and waits for it up to kWait; then it
// passes the signal on exactly as if the agent were not there: to the handler the job had
// installed before the agent started (same SA_RESTART, SA_ONSTACK, SA_NODEFER and SA_RESETHAND
// behaviour, and the same mask), or, when the action was the
// default one, by restoring it and re-raising, so the process dies of the signal as before.
// When the process is about to die that way, the writer also closes the file with its trailer;
// when the job handles the signal itself, it only flushes (the job may go on, and the exit
// handler closes the file later). A signal that arrives in a thread whose handler is already
// waiting for a flush (SA_NODEFER, or SIGINT during SIGTERM's wait) goes on to the job's
// handler at once, without a second wait; one whose default action kills still waits, so the
// trace gets its trailer.
// Not installed for a signal the job ignores: a handler would also change what its exec'd
// children inherit (ignored stays ignored across exec, a handler does not). A handler the job
// installs after the agent replaces this one: the job then owns the signal, and exit() still
// closes the trace through atexit.
// Threading: Install() once, from Agent::Start (the writer thread blocks both signals).
#pragma once

#include <cstdint>

namespace lumos::agent {

class FlushOnSignals {
 public:
  static constexpr int64_t kWaitNs = 2'000'000'000;  // Longest a signal waits for the flush.

  // Installs the handler for SIGTERM and SIGINT where the job does not ignore them.
  static void Install();
  // Both signals, for pthread_sigmask in the writer thread.
  static void BlockInThisThread();
};

}  // namespace lumos::agent
