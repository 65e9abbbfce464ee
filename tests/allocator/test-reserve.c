/* cswap allocator: the reserve of warm zspages and its refill thread.
 *
 * A store that keeps growing drains the reserve over and over: the refill
 * thread must come back each time, not only after the first miss (it once
 * slept for good after filling the reserve the first time, and every new
 * zspage after that paid for its page faults on the write path).  While
 * the reserve holds zspages of a length, a new zspage of that length comes
 * from it and is not a miss.  The reserve's size follows the pool (a
 * sixteenth of it, at least 1 MiB, at most its limit) both ways.
 *
 * While the refill thread runs, a thread that takes a zspage never faults
 * pages in itself: on a machine with no free memory that page fault is
 * reclaim the swap-out it serves would have to finish (a hung VM,
 * doc/design.md).  It waits for the refill thread, for 10 seconds at most,
 * and then its allocation fails with ETIMEDOUT, and the pool stays whole.
 * Liveness waits are bounded (a generous poll, not a speed threshold).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
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

/* The refill thread's page faults, held at a gate while the test closes
 * it, as reclaim holds them on a machine out of memory; and a count of
 * those the test's own thread (every taker here) makes.
 */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_changed = PTHREAD_COND_INITIALIZER;
static bool gate_closed;
static pthread_t taker_thread;
static _Atomic unsigned taker_populates;

extern void __real_populate_pages (struct zs_pool *pool, uint32_t id,
                                   unsigned pages);
extern void __wrap_populate_pages (struct zs_pool *pool, uint32_t id,
                                   unsigned pages);
void
__wrap_populate_pages (struct zs_pool *pool, uint32_t id, unsigned pages)
{
  if (pthread_equal (pthread_self (), taker_thread))
    taker_populates++;
  pthread_mutex_lock (&gate_lock);
  while (gate_closed && !pthread_equal (pthread_self (), taker_thread))
    pthread_cond_wait (&gate_changed, &gate_lock);
  pthread_mutex_unlock (&gate_lock);
  __real_populate_pages (pool, id, pages);
}

static void
set_gate (bool closed)
{
  pthread_mutex_lock (&gate_lock);
  gate_closed = closed;
  pthread_cond_broadcast (&gate_changed);
  pthread_mutex_unlock (&gate_lock);
}

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
  ok (stats.reserve_misses > 0 && taker_populates == 0, "every miss (%"
      PRIu64 ") waited for the refill thread: the taker faulted in no "
      "page (%u times)", stats.reserve_misses, taker_populates);
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

/* The refill thread stuck in reclaim: a taker's allocation fails after
 * its wait, the objects already stored stay intact, and allocation goes
 * on once the refill thread has memory again.
 */
static void
test_refill_held (void)
{
  test_owner_init (&owner, COOKIES, 0, RESERVE_PAGES * 4096);
  zs_pool_start_refill (owner.pool);
  grow_pool_by (1);
  wait_for_refill (RESERVE_PAGES);

  set_gate (true);
  bool grew = grow_pool_by (4 * RESERVE_PAGES);
  int err = errno;
  uint32_t stored = next_cookie;
  struct zs_pool_stats stats = pool_stats ();
  ok (!grew && err == ETIMEDOUT && stats.reserve_timeouts == 1,
      "refill held: once the reserve ran dry, an allocation failed with "
      "ETIMEDOUT (errno %d, %" PRIu64 " timeouts, %u objects stored)", err,
      stats.reserve_timeouts, stored);
  ok (taker_populates == 0, "the taker faulted in no page itself");
  ok (test_owner_verify_all (&owner), "every object stored before intact");

  set_gate (false);
  ok (grow_pool_by (RESERVE_PAGES), "refill released: allocations go on");
  zs_pool_stop_refill (owner.pool);
  ok (taker_populates == 0 && test_owner_verify_all (&owner),
      "still no page faulted in by the taker, every object intact");
  ok (zs_pool_check (owner.pool) == 0, "zs_pool_check passes");
  free_all ();
  test_owner_fini (&owner);
}

/* A size whose zspages are longer than OBJECT_BYTES's, or 0. */
static uint32_t
size_of_longer_zspages (void)
{
  unsigned pages = zs_new_zspage_pages (owner.pool, OBJECT_BYTES);

  for (uint32_t size = 8; size <= 4096; size += 8)
    if (zs_new_zspage_pages (owner.pool, size) > pages)
      return size;
  return 0;
}

/* The reserve full to its limit with zspages of one length, and a taker
 * waiting for another: the refill thread gives warm zspages back to make
 * room for the waiter's, rather than making one it cannot keep (the
 * taker would wait out its bound and fail).
 */
static void
test_waiter_of_another_length (void)
{
  test_owner_init (&owner, COOKIES, 0, RESERVE_PAGES * 4096);
  zs_pool_start_refill (owner.pool);
  grow_pool_by (4 * RESERVE_PAGES);
  free_all ();                  /* emptied zspages fill the reserve */
  uint32_t longer = size_of_longer_zspages ();
  unsigned longer_pages = zs_new_zspage_pages (owner.pool, longer);
  uint64_t held = pool_stats ().reserve_pages;
  ok (longer && held + longer_pages > RESERVE_PAGES, "the reserve holds %"
      PRIu64 " pages of %u-page zspages: no room for a %u-page one "
      "(objects of %u bytes)", held,
      zs_new_zspage_pages (owner.pool, OBJECT_BYTES), longer_pages, longer);

  test_owner_lock (&owner, 0);
  bool stored = test_owner_store (&owner, 0, longer, 1);
  test_owner_unlock (&owner, 0);
  next_cookie = 1;
  struct zs_pool_stats stats = pool_stats ();
  ok (stored && stats.reserve_timeouts == 0 && taker_populates == 0,
      "the refill thread made room and the waiting taker got its zspage "
      "(%" PRIu64 " timeouts)", stats.reserve_timeouts);
  ok (stats.reserve_pages <= RESERVE_PAGES, "the reserve stayed within "
      "its limit (%" PRIu64 " pages)", stats.reserve_pages);
  zs_pool_stop_refill (owner.pool);
  ok (zs_pool_check (owner.pool) == 0, "zs_pool_check passes");
  free_all ();
  test_owner_fini (&owner);
}

/* Whether every page the pool holds, live or warm, was counted faulted
 * in and not given back.  No other thread may be changing the pool.
 */
static bool
churn_counted (const char *when)
{
  struct zs_pool_stats stats = pool_stats ();
  uint64_t held = stats.pages_used + stats.reserve_pages;

  return ok (stats.pages_faulted_in - stats.pages_given_back == held,
             "%s: %" PRIu64 " pages faulted in less %" PRIu64 " given back "
             "are the %" PRIu64 " the pool holds", when,
             stats.pages_faulted_in, stats.pages_given_back, held);
}

/* Without a refill thread, the taker faults its zspage in itself. */
static void
test_no_refill_thread (void)
{
  test_owner_init (&owner, COOKIES, 0, RESERVE_PAGES * 4096);
  taker_populates = 0;
  bool grew = grow_pool_by (2 * RESERVE_PAGES);
  unsigned populates = taker_populates;
  ok (grew && populates > 0, "no refill thread: the taker faulted its "
      "zspages in (%u times)", populates);
  ok (zs_pool_check (owner.pool) == 0, "zs_pool_check passes");
  churn_counted ("grown");
  free_all ();
  churn_counted ("emptied");
  ok (pool_stats ().pages_given_back >= RESERVE_PAGES,
      "the zspages the reserve had no room for were given back");
  test_owner_fini (&owner);
}

int
main (void)
{
  taker_thread = pthread_self ();
  test_refill_rounds ();
  test_target_follows_pool ();
  test_refill_held ();
  test_waiter_of_another_length ();
  test_no_refill_thread ();
  return tap_done ();
}
