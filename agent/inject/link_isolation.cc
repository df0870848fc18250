// Definitions that keep liblumos_agent.so apart from the job it is loaded into.
//
// 1. glibc 2.35. The .so must load on glibc 2.35 (Ubuntu 22.04, the base of many training
// containers), though it is built on glibc 2.36: a preloaded library that needs a newer glibc
// than the job's stops the job at start-up ("version `GLIBC_2.36' not found").
// The statically linked libstdc++ (GCC 12) carries std::random_device, which its own string
// code pulls in and which refers to arc4random, new in glibc 2.36. The agent never makes a
// random_device; this hidden definition satisfies the reference inside the .so, so no
// GLIBC_2.36 symbol is imported. AgentSoTest.ImportsNothingNewerThanGlibc235 keeps it so.
#include <sys/random.h>

#include <cstdint>

struct ZSTD_CCtx_s;
struct ZSTD_Trace;

extern "C" __attribute__((visibility("hidden"))) uint32_t arc4random() {
  uint32_t value = 0;
  // getrandom (glibc 2.25) with a blocking pool never returns short for 4 bytes; a failure
  // (ENOSYS on an old kernel) leaves a constant, acceptable for a function the agent never calls.
  if (getrandom(&value, sizeof(value), 0) != static_cast<ssize_t>(sizeof(value))) value = 0;
  return value;
}

// 2. zstd's tracing hooks. The static zstd calls ZSTD_trace_compress_begin/end when they are
// defined and refers to them weakly; left undefined, the dynamic linker would bind them to a
// job's own definitions (a zstd built with tracing, a profiler), which would then be handed the
// agent's zstd contexts, perhaps of another zstd version. Defined here, hidden: no tracing.
extern "C" __attribute__((visibility("hidden"))) unsigned long long ZSTD_trace_compress_begin(
    const ZSTD_CCtx_s* /*context*/) {
  return 0;  // 0: do not trace this compression (and never call ..._end for it).
}
extern "C" __attribute__((visibility("hidden"))) void ZSTD_trace_compress_end(
    unsigned long long /*trace_context*/, const ZSTD_Trace* /*trace*/) {}
