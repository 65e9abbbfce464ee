/* cswap: the monotonic clock as one number, for intervals and deadlines,
 * and the condition variables that wait against it (a deadline on the
 * wall clock would move when someone sets the time).
 */
#ifndef CSWAP_MONOTONIC_H
#define CSWAP_MONOTONIC_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t
monotonic_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* NS on the monotonic clock, as pthread_cond_timedwait takes it. */
static inline struct timespec
monotonic_timespec (uint64_t ns)
{
  return (struct timespec) { .tv_sec = ns / 1000000000u,
                             .tv_nsec = ns % 1000000000u };
}

/* Initialises COND to time its waits on the monotonic clock. */
static inline void
monotonic_cond_init (pthread_cond_t *cond)
{
  pthread_condattr_t attr;

  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (cond, &attr);
  pthread_condattr_destroy (&attr);
}

#endif /* CSWAP_MONOTONIC_H */
