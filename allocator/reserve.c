/* cswap allocator: the reserve of warm zspages.
 *
 * A new zspage needs pages_per_zspage fresh pages.  Getting them from the
 * kernel on the spot means a page fault (or a populate call) per page,
 * each of which may have to reclaim memory first: on the swap-out path
 * that is the wait a swap device must not have, and on a virtual machine
 * with shadow page tables every first touch of a page is also an exit to
 * the hypervisor (14.9 us a page on the VM it was measured on, 0.09 us once
 * another thread has written to it: doc/design.md).  So the pool keeps a
 * reserve, in lists by page count:
 *
 *  - an empty zspage goes to the reserve instead of back to the kernel
 *    while the reserve is below its target, so a store that swaps pages
 *    in and out reuses warm memory;
 *  - a class that takes a zspage sets its length's bit in reserve_wanted,
 *    and the refill thread, when running, tops up each wanted length to an
 *    equal share of the target with pages it has faulted in ahead of
 *    demand, woken when a length is down to half its share;
 *  - while the refill thread runs, it is the only thread that faults pages
 *    in: a taker that finds no zspage of its length waits for it, at most
 *    RESERVE_WAIT_NS, and then fails (ETIMEDOUT).
 *
 * Why a taker does not fault the pages in itself: it is serving a
 * swap-out, as an I/O flusher, so its page faults reclaim without I/O,
 * and on a machine whose free memory is gone that reclaim loops (the
 * kernel does not OOM-kill for a GFP_NOIO allocation) while what would
 * free memory is the very swap-out it is serving.  That hung a VM with
 * one request thread per connection (doc/design.md, "The smallest
 * machine").  Waiting with a bound turns it into a failed write: the
 * kernel keeps the page dirty and goes on, and if nothing can be swapped
 * out its OOM killer acts, as with zram when zs_malloc fails.  The
 * refill thread may loop in reclaim the same way, but no request waits
 * on it for longer than the bound.
 *
 * The target grows with the pool: a sixteenth of its pages, at least
 * 1 MiB, at most the limit (config.reserve_bytes).  An idle device holds
 * little warm memory; a busy one enough for a burst of writes while the
 * refill thread catches up (1, 2 and 8 MiB gave the same store speed in
 * bench/store, where the refill thread keeps up).
 *
 * The reserve is bounded, counted (zs_pool_stats.reserve_pages), and not
 * in pages_used: it is the pool's slack, not its live data.
 *
 * Everything here is under the pool lock except faulting pages in and
 * giving them back.  Lock order: common/lock-order.h.
 */
#include <errno.h>

#include "monotonic.h"
#include "zs-internal.h"

#define RESERVE_POOL_FRACTION 16
#define RESERVE_MIN_PAGES 256           /* 1 MiB */
/* Long enough that only a machine that cannot free a page gets the
 * failure, short next to the kernel's hung-task report (120 s).  One
 * second was too short: in the 160 MiB VM, with swapping just begun,
 * the refill thread alone left 2 and 19 writes of a fill-check waiting
 * longer than that for a zspage it was still faulting in.
 */
#define RESERVE_WAIT_NS (10 * UINT64_C (1000000000))

/* How many pages the reserve may hold now.  Pool lock held. */
static uint64_t
reserve_target_locked (struct zs_pool *pool)
{
  uint64_t target = zs_pool_pages_used (pool) / RESERVE_POOL_FRACTION;

  if (target < RESERVE_MIN_PAGES)
    target = RESERVE_MIN_PAGES;
  return target < pool->reserve_limit_pages ? target : pool->reserve_limit_pages;
}

/* Pops a warm zspage of PAGES pages, or returns 0.  Pool lock held. */
static uint32_t
reserve_pop_locked (struct zs_pool *pool, unsigned pages)
{
  uint32_t id = pool->reserve_head[pages];

  if (id) {
    pool->reserve_head[pages] = zspage_desc (pool, id)->link.next_id;
    pool->reserve_count[pages]--;
    pool->reserve_pages -= pages;
  }
  return id;
}

/* Puts ID, with PAGES warm pages, in the reserve, and wakes the takers
 * waiting for that length (wherever it came from: the refill thread or a
 * zspage fallen empty).  Pool lock held.
 */
static void
reserve_link_locked (struct zs_pool *pool, uint32_t id, unsigned pages)
{
  zspage_desc (pool, id)->link.next_id = pool->reserve_head[pages];
  pool->reserve_head[pages] = id;
  pool->reserve_count[pages]++;
  pool->reserve_pages += pages;
  if (pool->reserve_waiters[pages])
    pthread_cond_broadcast (&pool->reserve_stocked_cond);
}

/* Pushes ID, with PAGES warm pages, unless the reserve is full (up to its
 * target, or its limit for a length a taker waits for): returns whether
 * it did.  Pool lock held.
 */
static bool
reserve_push_locked (struct zs_pool *pool, uint32_t id, unsigned pages)
{
  uint64_t bound = pool->reserve_waiters[pages]
    ? pool->reserve_limit_pages : reserve_target_locked (pool);

  if (pool->reserve_pages + pages > bound)
    return false;
  reserve_link_locked (pool, id, pages);
  return true;
}

/* The pages each wanted length may keep in the reserve.  Pool lock held. */
static uint64_t
reserve_share_locked (struct zs_pool *pool)
{
  unsigned wanted_lengths = __builtin_popcount (pool->reserve_wanted);

  return wanted_lengths ? reserve_target_locked (pool) / wanted_lengths : 0;
}

/* Wakes the refill thread if it sleeps.  Pool lock held. */
static void
wake_refill_locked (struct zs_pool *pool)
{
  if (pool->refill_waiting) {
    pool->refill_waiting = false;
    pthread_cond_signal (&pool->reserve_wanted_cond);
  }
}

/* Wakes the refill thread once the reserve of PAGES-page zspages is down
 * to half its share, so that it refills in runs rather than waking for
 * every zspage taken (and not at all for a share too small to hold one).
 * Pool lock held.
 */
static void
wake_refill_if_low_locked (struct zs_pool *pool, unsigned pages)
{
  if (pool->reserve_limit_pages == 0)
    return;
  pool->reserve_wanted |= 1u << pages;
  uint64_t share = reserve_share_locked (pool);
  if (pages <= share
      && (uint64_t) pool->reserve_count[pages] * pages * 2 <= share)
    wake_refill_locked (pool);
}

/* Whether the refill thread will make a PAGES-page zspage for a taker
 * that waits: it runs, and the reserve may hold one.  (It never takes
 * zspages itself.)  Pool lock held.
 */
static bool
refill_serves_takers_locked (struct zs_pool *pool, unsigned pages)
{
  return pool->refill_running && !pool->refill_stop
    && pages <= pool->reserve_limit_pages;
}

/* Waits, at most RESERVE_WAIT_NS, for the refill thread to stock a
 * PAGES-page zspage, and pops it; 0 when none came in time or the thread
 * is stopping.  Pool lock held (dropped while waiting).
 */
static uint32_t
wait_for_refill_locked (struct zs_pool *pool, unsigned pages)
{
  struct timespec deadline = monotonic_timespec (monotonic_ns ()
                                                 + RESERVE_WAIT_NS);
  uint32_t id = 0;
  int r = 0;

  pool->reserve_waiters[pages]++;
  while (r != ETIMEDOUT && !pool->refill_stop
         && (id = reserve_pop_locked (pool, pages)) == 0) {
    wake_refill_locked (pool);
    r = pthread_cond_timedwait (&pool->reserve_stocked_cond, &pool->lock,
                                &deadline);
  }
  /* The refill thread makes one zspage per length at a time: the next
   * waiter's turn.
   */
  if (--pool->reserve_waiters[pages])
    wake_refill_locked (pool);
  return id;
}

uint32_t
zspage_take (struct zs_pool *pool, unsigned pages)
{
  pthread_mutex_lock (&pool->lock);
  uint32_t id = reserve_pop_locked (pool, pages);
  bool warm = id != 0;

  wake_refill_if_low_locked (pool, pages);
  if (!warm) {
    pool->reserve_misses++;
    if (refill_serves_takers_locked (pool, pages)) {
      id = wait_for_refill_locked (pool, pages);
      warm = id != 0;
      if (!warm && !pool->refill_stop) {
        pool->reserve_timeouts++;
        pthread_mutex_unlock (&pool->lock);
        errno = ETIMEDOUT;
        return 0;
      }
    }
    if (!warm)
      id = zspage_id_alloc_locked (pool);
  }
  pthread_mutex_unlock (&pool->lock);
  if (id == 0)
    errno = ENOMEM;             /* out of ids: the pool's capacity */
  else if (!warm)
    populate_pages (pool, id, pages);
  return id;
}

/* Once the pool has shrunk below what the reserve holds, pops a zspage
 * the reserve no longer needs (the longest), or returns 0.  Pool lock held.
 */
static uint32_t
reserve_pop_excess_locked (struct zs_pool *pool, unsigned *pages)
{
  if (pool->reserve_pages <= reserve_target_locked (pool))
    return 0;
  for (*pages = pool->max_pages_per_zspage; *pages > 0; --*pages)
    if (pool->reserve_count[*pages])
      return reserve_pop_locked (pool, *pages);
  return 0;
}

void
zspage_give_back (struct zs_pool *pool, uint32_t id, unsigned pages)
{
  unsigned excess_pages = 0;

  pthread_mutex_lock (&pool->lock);
  bool kept = reserve_push_locked (pool, id, pages);
  uint32_t excess = kept ? 0 : reserve_pop_excess_locked (pool, &excess_pages);
  pthread_mutex_unlock (&pool->lock);
  if (!kept)
    zspage_id_free (pool, id, pages);
  if (excess)
    zspage_id_free (pool, excess, excess_pages);
}

/* A length some taker waits for and the reserve holds none of, or 0.
 * Pool lock held.
 */
static unsigned
length_waited_for_locked (struct zs_pool *pool)
{
  for (unsigned pages = 1; pages <= pool->max_pages_per_zspage; pages++)
    if (pool->reserve_waiters[pages] && pool->reserve_count[pages] == 0)
      return pages;
  return 0;
}

/* The length the refill thread should add a zspage of next, or 0 when
 * every wanted length has its share.  Pool lock held.
 */
static unsigned
length_to_refill_locked (struct zs_pool *pool)
{
  uint64_t share = reserve_share_locked (pool);
  unsigned waited_for = length_waited_for_locked (pool);

  if (waited_for)
    return waited_for;
  for (unsigned pages = 1; pages <= pool->max_pages_per_zspage; pages++)
    if ((pool->reserve_wanted & 1u << pages)
        && (uint64_t) (pool->reserve_count[pages] + 1) * pages <= share
        && pool->reserve_pages + pages <= reserve_target_locked (pool))
      return pages;
  return 0;
}

/* Makes room for PAGES more pages in the reserve for a waiting taker:
 * past the target if need be, not past the limit, by giving back warm
 * zspages of other lengths (longest first).  Returns whether there is
 * room.  Pool lock held; dropped around each give-back.
 */
static bool
make_room_for_waiter_locked (struct zs_pool *pool, unsigned pages)
{
  while (pool->reserve_pages + pages > pool->reserve_limit_pages) {
    unsigned other = pool->max_pages_per_zspage;
    while (other > 0 && (other == pages || pool->reserve_count[other] == 0))
      other--;
    if (other == 0)
      return false;
    uint32_t id = reserve_pop_locked (pool, other);
    pthread_mutex_unlock (&pool->lock);
    zspage_id_free (pool, id, other);
    pthread_mutex_lock (&pool->lock);
  }
  return true;
}

/* Writes one byte in each page: populating maps the pages, but on a
 * virtual machine with shadow page tables the first user write still
 * traps; this thread takes that trap so that the allocating one does not.
 */
static void
touch_pages (struct zs_pool *pool, uint32_t id, unsigned pages)
{
  volatile unsigned char *base = zspage_base (pool, id);

  for (unsigned p = 0; p < pages; p++)
    base[(size_t) p * CSWAP_PAGE_SIZE] = 0;
}

static void *
refill_loop (void *opaque)
{
  struct zs_pool *pool = opaque;

  if (pool->refill_thread_init)
    pool->refill_thread_init ();
  pthread_mutex_lock (&pool->lock);
  while (!pool->refill_stop) {
    unsigned pages = length_to_refill_locked (pool);
    uint32_t id = pages ? zspage_id_alloc_locked (pool) : 0;

    if (id == 0) {
      pool->refill_waiting = true;
      pthread_cond_wait (&pool->reserve_wanted_cond, &pool->lock);
      continue;
    }
    pthread_mutex_unlock (&pool->lock);
    populate_pages (pool, id, pages);
    touch_pages (pool, id, pages);
    pthread_mutex_lock (&pool->lock);
    if (pool->reserve_waiters[pages]
        && make_room_for_waiter_locked (pool, pages))
      reserve_link_locked (pool, id, pages);
    else if (!reserve_push_locked (pool, id, pages)) {
      /* The reserve filled up from frees meanwhile. */
      pthread_mutex_unlock (&pool->lock);
      zspage_id_free (pool, id, pages);
      pthread_mutex_lock (&pool->lock);
    }
  }
  pthread_mutex_unlock (&pool->lock);
  return NULL;
}

int
zs_pool_start_refill (struct zs_pool *pool)
{
  int r;

  if (pool->refill_running || pool->reserve_limit_pages == 0)
    return 0;
  pool->refill_stop = false;
  r = pthread_create (&pool->refill_thread, NULL, refill_loop, pool);
  if (r) {
    errno = r;
    return -1;
  }
  pthread_mutex_lock (&pool->lock);
  pool->refill_running = true;
  pthread_mutex_unlock (&pool->lock);
  return 0;
}

void
zs_pool_stop_refill (struct zs_pool *pool)
{
  if (!pool->refill_running)
    return;
  pthread_mutex_lock (&pool->lock);
  pool->refill_stop = true;
  pool->refill_waiting = false;
  pthread_cond_signal (&pool->reserve_wanted_cond);
  pthread_cond_broadcast (&pool->reserve_stocked_cond);   /* takers fault in */
  pthread_mutex_unlock (&pool->lock);
  pthread_join (pool->refill_thread, NULL);
  pthread_mutex_lock (&pool->lock);
  pool->refill_running = false;
  pthread_mutex_unlock (&pool->lock);
}
