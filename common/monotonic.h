/* cswap: the monotonic clock as one number, for intervals and deadlines. */
#ifndef CSWAP_MONOTONIC_H
#define CSWAP_MONOTONIC_H

#include <stdint.h>
#include <time.h>

static inline uint64_t
monotonic_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + ts.tv_nsec;
}

#endif /* CSWAP_MONOTONIC_H */
