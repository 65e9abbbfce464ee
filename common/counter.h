/* cswap: event counters — relaxed 64-bit atomics.
 *
 * Every counter the layers keep (the store's, the tier's) is an
 * atomic_uint_fast64_t bumped with counter_add and read with counter_get.
 * Relaxed: each counter is exact, a snapshot of several is not
 * simultaneous, and no counter orders any other memory.  DELTA may be
 * negative (a slot uncounted): the addition wraps as unsigned, so the
 * counter comes back to where it was.
 */
#ifndef CSWAP_COUNTER_H
#define CSWAP_COUNTER_H

#include <stdatomic.h>
#include <stdint.h>

static inline void
counter_add (atomic_uint_fast64_t *counter, int64_t delta)
{
  atomic_fetch_add_explicit (counter, (uint64_t) delta, memory_order_relaxed);
}

static inline uint64_t
counter_get (atomic_uint_fast64_t *counter)
{
  return atomic_load_explicit (counter, memory_order_relaxed);
}

#endif /* CSWAP_COUNTER_H */
