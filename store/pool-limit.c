/* cswap: the pool limit and its accept threshold — in one place.
 *
 * The limit itself is hard and the allocator's (zs_pool_set_page_limit:
 * a new zspage is charged with one compare-and-swap that fails past it;
 * doc/design.md, "The pool limit is hard").  What the store decides from
 * it is here: whether a write may have room, when the writer starts
 * (at the limit) and stops (below accept-threshold percent of it), when
 * raw pages stop being deferred, and whether a page read from disk comes
 * back into memory.  A limit of 0 is no limit: every answer is "room".
 * Any other limit is at least a page (STORE_MIN_POOL_LIMIT_BYTES): the
 * allocator counts whole pages, and 0 of them would be no limit to it
 * while every answer here said "full".
 *
 * Threads: relaxed atomics, no lock; each answer is a snapshot.
 */
#include <errno.h>

#include "page.h"
#include "pool-limit.h"
#include "store.h"

#define DEFAULT_ACCEPT_PERCENT 90

_Static_assert (STORE_MIN_POOL_LIMIT_BYTES == CSWAP_PAGE_SIZE,
                "the allocator's limit is in pages: the smallest is one");

bool
pool_limit_valid (uint64_t bytes)
{
  return bytes == 0 || bytes >= STORE_MIN_POOL_LIMIT_BYTES;
}

void
pool_limit_init (struct pool_limit *limit, struct zs_pool *pool,
                 uint64_t bytes)
{
  limit->pool = pool;
  atomic_init (&limit->accept_percent, DEFAULT_ACCEPT_PERCENT);
  atomic_init (&limit->limit_bytes, 0);
  pool_limit_set (limit, bytes);
}

int
pool_limit_set (struct pool_limit *limit, uint64_t bytes)
{
  if (!pool_limit_valid (bytes))
    return -EINVAL;
  atomic_store_explicit (&limit->limit_bytes, bytes, memory_order_relaxed);
  zs_pool_set_page_limit (limit->pool, bytes / CSWAP_PAGE_SIZE);
  return 0;
}

uint64_t
pool_limit_bytes (struct pool_limit *limit)
{
  return atomic_load_explicit (&limit->limit_bytes, memory_order_relaxed);
}

uint64_t
pool_limit_used_bytes (struct pool_limit *limit)
{
  return zs_pool_pages_used (limit->pool) * CSWAP_PAGE_SIZE;
}

static uint64_t
threshold_bytes (struct pool_limit *limit)
{
  return pool_limit_bytes (limit) / 100
    * atomic_load_explicit (&limit->accept_percent, memory_order_relaxed);
}

bool
pool_limit_has_room (struct pool_limit *limit, unsigned pages)
{
  uint64_t bytes = pool_limit_bytes (limit);

  return bytes == 0
    || pool_limit_used_bytes (limit) + (uint64_t) pages * CSWAP_PAGE_SIZE
       <= bytes;
}

bool
pool_limit_reached (struct pool_limit *limit)
{
  return !pool_limit_has_room (limit, 1);
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
