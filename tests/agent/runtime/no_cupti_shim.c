// Test double for a machine without libcupti (this one has it in the loader's cache, so no
// environment setting can hide it): LD_PRELOADed, dlopen of any name containing "libcupti"
// fails, as it does where CUPTI is not installed. Everything else goes to the real dlopen.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

void* dlopen(const char* file, int mode) {
  static void* (*real_dlopen)(const char*, int);
  if (real_dlopen == NULL) real_dlopen = (void* (*)(const char*, int))dlsym(RTLD_NEXT, "dlopen");
  if (file != NULL && strstr(file, "libcupti") != NULL) return NULL;
  return real_dlopen(file, mode);
}
