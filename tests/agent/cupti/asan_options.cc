// The sanitizers' defaults for this binary (ASAN_OPTIONS in the environment still wins for
// what it names). It loads the real libcupti.so.13, whose dynamic TLS GCC 12's LeakSanitizer
// tracks through its __tls_get_addr interceptor and, depending on the process's memory layout,
// misreads at the exit-time leak check ("DTLS 6 at 0x203-0x2800001305", then "Tracer caught
// signal 11"): the test passed and the process aborted, from the build directory only, on
// 2026-12-04. Without the interceptor the leak check still scans every thread's stack and static
// TLS. Unused outside sanitizer builds.
extern "C" __attribute__((used, visibility("default"))) const char* __asan_default_options() {
  return "intercept_tls_get_addr=0";
}
