/* cswap allocator: the reserve of warm zspages and its refill thread.
 *
 * A store that keeps growing drains the reserve over and over: the refill
 * thread must come back each time, not only after the first miss (it once
 * slept for good after filling the reserve the first time, and every new
 * zspage after that paid for its page faults on the write path).  While
 * the reserve holds zspages of a length, a new zspage of that length comes
 * from it and is not a miss.  The reserve's size follows the pool (a
 * sixteenth of it, at least 1 MiB, at most its limit) both ways.
 * Liveness waits are bounded (a generous poll, not a speed threshold).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "test-owner.h"

#define RESERVE_PAGES 64        /* below the 1 MiB floor: the limit rules */
#define OBJECT_BYTES 3000       /* one size, so one zspage length */
#define ROUNDS 4
#define COOKIES 16384
#define REFILL_WAIT_SECONDS 20
#define BIG_RESERVE_PAGES 2048  /* 8 MiB, the daemons' default */
#define FLOOR_PAGES 256         /* the target's 1 MiB floor */

static struct test_owner owner;
static uint32_t next_cookie;

static struct zs_pool_stats
pool_stats (void)
{
  struct zs_pool_stats stats;

  zs_pool_stats (owner.pool, &stats);
  return stats;
}

static void
free_all (void)
{
  for (uint32_t cookie = 0; cookie < next_cookie; cookie++) {
    test_owner_lock (&owner, cookie);
    test_owner_drop (&owner, cookie);
    test_owner_unlock (&owner, cookie);
  }
  next_cookie = 0;
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
 * of TARGET pages (one length wanted: its share is the whole target).
 */
static bool
wait_for_refill (uint64_t target)
{
  for (int i = 0; i < REFILL_WAIT_SECONDS * 100; i++) {
    if (pool_stats ().reserve_pages * 2 > target)
      return true;
    usleep (10000);
  }
  return false;
}

static void
test_refill_rounds (void)
{
  test_owner_init (&owner, COOKIES, 0, RESERVE_PAGES * 4096);
  ok (zs_pool_start_refill (owner.pool) == 0, "the refill thread starts");

  /* The first zspage misses, which tells the refill thread the length. */
  ok (grow_pool_by (1), "first allocation");
  ok (pool_stats ().reserve_misses == 1, "the first zspage was a miss");

  for (int round = 1; round <= ROUNDS; round++) {
    bool refilled = wait_for_refill (RESERVE_PAGES);
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
  free_all ();
  test_owner_fini (&owner);
}

static void
test_target_follows_pool (void)
{
  test_owner_init (&owner, COOKIES, 0, BIG_RESERVE_PAGES * 4096);
  zs_pool_start_refill (owner.pool);

  grow_pool_by (1);
  bool refilled = wait_for_refill (FLOOR_PAGES);
  uint64_t reserve = pool_stats ().reserve_pages;
  ok (refilled && reserve <= FLOOR_PAGES, "a small pool: the reserve fills to "
      "its 1 MiB floor, not its 8 MiB limit (%" PRIu64 " pages)", reserve);

  /* 16 x 512 pages: the target is 512. */
  bool grown = grow_pool_by (16 * 512);
  uint64_t target = pool_stats ().pages_used / 16;
  ok (grown, "grew the pool to %" PRIu64 " pages", target * 16);
  refilled = wait_for_refill (target);
  reserve = pool_stats ().reserve_pages;
  ok (refilled && reserve > FLOOR_PAGES && reserve <= target,
      "the reserve grew with the pool: %" PRIu64 " pages (target %" PRIu64 ")",
      reserve, target);

  zs_pool_stop_refill (owner.pool);
  free_all ();
  reserve = pool_stats ().reserve_pages;
  ok (reserve <= FLOOR_PAGES, "the pool emptied: the reserve shrank back to "
      "its floor (%" PRIu64 " pages)", reserve);
  ok (zs_pool_check (owner.pool) == 0, "zs_pool_check passes");
  test_owner_fini (&owner);
}

int
main (void)
{
  test_refill_rounds ();
  test_target_follows_pool ();
  return tap_done ();
}
