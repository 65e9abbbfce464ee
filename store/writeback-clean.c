/* cswap: writeback — the disk cleaner.
 *
 * When fewer than two segments are free, the emptiest segment under 25%
 * live is read whole and its live objects (those whose slot still points
 * at them) are moved into the current batch, with the same
 * under-writeback check as pages from memory.  Its batches may take the
 * segment the tier keeps for them (TIER_CLEANER_SEGMENTS).  A segment
 * cleaned that frees none stops the loop: cleaning more would not help.
 *
 * Lock order (writeback-internal.h): writeback mutex -> slot stripe lock
 * -> tier lock.  A slot lock is dropped before a batch is flushed, which
 * takes slot locks itself.
 */
#include <errno.h>

#include "writeback-internal.h"

#define CLEAN_BELOW_FREE_SEGMENTS 2
#define CLEAN_LIVE_PERCENT 25

/* Moves the live objects of SEGMENT elsewhere on disk.  Called with the
 * writeback mutex held and the batch empty.
 */
static int
clean_segment (struct writeback *wb, uint64_t segment)
{
  struct store *store = wb->store;
  struct tier_object object;
  size_t fill, pos = 0;
  unsigned max = atomic_load_explicit (&wb->batch_pages, memory_order_relaxed);
  int r = tier_read_segment (store->tier, segment, wb->segment_buf, &fill);

  tier_batch_set_cleaning (wb->batch, true);

  while (r >= 0
         && tier_segment_next (store->tier, segment, wb->segment_buf, fill,
                               &pos, &object)) {
    struct slot_chunk *chunk = object.cookie < store->table.slots
      ? slot_chunk (&store->table, object.cookie) : NULL;
    unsigned i = object.cookie % SLOTS_PER_CHUNK;
    if (chunk == NULL)
      continue;
    if (wb->pending_count == max)
      r = writeback_flush (wb);
    pthread_mutex_t *lock = slot_lock (&store->table, object.cookie);
    pthread_mutex_lock (lock);
    for (int tries = 0; r >= 0 && tries < 2; tries++) {
      if (slot_flags_type (chunk->flags[i]) != SLOT_TIERED
          || chunk->word[i] != slot_word_make_tiered (object.offset,
                                                      object.length))
        break;                  /* dead: its slot moved on */
      int a = writeback_batch_add (wb, object.cookie, chunk, i, object.payload,
                         object.length);
      if (a != -E2BIG) {
        r = a;
        break;
      }
      pthread_mutex_unlock (lock);      /* writeback_flush takes slot locks */
      r = writeback_flush (wb);
      pthread_mutex_lock (lock);
    }
    pthread_mutex_unlock (lock);
  }
  int f = writeback_flush (wb);
  tier_batch_set_cleaning (wb->batch, false);
  if (r >= 0 && f >= 0)
    counter_add (&store->count.segments_cleaned, 1);
  return r < 0 ? r : f < 0 ? f : 0;
}

void
writeback_clean (struct writeback *wb)
{
  struct tier *tier = wb->store->tier;
  unsigned free_segments = tier_free_segments (tier);

  while (free_segments < CLEAN_BELOW_FREE_SEGMENTS) {
    int64_t victim = tier_pick_victim (tier, CLEAN_LIVE_PERCENT);
    if (victim < 0 || clean_segment (wb, victim) < 0)
      return;
    unsigned now = tier_free_segments (tier);
    if (now <= free_segments)
      return;                   /* no progress: cleaning more will not help */
    free_segments = now;
  }
}
