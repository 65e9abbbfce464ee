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
#include "store-internal.h"

#define DEFAULT_ACCEPT_PERCENT 90

_Static_assert (STORE_MIN_POOL_LIMIT_BYTES == CSWAP_PAGE_SIZE,
                "the allocator's limit is in pages: the smallest is one");

bool
pool_limit_valid (uint64_t bytes)
{
  return bytes == 0 || bytes >= STORE_MIN_POOL_LIMIT_BYTES;
}

int
store_set_pool_limit (struct store *store, uint64_t bytes)
{
  if (!pool_limit_valid (bytes))
    return -EINVAL;
  atomic_store_explicit (&store->pool_limit_bytes, bytes, memory_order_relaxed);
  zs_pool_set_page_limit (store->pool, bytes / CSWAP_PAGE_SIZE);
  return 0;
}

uint64_t
pool_limit_bytes (struct store *store)
{
  return atomic_load_explicit (&store->pool_limit_bytes, memory_order_relaxed);
}

uint64_t
pool_used_bytes (struct store *store)
{
  return zs_pool_pages_used (store->pool) * CSWAP_PAGE_SIZE;
}

static uint64_t
pool_threshold_bytes (struct store *store)
{
  return pool_limit_bytes (store) / 100
    * atomic_load_explicit (&store->accept_percent, memory_order_relaxed);
}

bool
pool_has_room (struct store *store, unsigned pages)
{
  uint64_t limit = pool_limit_bytes (store);

  return limit == 0
    || pool_used_bytes (store) + (uint64_t) pages * CSWAP_PAGE_SIZE <= limit;
}

bool
pool_at_limit (struct store *store)
{
  return !pool_has_room (store, 1);
}

bool
pool_above_threshold (struct store *store)
{
  return pool_limit_bytes (store) != 0
    && pool_used_bytes (store) >= pool_threshold_bytes (store);
}

bool
pool_may_promote (struct store *store, uint32_t length)
{
  return pool_limit_bytes (store) == 0
    || pool_used_bytes (store) + length <= pool_threshold_bytes (store);
}

int
pool_accept_threshold_init (struct store *store, unsigned percent)
{
  if (percent == 0)
    percent = DEFAULT_ACCEPT_PERCENT;
  if (percent > 100)
    return -EINVAL;
  atomic_init (&store->accept_percent, percent);
  return 0;
}

int
store_set_accept_threshold (struct store *store, unsigned percent)
{
  if (store->writeback == NULL || percent < 1 || percent > 100)
    return -EINVAL;
  atomic_store (&store->accept_percent, percent);
  return 0;
}

unsigned
store_get_accept_threshold (struct store *store)
{
  return store->writeback ? atomic_load (&store->accept_percent) : 0;
}
