/* cswap allocator: statistics.
 *
 * The counters live in each class, under its lock, so that zs_malloc and
 * zs_free pay for no shared cache line; the statistics sum them class by
 * class (each class consistent, the sum a moment's snapshot).  The
 * invariant check, which recounts them, is check.c's.
 *
 * One class lock at a time, then the pool lock.  Lock order:
 * common/lock-order.h.
 */
#include <string.h>

#include "cleanup.h"
#include "zs-internal.h"

static uint64_t
metadata_bytes (struct zs_pool *pool)
{
  uint32_t high_water_id = atomic_load_explicit (&pool->high_water_id,
                                                 memory_order_relaxed);
  uint64_t table_bytes = (uint64_t) (high_water_id + 1) * sizeof (struct zspage);

  return sizeof *pool
    + bytes_to_pages_round_up (table_bytes) * CSWAP_PAGE_SIZE;
}

void
zs_pool_stats (struct zs_pool *pool, struct zs_pool_stats *stats)
{
  memset (stats, 0, sizeof *stats);
  for (unsigned i = 0; i < pool->class_count; i++) {
    struct size_class *class = &pool->classes[i];
    ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&class->lock);

    stats->zspages += class->zspages;
    stats->objects_allocated += class->zspages * class->objs_per_zspage;
    stats->objects_used += class->objects_used;
    stats->object_bytes += class->objects_used * class->size_bytes;
    stats->pages_used += class->zspages * class->pages_per_zspage;
  }
  stats->metadata_bytes = metadata_bytes (pool);
  pthread_mutex_lock (&pool->lock);
  stats->reserve_pages = pool->reserve_pages;
  stats->reserve_misses = pool->reserve_misses;
  stats->reserve_timeouts = pool->reserve_timeouts;
  pthread_mutex_unlock (&pool->lock);
  stats->pages_compacted = atomic_load_explicit (&pool->pages_compacted,
                                                 memory_order_relaxed);
  stats->objects_moved = atomic_load_explicit (&pool->objects_moved,
                                               memory_order_relaxed);
  stats->pages_faulted_in = atomic_load_explicit (&pool->pages_faulted_in,
                                                  memory_order_relaxed);
  stats->pages_given_back = atomic_load_explicit (&pool->pages_given_back,
                                                  memory_order_relaxed);
}

uint64_t
zs_pool_pages_used (struct zs_pool *pool)
{
  return atomic_load_explicit (&pool->pages_used, memory_order_relaxed);
}

void
zs_class_stats (struct zs_pool *pool, unsigned class_index,
                struct zs_class_stats *stats)
{
  struct size_class *class;

  memset (stats, 0, sizeof *stats);
  if (class_index >= pool->class_count)
    return;
  class = &pool->classes[class_index];
  stats->size = class->size_bytes;
  stats->pages_per_zspage = class->pages_per_zspage;
  stats->objects_per_zspage = class->objs_per_zspage;
  stats->huge = class->huge;

  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&class->lock);
  memcpy (stats->zspages, class->zspages_in_group, sizeof stats->zspages);
  stats->objects_allocated = class->zspages * class->objs_per_zspage;
  stats->objects_used = class->objects_used;
  stats->pages_used = class->zspages * class->pages_per_zspage;
  stats->pages_freeable = class_pages_freeable (class);
}
