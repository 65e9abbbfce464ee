/* cswap allocator: the invariant check, zs_pool_check (zsmalloc.h).
 *
 * It takes every class lock at once, in index order, then the pool lock,
 * and recounts everything from the descriptors and the object headers:
 * the fullness lists and their counters, the free id list, the reserve's
 * lists (reserve.c) and the pages in use (stats.c).  Slow, for tests.
 * Only reads: it calls the files it checks, and none calls it.
 *
 * Lock order: common/lock-order.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cleanup.h"
#include "zs-internal.h"

/* What zs_pool_check recounts for one class. */
struct class_tally {
  uint64_t zspages_in_group[ZS_FULLNESS_GROUPS];
  uint64_t zspages_isolated;
  uint64_t objects_used;
};

#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (!(cond)) {                                              \
      fprintf (stderr, "zs_pool_check: " __VA_ARGS__);          \
      fputc ('\n', stderr);                                     \
      failed = true;                                            \
    }                                                           \
  } while (0)

/* Checks the slots of a live zspage against its descriptor. */
static bool
check_zspage_slots (struct zs_pool *pool, const struct size_class *class,
                    uint32_t id)
{
  const struct zspage *zspage = zspage_desc (pool, id);
  unsigned objs = class->objs_per_zspage;
  unsigned free_count = 0, allocated_count = 0;
  bool failed = false;

  unsigned fresh = zspage->fresh_index;

  if (class->huge) {
    CHECK (zspage->inuse == 1 && zspage->free_head == ZS_OBJ_NONE
           && fresh == 1, "huge zspage %u: inuse %u, free head %u, fresh "
           "%u", id, zspage->inuse, zspage->free_head, fresh);
    return !failed;
  }
  CHECK (fresh <= objs, "zspage %u: fresh index %u of %u", id, fresh, objs);
  for (unsigned i = zspage->free_head; i != ZS_OBJ_NONE;) {
    uint32_t header;

    if (i >= fresh || free_count >= objs) {
      CHECK (false, "zspage %u: free list broken at %u", id, i);
      return false;
    }
    header = *obj_header (pool, class, id, i);
    CHECK (!obj_header_is_allocated (header),
           "zspage %u: allocated object %u on the free list", id, i);
    free_count++;
    i = obj_header_value (header);
  }
  for (unsigned i = 0; i < fresh && i < objs; i++)
    allocated_count += obj_header_is_allocated (*obj_header (pool, class, id, i));
  CHECK (free_count + (objs - fresh) == objs - zspage->inuse,
         "zspage %u: %u free objects listed and %u fresh, inuse %u of %u",
         id, free_count, objs - fresh, zspage->inuse, objs);
  CHECK (allocated_count == zspage->inuse,
         "zspage %u: %u allocated headers, inuse %u", id, allocated_count,
         zspage->inuse);
  return !failed;
}

/* Walks the fullness lists of CLASS against the recount in TALLY. */
static bool
check_class_lists (struct zs_pool *pool, const struct size_class *class,
                   const struct class_tally *tally, uint32_t high_water_id)
{
  bool failed = false;
  uint64_t zspages = tally->zspages_isolated;

  for (unsigned group = 0; group < ZS_FULLNESS_GROUPS; group++) {
    uint64_t listed = 0;
    uint32_t prev = 0;

    zspages += tally->zspages_in_group[group];
    CHECK (class->zspages_in_group[group] == tally->zspages_in_group[group],
           "class %u group %u: counter %" PRIu64 ", found %" PRIu64,
           class->index, group, class->zspages_in_group[group],
           tally->zspages_in_group[group]);
    if (!fullness_group_is_linked (group)) {
      CHECK (class->list_head[group] == 0,
             "class %u: group %u has a list", class->index, group);
      continue;
    }
    for (uint32_t id = class->list_head[group]; id; id = zspage_desc (pool, id)->link.next_id) {
      const struct zspage *zspage = zspage_desc (pool, id);

      if (id > high_water_id || listed > high_water_id) {
        CHECK (false, "class %u group %u: list broken at %u", class->index,
               group, id);
        break;
      }
      CHECK (zspage_is_live (zspage) && !zspage_is_isolated (zspage)
             && zspage->class_index == class->index
             && zspage_group (zspage) == group && zspage->link.prev_id == prev,
             "class %u group %u: zspage %u does not belong", class->index,
             group, id);
      prev = id;
      listed++;
    }
    CHECK (listed == tally->zspages_in_group[group],
           "class %u group %u: %" PRIu64 " listed, %" PRIu64 " found",
           class->index, group, listed, tally->zspages_in_group[group]);
  }
  CHECK (class->zspages == zspages, "class %u: counter %" PRIu64
         " zspages, found %" PRIu64, class->index, class->zspages, zspages);
  CHECK (class->objects_used + class->objects_being_moved
         == tally->objects_used, "class %u: counter %" PRIu64 " + %u moving"
         " objects, found %" PRIu64, class->index, class->objects_used,
         class->objects_being_moved, tally->objects_used);
  return !failed;
}

/* The reserve's lists agree with its counters.  Pool lock held. */
static void
check_reserve (struct zs_pool *pool, bool *failed)
{
  uint64_t pages_found = 0;

  for (unsigned pages = 1; pages <= ZS_MAX_PAGES_PER_ZSPAGE; pages++) {
    uint32_t listed = 0;
    for (uint32_t id = pool->reserve_head[pages]; id;
         id = zspage_desc (pool, id)->link.next_id) {
      if (zspage_is_live (zspage_desc (pool, id))
          || listed > pool->reserve_count[pages]) {
        fprintf (stderr, "zs_pool_check: reserve list %u broken at %u\n",
                 pages, id);
        *failed = true;
        return;
      }
      listed++;
    }
    if (listed != pool->reserve_count[pages]) {
      fprintf (stderr, "zs_pool_check: reserve of %u-page zspages: %u "
               "listed, counter %u\n", pages, listed,
               pool->reserve_count[pages]);
      *failed = true;
    }
    pages_found += (uint64_t) listed * pages;
  }
  if (pages_found != pool->reserve_pages
      || pool->reserve_pages > pool->reserve_limit_pages) {
    fprintf (stderr, "zs_pool_check: reserve holds %" PRIu64 " pages, "
             "counter %" PRIu64 ", limit %" PRIu64 "\n", pages_found,
             pool->reserve_pages, pool->reserve_limit_pages);
    *failed = true;
  }
}

int
zs_pool_check (struct zs_pool *pool)
{
  CLEANUP_FREE struct class_tally *tallies
    = calloc (pool->class_count, sizeof *tallies);
  uint32_t high_water_id, not_live_ids = 0, listed_free_ids = 0;
  uint64_t pages_used = 0;
  bool failed = false;

  if (tallies == NULL) {
    perror ("zs_pool_check: calloc");
    return -1;
  }
  for (unsigned i = 0; i < pool->class_count; i++)
    pthread_mutex_lock (&pool->classes[i].lock);
  pthread_mutex_lock (&pool->lock);

  high_water_id = atomic_load_explicit (&pool->high_water_id,
                                        memory_order_relaxed);
  for (uint32_t id = 1; id <= high_water_id; id++) {
    const struct zspage *zspage = zspage_desc (pool, id);
    const struct size_class *class;
    struct class_tally *tally;
    unsigned group;

    if (!zspage_is_live (zspage)) {
      not_live_ids++;
      continue;
    }
    if (zspage->class_index >= pool->class_count) {
      CHECK (false, "zspage %u: bad class %u", id, zspage->class_index);
      continue;
    }
    class = &pool->classes[zspage->class_index];
    tally = &tallies[class->index];
    group = fullness_group (zspage->inuse, class->objs_per_zspage);
    if (zspage->inuse > class->objs_per_zspage
        || !check_zspage_slots (pool, class, id)) {
      CHECK (false, "zspage %u: bad contents", id);
      continue;
    }
    tally->objects_used += zspage->inuse;
    if (zspage_is_isolated (zspage))
      tally->zspages_isolated++;
    else {
      CHECK (zspage_group (zspage) == group, "zspage %u: in group %u, "
             "inuse %u of %u says %u", id, zspage_group (zspage),
             zspage->inuse, class->objs_per_zspage, group);
      tally->zspages_in_group[zspage_group (zspage)]++;
    }
  }
  for (uint32_t id = pool->free_id_head; id;
       id = zspage_desc (pool, id)->link.next_id) {
    if (id > high_water_id || listed_free_ids > high_water_id
        || zspage_is_live (zspage_desc (pool, id))) {
      CHECK (false, "free id list broken at %u", id);
      break;
    }
    listed_free_ids++;
  }
  /* Ids in flight (zs-internal.h) and in the reserve are neither live
   * nor listed free.
   */
  CHECK (listed_free_ids + pool->ids_in_use == high_water_id
         && high_water_id - not_live_ids <= pool->ids_in_use,
         "%u free ids listed, %u in use, %u live, high water %u",
         listed_free_ids, pool->ids_in_use, high_water_id - not_live_ids,
         high_water_id);
  check_reserve (pool, &failed);
  for (unsigned i = 0; i < pool->class_count; i++) {
    if (!check_class_lists (pool, &pool->classes[i], &tallies[i],
                            high_water_id))
      failed = true;
    pages_used += (pool->classes[i].zspages
                   + pool->classes[i].zspages_being_taken)
      * pool->classes[i].pages_per_zspage;
  }
  /* Updated under the class locks, so exact while they are all held. */
  CHECK (pages_used == zs_pool_pages_used (pool), "classes hold %" PRIu64
         " pages, zs_pool_pages_used says %" PRIu64, pages_used,
         zs_pool_pages_used (pool));

  pthread_mutex_unlock (&pool->lock);
  for (unsigned i = pool->class_count; i-- > 0;)
    pthread_mutex_unlock (&pool->classes[i].lock);
  return failed ? -1 : 0;
}
