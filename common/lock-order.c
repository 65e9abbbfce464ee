/* cswap: the debug builds' check of the lock order (lock-order.h).
 *
 * Each thread lists the locks it holds, with their ranks.  Taking a lock
 * whose rank is not later than every rank held is a lock-order
 * violation, and a function asserting a lock that the list lacks was
 * called without it: either aborts with the two places named.  The list
 * is short (the deepest nesting is four locks), so a linear scan is all
 * it needs.  Compiled to nothing without CSWAP_LOCK_CHECKS.
 */
#ifdef CSWAP_LOCK_CHECKS

#include <stdio.h>
#include <stdlib.h>

#include "lock-order.h"

#define MAX_HELD 8

struct held_lock {
  const pthread_mutex_t *lock;
  enum lock_rank rank;
};

static _Thread_local struct held_lock held[MAX_HELD];
static _Thread_local unsigned held_count;

static void
lock_check_fail (const char *what)
{
  fprintf (stderr, "cswap: lock order: %s (holding", what);
  for (unsigned n = 0; n < held_count; n++)
    fprintf (stderr, " %p rank %d", (const void *) held[n].lock, held[n].rank);
  fprintf (stderr, ")\n");
  abort ();
}

void
lock_check_acquire (const pthread_mutex_t *lock, enum lock_rank rank)
{
  for (unsigned n = 0; n < held_count; n++) {
    if (held[n].lock == lock)
      lock_check_fail ("a lock taken twice");
    if (held[n].rank >= rank)
      lock_check_fail ("a lock taken under one of its rank or later");
  }
  if (held_count == MAX_HELD)
    lock_check_fail ("more locks held than the order has");
  held[held_count++] = (struct held_lock) { .lock = lock, .rank = rank };
}

void
lock_check_release (const pthread_mutex_t *lock)
{
  for (unsigned n = 0; n < held_count; n++)
    if (held[n].lock == lock) {
      held[n] = held[--held_count];
      return;
    }
  lock_check_fail ("a lock released that was not taken");
}

void
lock_check_held (const pthread_mutex_t *lock, const char *what,
                 const char *file, int line)
{
  for (unsigned n = 0; n < held_count; n++)
    if (held[n].lock == lock)
      return;
  fprintf (stderr, "cswap: %s:%d: %s is not held\n", file, line, what);
  lock_check_fail ("a function called without its lock");
}

#endif /* CSWAP_LOCK_CHECKS */
