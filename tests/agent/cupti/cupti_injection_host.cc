// Loads CUDA_INJECTION64_PATH and calls its InitializeInjection the way the CUDA driver does at
// cuInit (dlopen, dlsym), twice, then prints a line of "job output" (after argv[1] ms, when
// given: a job that runs on, so the agent's writer makes its passes). There is no driver here, so
// the agent's CUPTI channel meets the real libcupti returning CUPTI_ERROR_UNKNOWN.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  if (path == nullptr) {
    std::fputs("CUDA_INJECTION64_PATH is not set\n", stderr);
    return 3;
  }
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 4;
  }
  auto initialize = reinterpret_cast<int (*)()>(dlsym(library, "InitializeInjection"));
  if (initialize == nullptr) {
    std::fputs("no InitializeInjection\n", stderr);
    return 5;
  }
  const int first = initialize();
  const int second = initialize();  // The driver calls it once; a second call changes nothing.
  if (argc > 1) usleep(static_cast<useconds_t>(std::atoi(argv[1])) * 1000);
  std::printf("job output: %d %d\n", first, second);
  return 0;
}
