/* cswap: the pool limit and its accept threshold — in one place.
 *
 * The limit itself is hard and the allocator's (zs_pool_set_page_limit:
 * a new zspage is charged with one compare-and-swap that fails past it;
 * doc/design.md, "The pool limit is hard").  What the store decides from
 * it is here: whether a write may have room, when the writer starts
 * (at the start watermark, START_PERCENT, before the limit: a write at
 * the limit waits for a batch, and that should be the exception, not the
 * way the pool is kept below it) and stops (below accept-threshold
 * percent of it), when raw pages stop being deferred, and whether a page
 * read from disk comes back into memory.  A limit of 0 is no limit:
 * every answer is "room".
 * Any other limit is at least a page (STORE_MIN_POOL_LIMIT_BYTES): the
 * allocator counts whole pages, and 0 of them would be no limit to it
 * while every answer here said "full".
 *
 * The limit counts the slot table's chunks too (pool_limit_charge): they
 * are made as the device is written, 4.5 KiB per 2 MiB, and a pool limit
 * that left them out bounded nothing when every page written was alone
 * in its 2 MiB (issue #53).  The allocator, whose limit is the hard one,
 * gets what the charge leaves: (limit - charged) / 4096 pages, and one
 * page at least (its 0 is no limit).  A chunk is charged when made and
 * the allocator's limit lowered after: a zspage made by a writer that
 * read the old limit just before can take the two together past the
 * limit by that zspage.
 *
 * Threads: relaxed atomics, no lock; each answer is a snapshot.
 */
#include <errno.h>

#include "page.h"
#include "pool-limit.h"
#include "store.h"

#define DEFAULT_ACCEPT_PERCENT 90
/* Between the default threshold and the limit: the writer, started
 * here, writes the pool down to 90% in batches while writes still find
 * room.  5% of zswap's default cap on a 1 GiB machine is 10 MiB, many
 * batches' worth.
 */
#define START_PERCENT 95

_Static_assert (STORE_MIN_POOL_LIMIT_BYTES == CSWAP_PAGE_SIZE,
                "the allocator's limit is in pages: the smallest is one");

bool
pool_limit_valid (uint64_t bytes)
{
  return bytes == 0 || bytes >= STORE_MIN_POOL_LIMIT_BYTES;
}

/* The allocator's page limit for a limit of BYTES with CHARGED bytes
 * charged.
 */
static uint64_t
allocator_pages (uint64_t bytes, uint64_t charged)
{
  if (bytes == 0)
    return 0;
  if (charged + CSWAP_PAGE_SIZE > bytes)
    return 1;
  return (bytes - charged) / CSWAP_PAGE_SIZE;
}

/* Gives the allocator the page limit of the limit and charge now.  Both
 * may change meanwhile in other threads: each caller checks that what it
 * set from is still what they are, so the last one to finish leaves the
 * right limit.
 */
static void
sync_allocator (struct pool_limit *limit)
{
  uint64_t bytes, charged;

  do {
    bytes = pool_limit_bytes (limit);
    charged = atomic_load_explicit (&limit->charged_bytes,
                                    memory_order_relaxed);
    zs_pool_set_page_limit (limit->pool, allocator_pages (bytes, charged));
  } while (bytes != pool_limit_bytes (limit)
           || charged != atomic_load_explicit (&limit->charged_bytes,
                                               memory_order_relaxed));
}

void
pool_limit_init (struct pool_limit *limit, struct zs_pool *pool,
                 uint64_t bytes)
{
  limit->pool = pool;
  atomic_init (&limit->accept_percent, DEFAULT_ACCEPT_PERCENT);
  atomic_init (&limit->limit_bytes, 0);
  atomic_init (&limit->charged_bytes, 0);
  pool_limit_set (limit, bytes);
}

int
pool_limit_set (struct pool_limit *limit, uint64_t bytes)
{
  if (!pool_limit_valid (bytes))
    return -EINVAL;
  atomic_store_explicit (&limit->limit_bytes, bytes, memory_order_relaxed);
  sync_allocator (limit);
  return 0;
}

void
pool_limit_charge (struct pool_limit *limit, int64_t bytes)
{
  atomic_fetch_add_explicit (&limit->charged_bytes, (uint64_t) bytes,
                             memory_order_relaxed);
  sync_allocator (limit);
}

uint64_t
pool_limit_bytes (struct pool_limit *limit)
{
  return atomic_load_explicit (&limit->limit_bytes, memory_order_relaxed);
}

uint64_t
pool_limit_pool_bytes (struct pool_limit *limit)
{
  return zs_pool_pages_used (limit->pool) * CSWAP_PAGE_SIZE;
}

uint64_t
pool_limit_used_bytes (struct pool_limit *limit)
{
  return pool_limit_pool_bytes (limit)
    + atomic_load_explicit (&limit->charged_bytes, memory_order_relaxed);
}

static uint64_t
threshold_bytes (struct pool_limit *limit)
{
  return pool_limit_bytes (limit) / 100
    * atomic_load_explicit (&limit->accept_percent, memory_order_relaxed);
}

bool
pool_limit_has_room_bytes (struct pool_limit *limit, uint64_t bytes)
{
  uint64_t limit_bytes = pool_limit_bytes (limit);

  return limit_bytes == 0
    || pool_limit_used_bytes (limit) + bytes <= limit_bytes;
}

bool
pool_limit_has_room (struct pool_limit *limit, unsigned pages)
{
  return pool_limit_has_room_bytes (limit,
                                    (uint64_t) pages * CSWAP_PAGE_SIZE);
}

bool
pool_limit_reached (struct pool_limit *limit)
{
  return !pool_limit_has_room (limit, 1);
}

bool
pool_limit_writeback_due (struct pool_limit *limit)
{
  uint64_t limit_bytes = pool_limit_bytes (limit);
  unsigned percent = atomic_load_explicit (&limit->accept_percent,
                                           memory_order_relaxed);

  if (percent < START_PERCENT)
    percent = START_PERCENT;
  return limit_bytes != 0
    && pool_limit_used_bytes (limit) >= limit_bytes / 100 * percent;
}

bool
pool_limit_above_threshold (struct pool_limit *limit)
{
  return pool_limit_bytes (limit) != 0
    && pool_limit_used_bytes (limit) >= threshold_bytes (limit);
}

bool
pool_limit_may_promote (struct pool_limit *limit, uint32_t length)
{
  return pool_limit_bytes (limit) == 0
    || pool_limit_used_bytes (limit) + length <= threshold_bytes (limit);
}

int
pool_limit_threshold_init (struct pool_limit *limit, unsigned percent)
{
  if (percent == 0)
    percent = DEFAULT_ACCEPT_PERCENT;
  if (percent > 100)
    return -EINVAL;
  atomic_store (&limit->accept_percent, percent);
  return 0;
}

int
pool_limit_set_threshold (struct pool_limit *limit, unsigned percent)
{
  if (percent < 1 || percent > 100)
    return -EINVAL;
  atomic_store (&limit->accept_percent, percent);
  return 0;
}

unsigned
pool_limit_threshold (struct pool_limit *limit)
{
  return atomic_load (&limit->accept_percent);
}
