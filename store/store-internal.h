/* cswap: the store itself — what its own files share:
 *
 *   store.c           setup and teardown, background threads, commands
 *   data-path.c       reads, writes, trims, extents; deferred compression
 *   store-stats.c     statistics and request latency
 *   store-settings.c  codec, cold codec, pool limit, writeback settings
 *   store-areas.c     areas: their limits, their room, their statistics
 *
 * Below them, each with its own header and none calling back up:
 *
 *   slot-state.c      every change of a slot (over slot-table.c)
 *   pool-limit.c      the pool limit and its accept threshold
 *   deferred.c        the queue of pages stored raw, and its thread
 *   recompress.c      the sweeper that recompresses pages that stay
 *   auto-compact.c    every compaction, and its thread
 *   writeback*.c      the writer (writeback.h)
 *
 * Each field of struct store says what guards it; the lock order is
 * lock-order.h's.
 */
#ifndef CSWAP_STORE_INTERNAL_H
#define CSWAP_STORE_INTERNAL_H

#include <stdatomic.h>

#include "cold-read-ahead.h"
#include "auto-compact.h"
#include "deferred.h"
#include "pool-limit.h"
#include "recompress.h"
#include "slot-state.h"
#include "store-counters.h"
#include "store-segment.h"
#include "store.h"
#include "writeback.h"

struct store {
  uint64_t size_bytes;                  /* set at creation */
  uint32_t huge_threshold_bytes;        /* set at creation */
  _Atomic uint32_t codec_packed;        /* relaxed atomic: id << 16 |
                                           (uint16_t) level */
  struct slot_state slots;              /* each slot under its slot lock;
                                           pool and tier set at creation */
  struct pool_limit limit;              /* relaxed atomics */
  atomic_bool pool_limit_default;       /* the limit is still the
                                           config's default one */
  struct writeback *writeback;          /* set at creation; NULL: no
                                           backing file */
  struct cold_read_ahead_pool read_ahead;       /* with a backing file */
  struct deferred *deferred;            /* set at creation */
  struct recompress *recompress;        /* set at creation */
  struct auto_compact *compactor;       /* set at creation */
  struct store_counters count;          /* relaxed atomics */
  struct latency_histogram request_latency[STORE_REQUEST_KINDS];  /* atomics */
  /* Areas (store.h): 1 and NULLs for a store of one; else the counters
   * are slots.area_count, and each area's limit (0: none) a relaxed
   * atomic.  Set at creation.
   */
  unsigned areas;
  _Atomic uint64_t *area_limit;
  uint64_t *area_hand;          /* each area's CLOCK hand, for writeback at
                                   its limit; the writeback mutex's */
  /* A store that outlives its process (store-persist.c); NULL, zeros:
   * one that does not.  Set at creation, but keep_segment (by the
   * owner, before store_destroy) and the deferred list (emptied once
   * queued again, by store_start_background).
   */
  struct store_segment *segment;
  struct store_adoption adoption;
  uint64_t *deferred_slots, deferred_count;
  bool keep_segment;
};

/* store-areas.c: whether SLOT's area has a limit of its own.  No lock. */
extern bool store_area_limited (struct store *store, uint64_t slot);
/* store-areas.c: with a backing file, makes room in SLOT's area, at its
 * limit, for a page of LENGTH pool bytes by writing back the area's own
 * pages (writeback_make_area_room).  0 to try again, or -EDQUOT.  Called
 * with no slot lock held.
 */
extern int store_area_make_room (struct store *store, uint64_t slot,
                                 uint32_t length);
/* store-areas.c: whether SLOT's area can take a page of LENGTH pool
 * bytes (4096 raw) in place of what SLOT holds.  Called with the slot's
 * lock held.
 */
extern bool store_area_has_room (struct store *store, uint64_t slot,
                                 uint32_t length);
/* store-areas.c: the areas' counters and limits, for store_create; 0 or
 * -1 with errno.  And their release, for store_destroy.
 */
extern int store_areas_init (struct store *store, unsigned areas);
extern void store_areas_destroy (struct store *store);

/* Whether CODEC is a codec and a level it takes: what store_create and
 * store_set_codec accept.
 */
static inline bool
store_codec_valid (const struct codec_config *codec)
{
  int min, max;

  return codec->id < CODEC_COUNT
    && codec_check_level (codec->id, codec->level, &min, &max) == 0;
}

/* Makes CODEC, valid, the codec for pages written from now on. */
static inline void
store_codec_set_now (struct store *store, const struct codec_config *codec)
{
  atomic_store_explicit (&store->codec_packed,
                         (uint32_t) codec->id << 16 | (uint16_t) codec->level,
                         memory_order_relaxed);
}

/* The codec for pages written now. */
static inline struct codec_config
store_codec_now (struct store *store)
{
  uint32_t packed = atomic_load_explicit (&store->codec_packed,
                                          memory_order_relaxed);
  return (struct codec_config) { .id = packed >> 16,
                                 .level = (int16_t) (packed & 0xffff) };
}

/* store-persist.c.  store_segment_open: the segment of a store with
 * persistence, made or adopted, its homes given to the slot table and
 * its area to POOL_CONFIG; 0, or -1 with errno and ERROR.
 * store_adopt_pages: with the pool and its limit made, the dead
 * process's pages taken back, if a segment was adopted; 0, or -1 with
 * errno and ERROR.  store_requeue_deferred: once the compressor runs,
 * the adopted pages it had not compressed yet go to it again.
 * store_segment_release: detached, and removed if forgotten.
 * store_segment_after_memory_lock: see store.h's store_start_background.
 */
extern int store_segment_open (struct store *store,
                               const struct store_config *config,
                               struct zs_pool_config *pool_config,
                               char *error, size_t error_bytes);
extern int store_adopt_pages (struct store *store, char *error,
                              size_t error_bytes);
extern void store_requeue_deferred (struct store *store);
extern void store_segment_release (struct store *store);
extern void store_segment_after_memory_lock (struct store *store);

/* data-path.c: the compressor thread's callback (deferred.h), whose
 * owner is the store.
 */
extern const struct deferred_ops store_deferred_ops;
/* data-path.c: the recompressor's visit (recompress.h). */
extern const struct recompress_ops store_recompress_ops;

#endif /* CSWAP_STORE_INTERNAL_H */
