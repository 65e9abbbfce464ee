/* cswap allocator: the reserve of warm zspages and its refill thread.
 *
 * A store that keeps growing drains the reserve over and over: the refill
 * thread must come back each time, not only after the first miss (it once
 * slept for good after filling the reserve the first time, and every new
 * zspage after that paid for its page faults on the write path).  While
 * the reserve holds zspages of a length, a new zspage of that length comes
 * from it and is not a miss.  Liveness waits are bounded (a generous poll,
 * not a speed threshold).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "test-owner.h"

#define RESERVE_PAGES 64
#define OBJECT_BYTES 3000       /* one size, so one zspage length */
#define ROUNDS 4
#define COOKIES (ROUNDS * RESERVE_PAGES * 4 + 1024)
#define REFILL_WAIT_SECONDS 20

static struct test_owner owner;
static uint32_t next_cookie;

static struct zs_pool_stats
pool_stats (void)
{
  struct zs_pool_stats stats;

  zs_pool_stats (owner.pool, &stats);
  return stats;
}

/* Allocates objects until the pool holds PAGES more pages. */
static bool
grow_pool_by (uint64_t pages)
{
  uint64_t target = pool_stats ().pages_used + pages;

  while (pool_stats ().pages_used < target) {
    if (next_cookie == COOKIES)
      return false;
    test_owner_lock (&owner, next_cookie);
    bool stored = test_owner_store (&owner, next_cookie, OBJECT_BYTES,
                                    next_cookie + 1);
    test_owner_unlock (&owner, next_cookie);
    if (!stored)
      return false;
    next_cookie++;
  }
  return true;
}

/* Waits until the refill thread has filled the reserve to more than half
 * its limit (one length wanted: its share is the whole limit).
 */
static bool
wait_for_refill (void)
{
  for (int i = 0; i < REFILL_WAIT_SECONDS * 100; i++) {
    if (pool_stats ().reserve_pages * 2 > RESERVE_PAGES)
      return true;
    usleep (10000);
  }
  return false;
}

int
main (void)
{
  test_owner_init (&owner, COOKIES, 0, RESERVE_PAGES * 4096);
  ok (zs_pool_start_refill (owner.pool) == 0, "the refill thread starts");

  /* The first zspage misses, which tells the refill thread the length. */
  ok (grow_pool_by (1), "first allocation");
  ok (pool_stats ().reserve_misses == 1, "the first zspage was a miss");

  for (int round = 1; round <= ROUNDS; round++) {
    bool refilled = wait_for_refill ();
    ok (refilled, "round %d: the refill thread filled the reserve (%" PRIu64
        " of %d pages)", round, pool_stats ().reserve_pages, RESERVE_PAGES);

    /* A zspage made now comes from the reserve. */
    uint64_t misses = pool_stats ().reserve_misses;
    uint64_t zspages = pool_stats ().zspages;
    while (pool_stats ().zspages == zspages && next_cookie < COOKIES)
      grow_pool_by (1);
    ok (pool_stats ().reserve_misses == misses,
        "round %d: a new zspage came from the reserve", round);

    /* Drain it twice over, whether or not the refill keeps pace. */
    ok (grow_pool_by (2 * RESERVE_PAGES), "round %d: grew the pool by %d pages",
        round, 2 * RESERVE_PAGES);
  }

  zs_pool_stop_refill (owner.pool);
  struct zs_pool_stats stats = pool_stats ();
  diag ("%" PRIu64 " zspages, %" PRIu64 " of them misses", stats.zspages,
        stats.reserve_misses);
  ok (stats.reserve_pages <= RESERVE_PAGES, "the reserve stayed within its "
      "limit (%" PRIu64 " pages)", stats.reserve_pages);
  ok (test_owner_verify_all (&owner), "every object intact");
  ok (zs_pool_check (owner.pool) == 0, "zs_pool_check passes");
  test_owner_fini (&owner);
  return tap_done ();
}
