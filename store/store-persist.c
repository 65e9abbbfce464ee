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
 * pool).  The backing file's records are adopted with the slots that
 * name them, if the segment's state of the file (tier.h,
 * tier_keep_state) is of the file this daemon opened; else those pages
 * are lost, never read from a file that is not the one they were
 * written to.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "store-internal.h"
#include "tier.h"

/* The lost map's bytes for SLOTS: whole 64-bit words. */
static size_t
lost_map_bytes (uint64_t slots)
{
  return (slots + 63) / 64 * sizeof (uint64_t);
}

/* The segment's geometry for CONFIG, whose pool POOL_CONFIG describes,
 * and its backing file TIER (NULL: none).
 */
static struct store_segment
segment_for (const struct store_config *config,
             const struct zs_pool_config *pool_config, uint64_t slots,
             struct tier *tier)
{
  return (struct store_segment) {
    .tier_state_bytes = tier ? tier_state_bytes (tier) : 0,
    .shmid = -1,
    .dev_id = config->segment_device,
    .size_bytes = config->size_bytes,
    .max_pages_per_zspage = pool_config->max_pages_per_zspage,
    .reserve_bytes = pool_config->reserve_bytes,
    .lost_map_bytes = lost_map_bytes (slots),
    .chunks_bytes = slot_table_homes_bytes (slots),
    .area_bytes = zs_pool_area_bytes (pool_config),
  };
}

/* SEG, adopted, laid out as this cswap lays out a store of its size
 * and allocator geometry: POOL_CONFIG takes that geometry, and
 * ADOPTION says where it is not the configuration's.  False for a
 * segment laid out otherwise (made by another version: its header would
 * say another layout).
 */
static bool
take_geometry (const struct store_segment *seg, uint64_t slots,
               struct zs_pool_config *pool_config,
               struct store_adoption *adoption)
{
  char *said = adoption->kept_geometry;
  size_t room = sizeof adoption->kept_geometry;
  int n = 0;

  if (seg->reserve_bytes != pool_config->reserve_bytes)
    n += snprintf (said + n, room - n, "reserve %llu (configured %llu)",
                   (unsigned long long) seg->reserve_bytes,
                   (unsigned long long) pool_config->reserve_bytes);
  if (seg->max_pages_per_zspage != pool_config->max_pages_per_zspage)
    snprintf (said + n, room - n, "%smax-zspage-pages %u (configured %u)",
              n ? ", " : "", seg->max_pages_per_zspage,
              pool_config->max_pages_per_zspage);
  pool_config->reserve_bytes = seg->reserve_bytes;
  pool_config->max_pages_per_zspage = seg->max_pages_per_zspage;
  return seg->area_bytes == zs_pool_area_bytes (pool_config)
    && seg->chunks_bytes == slot_table_homes_bytes (slots)
    && seg->lost_map_bytes == lost_map_bytes (slots);
}

/* ERROR: why CONFIG's store cannot adopt its device's segment, refused
 * as REFUSAL says (errno: store_segment_adopt's).  The segment is kept.
 */
static void
say_refusal (const struct store_config *config,
             const struct store_segment_refusal *refusal, char *error,
             size_t error_bytes)
{
  /* Only cswap-ublk persists a store: its option is named. */
  static const char discard[] = "or start with --discard-store to remove "
    "it (its pages are then lost)";
  unsigned dev = config->segment_device;

  if (errno == EINVAL)
    snprintf (error, error_bytes, "the store of device %u (a killed "
              "daemon's) was made with size = %llu, not this "
              "configuration's %llu: it is kept; start with size = %llu to "
              "take its pages over, %s", dev,
              (unsigned long long) refusal->size_bytes,
              (unsigned long long) config->size_bytes,
              (unsigned long long) refusal->size_bytes, discard);
  else if (errno == EPROTO)
    snprintf (error, error_bytes, "the store of device %u (a killed "
              "daemon's) was made by another version of cswap (segment "
              "layout %u; this one adopts 3 to %u): it is kept; start the "
              "version that made it to take its pages over, %s", dev,
              refusal->layout, store_segment_layout (), discard);
  else if (errno == EXDEV)
    snprintf (error, error_bytes, "the store of device %u (a killed "
              "daemon's) was made %s: it is kept; start with the backing "
              "file and backing-size it was made with to take its pages "
              "over, %s", dev, refusal->why, discard);
  else if (errno == EBUSY)
    snprintf (error, error_bytes, "the store of device %u is attached by a "
              "live process (pid %d, the last to attach it): not adopted",
              dev, refusal->pid);
  else
    snprintf (error, error_bytes, "the store of device %u: %s: %m", dev,
              refusal->why);
}

/* Adopts CONFIG's segment into SEG: 1; 0 where there is none (or it was
 * discarded), with STORE->adoption.why; -1 with errno and ERROR.
 */
static int
adopt_segment (struct store *store, const struct store_config *config,
               struct store_segment *seg, struct zs_pool_config *pool_config,
               char *error, size_t error_bytes)
{
  uint64_t slots = store->slots.table.slots;
  struct store_segment_refusal refusal;
  size_t tier_state_wanted = seg->tier_state_bytes;

  if (store_segment_adopt (seg, &refusal) == 0) {
    bool laid_out = take_geometry (seg, slots, pool_config,
                                   &store->adoption);
    if (laid_out && seg->tier_state_bytes == tier_state_wanted)
      return 1;
    refusal.layout = store_segment_layout ();
    refusal.why = !seg->tier_state_bytes ? "without a backing file, and "
      "this configuration has one"
      : !tier_state_wanted ? "with a backing file, and this configuration "
      "has none"
      : "with a backing file of another size than this configuration's";
    store_segment_close (seg, false);
    errno = laid_out ? EXDEV : EPROTO;
  }
  int refused = errno;
  if (refused == ENOENT) {
    store->adoption.why = refusal.why;
    return 0;
  }
  if (config->discard_segment && refused != EBUSY
      && store_segment_remove_device (config->segment_device) > 0) {
    store->adoption.why = "discarded, as asked";
    return 0;
  }
  errno = refused;
  say_refusal (config, &refusal, error, error_bytes);
  return -1;
}

/* The backing file's state kept in the segment from now on, and an
 * adopted store's records on it taken over where they are the file's.
 * 0, or -1 with errno and ERROR.
 */
static int
keep_backing_state (struct store *store, struct store_segment *seg,
                    bool adopted, char *error, size_t error_bytes)
{
  struct tier *tier = store->slots.tier;
  const char *why;
  int r;

  if (tier == NULL)
    return 0;
  r = tier_keep_state (tier, store_segment_tier_state (seg), adopted, &why);
  if (r == -1) {
    snprintf (error, error_bytes, "%s: %m", why);
    return -1;
  }
  store->adoption.backing_adopted = r == 1;
  store->adoption.backing_why = why;
  return 0;
}

int
store_segment_open (struct store *store, const struct store_config *config,
                    struct zs_pool_config *pool_config, char *error,
                    size_t error_bytes)
{
  struct store_segment *seg = malloc (sizeof *seg);
  uint64_t slots = store->slots.table.slots;
  const char *why;
  int adopted = 0;

  if (seg == NULL) {
    snprintf (error, error_bytes, "out of memory");
    return -1;
  }
  *seg = segment_for (config, pool_config, slots, store->slots.tier);
  store->adoption.why = NULL;
  if (config->persistence == STORE_SEGMENT_ADOPT)
    adopted = adopt_segment (store, config, seg, pool_config, error,
                             error_bytes);
  if (adopted == -1
      || (adopted == 0 && store_segment_make (seg, &why) == -1)) {
    int saved_errno = errno;
    if (adopted == 0)
      snprintf (error, error_bytes, "the store's shared-memory segment: "
                "%s: %m", why);
    free (seg);
    errno = saved_errno;
    return -1;
  }
  store->adoption.adopted = adopted == 1;
  /* Taking over with nothing to adopt: every page the kernel may still
   * map is lost, and stays lost in this segment until written.
   */
  if (config->persistence == STORE_SEGMENT_ADOPT && !adopted) {
    _Atomic uint64_t *map = store_segment_lost_map (seg);
    for (uint64_t w = 0; w < seg->lost_map_bytes / sizeof *map; w++) {
      uint64_t bits = slots - w * 64;
      atomic_store_explicit (&map[w], bits >= 64 ? UINT64_MAX
                             : (UINT64_C (1) << bits) - 1,
                             memory_order_relaxed);
    }
  }
  if (keep_backing_state (store, seg, adopted == 1, error, error_bytes)) {
    int saved_errno = errno;
    store_segment_close (seg, adopted == 0);    /* a killed one's is kept */
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
  uint64_t deferred_cap;
  bool out_of_memory;
};

static bool
adopt_object (void *arg, zs_handle handle, uint32_t length, uint64_t slot)
{
  struct adopting *a = arg;

  return zs_pool_adopt_object (a->store->slots.pool, handle, length,
                               (uint32_t) slot) == 0;
}

static bool
adopt_tiered (void *arg, uint64_t offset, uint32_t length)
{
  struct adopting *a = arg;
  struct store *store = a->store;

  if (!store->adoption.backing_adopted
      || !tier_adopt_object (store->slots.tier, offset, length))
    return false;
  store->adoption.backing_pages++;
  return true;
}

/* SLOT could not be adopted: lost, in the segment's lost map. */
static void
note_lost (void *arg, uint64_t slot)
{
  struct adopting *a = arg;
  _Atomic uint64_t *map = store_segment_lost_map (a->store->segment);

  atomic_fetch_or_explicit (&map[slot / 64], UINT64_C (1) << slot % 64,
                            memory_order_relaxed);
  a->store->adoption.lost++;
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
    .object = adopt_object, .tiered = adopt_tiered, .lost = note_lost,
    .deferred = note_deferred,
  };
  struct adopting a = { .store = store };
  struct slot_adoption result;

  if (!store->adoption.adopted)
    return 0;
  int r = slot_state_adopt (&store->slots, &ops, &a, &result);

  if (store->adoption.backing_adopted)
    tier_adopt_end (store->slots.tier);
  if (r == -1 || a.out_of_memory) {
    snprintf (error, error_bytes, "adopting the killed daemon's store: "
              "out of memory");
    errno = ENOMEM;
    return -1;
  }
  zs_pool_adopt_end (store->slots.pool);
  store->adoption.pages = result.pages;
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
  free (store->deferred_slots);         /* never queued: no compressor ran */
  store->deferred_slots = NULL;
}

const struct store_adoption *
store_adoption (struct store *store)
{
  return store->segment ? &store->adoption : NULL;
}

_Atomic uint64_t *
store_lost_map (struct store *store, uint64_t *pages)
{
  if (store->segment == NULL)
    return NULL;
  *pages = store->slots.table.slots;
  return store_segment_lost_map (store->segment);
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
