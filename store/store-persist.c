/* cswap: a store that outlives its process — its segment made or
 * adopted, and a killed daemon's pages taken back (store.h,
 * store_config.persistence; the segment: store-segment.h).
 *
 * Adoption rebuilds everything the dead process kept in its own memory
 * from what it left in the segment, and trusts only the slots: each
 * slot's word names its page (slot-state.c: a word and flags that agree,
 * written in an order a kill cannot tear where the kernel was told the
 * page is written), the allocator takes back exactly the objects the
 * slots name (zs_pool_adopt_object) and frees every other (objects
 * allocated and never published, copies compaction had not freed yet,
 * its reserve), and the counters are counted again.  What the dead
 * process had queued is queued again: pages waiting for the compressor.
 * A writeback batch in flight is dropped (its pages are still in the
 * pool), and the backing file is not adopted: a store with one does not
 * persist.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "store-internal.h"

/* The segment's geometry for CONFIG, whose pool POOL_CONFIG describes. */
static struct store_segment
segment_for (const struct store_config *config,
             const struct zs_pool_config *pool_config, uint64_t slots)
{
  return (struct store_segment) {
    .shmid = -1,
    .key = config->segment_key,
    .size_bytes = config->size_bytes,
    .max_pages_per_zspage = pool_config->max_pages_per_zspage,
    .reserve_bytes = pool_config->reserve_bytes,
    .chunks_bytes = slot_table_homes_bytes (slots),
    .area_bytes = zs_pool_area_bytes (pool_config),
  };
}

int
store_segment_open (struct store *store, const struct store_config *config,
                    struct zs_pool_config *pool_config, char *error,
                    size_t error_bytes)
{
  struct store_segment *seg = malloc (sizeof *seg);
  const char *why;

  if (seg == NULL) {
    snprintf (error, error_bytes, "out of memory");
    return -1;
  }
  *seg = segment_for (config, pool_config, store->slots.table.slots);
  store->adoption.why = NULL;
  if (config->persistence == STORE_SEGMENT_ADOPT) {
    if (store_segment_adopt (seg, &why) == 0)
      store->adoption.adopted = true;
    else
      store->adoption.why = why;
  }
  if (!store->adoption.adopted && store_segment_make (seg, &why) == -1) {
    int saved_errno = errno;
    snprintf (error, error_bytes, "the store's shared-memory segment: %s: %m",
              why);
    free (seg);
    errno = saved_errno;
    return -1;
  }
  store->segment = seg;
  slot_table_set_homes (&store->slots.table, store_segment_chunks (seg));
  pool_config->shared_area = store_segment_area (seg);
  return 0;
}

/* Keeps SLOT in the growing list *SLOTS of *COUNT (capacity *CAP). */
static bool
list_add (uint64_t **slots, uint64_t *count, uint64_t *cap, uint64_t slot)
{
  if (*count == *cap) {
    uint64_t new_cap = *cap ? 2 * *cap : 64;
    uint64_t *bigger = realloc (*slots, new_cap * sizeof **slots);

    if (bigger == NULL)
      return false;
    *slots = bigger;
    *cap = new_cap;
  }
  (*slots)[(*count)++] = slot;
  return true;
}

struct adopting {
  struct store *store;
  uint64_t lost_cap, deferred_cap;
  bool out_of_memory;
};

static bool
adopt_object (void *arg, zs_handle handle, uint32_t length, uint64_t slot)
{
  struct adopting *a = arg;

  return zs_pool_adopt_object (a->store->slots.pool, handle, length,
                               (uint32_t) slot) == 0;
}

static void
note_lost (void *arg, uint64_t slot)
{
  struct adopting *a = arg;
  struct store *store = a->store;

  if (!list_add (&store->lost_slots, &store->adoption.lost, &a->lost_cap,
                 slot))
    a->out_of_memory = true;
}

static void
note_deferred (void *arg, uint64_t slot)
{
  struct adopting *a = arg;
  struct store *store = a->store;

  if (!list_add (&store->deferred_slots, &store->deferred_count,
                 &a->deferred_cap, slot))
    a->out_of_memory = true;
}

int
store_adopt_pages (struct store *store, char *error, size_t error_bytes)
{
  static const struct slot_adopt_ops ops = {
    .object = adopt_object, .lost = note_lost, .deferred = note_deferred,
  };
  struct adopting a = { .store = store };
  struct slot_adoption result;

  if (!store->adoption.adopted)
    return 0;
  if (slot_state_adopt (&store->slots, &ops, &a, &result) == -1
      || a.out_of_memory) {
    snprintf (error, error_bytes, "adopting the killed daemon's store: "
              "out of memory");
    errno = ENOMEM;
    return -1;
  }
  zs_pool_adopt_end (store->slots.pool);
  store->adoption.pages = result.pages;
  store->adoption.lost_slots = store->lost_slots;
  return 0;
}

void
store_requeue_deferred (struct store *store)
{
  for (uint64_t i = 0; i < store->deferred_count; i++) {
    uint64_t slot = store->deferred_slots[i];

    if (deferred_reserve (store->deferred))
      deferred_push (store->deferred, slot);
    else {
      /* No place (cannot be: the dead store's queue was as long): the
       * page stays as it is, raw or lz4, which reads as well.
       */
      slot_lock (&store->slots, slot);
      slot_take_deferred (&store->slots, slot);
      slot_unlock (&store->slots, slot);
    }
  }
  free (store->deferred_slots);
  store->deferred_slots = NULL;
  store->deferred_count = 0;
}

void
store_segment_release (struct store *store)
{
  if (store->segment == NULL)
    return;
  store_segment_close (store->segment, !store->keep_segment);
  free (store->segment);
  store->segment = NULL;
  free (store->lost_slots);
  store->lost_slots = NULL;
  free (store->deferred_slots);         /* never queued: no compressor ran */
  store->deferred_slots = NULL;
}

const struct store_adoption *
store_adoption (struct store *store)
{
  return store->segment ? &store->adoption : NULL;
}

void *
store_persistent_note (struct store *store, size_t *bytes)
{
  if (store->segment == NULL)
    return NULL;
  *bytes = STORE_SEGMENT_NOTE_BYTES;
  return store_segment_note (store->segment);
}

void
store_keep_on_destroy (struct store *store)
{
  store->keep_segment = true;
}

void
store_segment_after_memory_lock (struct store *store)
{
  if (store->segment)
    store_segment_unlock_mapping (store->segment);
}
