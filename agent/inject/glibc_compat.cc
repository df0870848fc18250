// Keeps liblumos_agent.so loadable on glibc 2.35 (Ubuntu 22.04, the base of many training
// containers), though it is built on glibc 2.36: a preloaded library that needs a newer glibc
// than the job's stops the job at start-up ("version `GLIBC_2.36' not found").
//
// The statically linked libstdc++ (GCC 12) carries std::random_device, which its own string
// code pulls in and which refers to arc4random, new in glibc 2.36. The agent never makes a
// random_device; this hidden definition satisfies the reference inside the .so, so no
// GLIBC_2.36 symbol is imported. AgentSoTest.ImportsNothingNewerThanGlibc235 keeps it so.
#include <sys/random.h>

#include <cstdint>

extern "C" __attribute__((visibility("hidden"))) uint32_t arc4random() {
  uint32_t value = 0;
  // getrandom (glibc 2.25) with a blocking pool never returns short for 4 bytes; a failure
  // (ENOSYS on an old kernel) leaves a constant, acceptable for a function the agent never calls.
  if (getrandom(&value, sizeof(value), 0) != static_cast<ssize_t>(sizeof(value))) value = 0;
  return value;
}
