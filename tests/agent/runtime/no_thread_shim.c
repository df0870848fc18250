// Test double for a process that may not create threads (RLIMIT_NPROC reached, a full pids
// cgroup): LD_PRELOADed, every pthread_create fails with EAGAIN, as glibc's does then. Such a
// limit cannot be set up reliably for one test process (it is per user, or needs a cgroup).
#include <errno.h>
#include <pthread.h>

int pthread_create(pthread_t* thread, const pthread_attr_t* attributes, void* (*start)(void*),
                   void* argument) {
  (void)thread;
  (void)attributes;
  (void)start;
  (void)argument;
  return EAGAIN;
}
