// Loads CUDA_INJECTION64_PATH and calls its InitializeInjection the way the CUDA driver does at
// cuInit (dlopen, dlsym), twice, then prints a line of "job output". There is no driver here, so
// the agent's CUPTI channel meets the real libcupti returning CUPTI_ERROR_UNKNOWN.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

int main() {
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
  std::printf("job output: %d %d\n", first, second);
  return 0;
}
