/* cswap: the store's areas — equal parts of the device, each with its
 * own counters and its own limit on the pool bytes it holds (store.h),
 * its slot table's chunks counted in.
 *
 * The nbdkit plugin serves each export from an area, so that exports
 * share one pool and one backing file, and a quota keeps one client
 * from taking another's memory.  The counters are slot-state.c's (each
 * slot change counts into its area's too) and the data path's (requests
 * and refusals); the limit is checked here, under the slot's lock, in
 * place of what the slot held.  With a backing file, a write that finds
 * its area at its limit writes back the area's own cold pages first, so
 * that a quota bounds an export's memory, not what it can store; without
 * one, or once nothing more of the area can go, the write is refused.
 *
 * Locking: none of its own.  Limits and counters are relaxed atomics:
 * writers in one area race between the check and the count, so each can
 * take the area over its limit by one page, never more.  The areas'
 * CLOCK hands are the writeback mutex's (writeback_make_area_room).
 */
#include <errno.h>
#include <stdlib.h>

#include "page.h"
#include "store-internal.h"
#include "writeback.h"

int
store_areas_init (struct store *store, unsigned areas)
{
  store->areas = areas ? areas : 1;
  if (areas == 0)
    return 0;
  store->slots.area_count = calloc (areas, sizeof *store->slots.area_count);
  store->area_limit = calloc (areas, sizeof *store->area_limit);
  store->area_hand = calloc (areas, sizeof *store->area_hand);
  if (store->slots.area_count == NULL || store->area_limit == NULL
      || store->area_hand == NULL)
    return -1;
  store->slots.area_slots = store->slots.table.slots / areas;
  return 0;
}

void
store_areas_destroy (struct store *store)
{
  free (store->slots.area_count);
  free (store->area_limit);
  free (store->area_hand);
}

unsigned
store_areas (const struct store *store)
{
  return store->areas;
}

uint64_t
store_area_size (const struct store *store)
{
  return store->size_bytes / store->areas;
}

int
store_set_area_limit (struct store *store, unsigned area, uint64_t bytes)
{
  if (area >= store->areas || store->area_limit == NULL)
    return -EINVAL;
  atomic_store_explicit (&store->area_limit[area], bytes,
                         memory_order_relaxed);
  return 0;
}

/* The pool bytes what SLOT holds counts against its area's limit (its
 * chunk, held by more than it, stays counted).
 */
static uint32_t
held_bytes (struct store *store, uint64_t slot)
{
  struct slot_contents c;

  slot_get (&store->slots, slot, &c);
  return c.type == SLOT_STORED ? c.length : 0;
}

bool
store_area_has_room (struct store *store, uint64_t slot, uint32_t length)
{
  struct store_counters *area = slot_area_counters (&store->slots, slot);

  if (area == NULL)
    return true;
  uint64_t limit = atomic_load_explicit (&store->area_limit[slot / store->slots.area_slots],
                                         memory_order_relaxed);
  if (limit == 0)
    return true;
  uint64_t held = counter_get (&area->compressed_bytes)
    + counter_get (&area->slot_chunk_bytes);
  return held - held_bytes (store, slot) + length <= limit;
}

bool
store_area_limited (struct store *store, uint64_t slot)
{
  return store->area_limit
    && atomic_load_explicit (&store->area_limit[slot / store->slots.area_slots],
                             memory_order_relaxed) != 0;
}

struct area_room {
  struct store_counters *counters;
  uint64_t limit;
  uint32_t length;
};

/* Whether the area has room for a page of LENGTH more (what the slot
 * holds not counted off: it may be written back meanwhile).  A limit of
 * 0 is none.
 */
static bool
area_fits (void *arg)
{
  const struct area_room *a = arg;

  return a->limit == 0
    || counter_get (&a->counters->compressed_bytes)
       + counter_get (&a->counters->slot_chunk_bytes) + a->length
       <= a->limit;
}

int
store_area_make_room (struct store *store, uint64_t slot, uint32_t length)
{
  if (store->writeback == NULL || !store_area_limited (store, slot))
    return -EDQUOT;

  uint64_t area_slots = store->slots.area_slots;
  unsigned area = slot / area_slots;
  struct area_room room = {
    .counters = slot_area_counters (&store->slots, slot),
    .limit = atomic_load_explicit (&store->area_limit[area],
                                   memory_order_relaxed),
    .length = length,
  };

  return writeback_make_area_room (store->writeback, area * area_slots,
                                   (area + 1) * area_slots,
                                   &store->area_hand[area], area_fits, &room);
}

int
store_area_stats (struct store *store, unsigned area,
                  struct store_area_stats *stats)
{
  if (area >= store->areas)
    return -EINVAL;
  /* A store without areas: its own counters, and no area limit. */
  struct store_counters *c = store->area_limit == NULL ? &store->count
    : &store->slots.area_count[area];
  *stats = (struct store_area_stats) {
    .limit_bytes = store->area_limit == NULL ? 0
      : atomic_load_explicit (&store->area_limit[area], memory_order_relaxed),
    .pages_stored = counter_get (&c->same_filled_pages)
      + counter_get (&c->huge_pages) + counter_get (&c->compressed_pages)
      + counter_get (&c->tiered_pages),
    .same_filled_pages = counter_get (&c->same_filled_pages),
    .tiered_pages = counter_get (&c->tiered_pages),
    .compressed_bytes = counter_get (&c->compressed_bytes),
    .slot_chunk_bytes = counter_get (&c->slot_chunk_bytes),
    .reads = counter_get (&c->reads),
    .writes = counter_get (&c->writes),
    .trims = counter_get (&c->trims),
    .failed_writes = counter_get (&c->failed_writes),
    .area_limit_hits = counter_get (&c->pool_limit_hits),
  };
  return 0;
}
