// Test double for a trace file system that fills up or hangs (a full disk, a hung network file
// system), which a test cannot set up for real without root. LD_PRELOADed, it wraps write():
// after SHIM_TRACE_WRITES writes to files whose name ends in ".pb.zst" (2: the preamble and the
// header frame), further writes to them fail with ENOSPC (SHIM_TRACE_MODE=full), sleep 60 s
// first (SHIM_TRACE_MODE=hang) or wait at a gate (SHIM_TRACE_MODE=gate: a flush that lasts
// until the program says so). Other descriptors are untouched.
// The gate, for the program the shim is preloaded into (dlsym(RTLD_DEFAULT, ...)):
// lumos_shim_trace_write_waiting() is 1 while a trace write waits at it, and
// lumos_shim_open_trace_writes() lets every trace write through from then on (async-signal-
// safe, both). A write waits 60 s at most, so a program that never opens it still ends.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int IsTraceFile(int fd) {
  char link[64];
  char target[4096];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof(target) - 1);
  if (n < 7) return 0;
  target[n] = '\0';
  return strcmp(target + n - 7, ".pb.zst") == 0;
}

static atomic_int g_waiting;
static atomic_int g_open;

__attribute__((visibility("default"))) int lumos_shim_trace_write_waiting(void) {
  return atomic_load(&g_waiting);
}
__attribute__((visibility("default"))) void lumos_shim_open_trace_writes(void) {
  atomic_store(&g_open, 1);
}

static void WaitAtTheGate(void) {
  atomic_store(&g_waiting, 1);
  const struct timespec pause = {0, 1000000};
  for (int i = 0; i < 60000 && !atomic_load(&g_open); ++i) nanosleep(&pause, NULL);
  atomic_store(&g_waiting, 0);
}

ssize_t write(int fd, const void* data, size_t size) {
  static ssize_t (*real_write)(int, const void*, size_t);
  static long writes;  // One thread at a time writes the trace: no lock needed.
  if (real_write == NULL)
    real_write = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  if (IsTraceFile(fd)) {
    const char* allowed = getenv("SHIM_TRACE_WRITES");
    const char* mode = getenv("SHIM_TRACE_MODE");
    if (allowed != NULL && mode != NULL && writes >= atol(allowed)) {
      if (strcmp(mode, "hang") == 0) {
        sleep(60);
      } else if (strcmp(mode, "gate") == 0) {
        WaitAtTheGate();
      } else {
        errno = ENOSPC;
        return -1;
      }
    }
    ++writes;
  }
  return real_write(fd, data, size);
}
