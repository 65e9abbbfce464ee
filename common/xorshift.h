/* cswap: a per-thread xorshift64 generator, for fault injection
 * (tier/io-fault.c, daemon/serve/uring-fault.c): cheap, and the same
 * sequence on every run of a thread, so that a failing run repeats.
 * Not for anything that needs unpredictable numbers.
 */
#ifndef CSWAP_XORSHIFT_H
#define CSWAP_XORSHIFT_H

#include <stdint.h>

static inline uint64_t
xorshift_next (void)
{
  static _Thread_local uint64_t state = 0x9e3779b97f4a7c15ull;

  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

#endif /* CSWAP_XORSHIFT_H */
