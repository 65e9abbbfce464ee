/* cswap: writeback — which pages go out.
 *
 * Cold is chosen by CLOCK: every access sets a slot's referenced bit; the
 * hand sweeps the slot table, clearing set bits (a second chance) and
 * taking pages whose bit was already clear.  An idle sweep every
 * idle-writeback/3 seconds ages the pages in memory (2 bits, reset by any
 * access); those reaching the top age, idle for about idle-writeback
 * seconds, go out proactively.  Pages the kernel read and left alone
 * carry a read mark (slot-table.h), which read writeback picks
 * (writeback-reads.c).  Same-filled pages never go to disk (they live in
 * the slot word); raw pages do.
 *
 * Lock order (writeback-internal.h): writeback mutex -> slot stripe lock.
 * The sweeps take one slot lock at a time.
 */
#include <errno.h>

#include "page.h"
#include "writeback-internal.h"

/* Without idle writeback, pages still age (for store_writeback idle=S). */
#define DEFAULT_AGE_PERIOD_S 20

unsigned
writeback_age_period_s (struct writeback *wb)
{
  unsigned idle = atomic_load_explicit (&wb->idle_seconds, memory_order_relaxed);

  /* A third, rounded up: never 0 for IDLE > 0, and no sum that wraps
   * (the setters bound IDLE to STORE_MAX_IDLE_WRITEBACK_S anyway).
   */
  return idle ? idle / 3 + (idle % 3 != 0) : DEFAULT_AGE_PERIOD_S;
}

/* Whether slot I of CHUNK goes into this batch; CLOCK clears the
 * referenced bits it passes.  Called with the slot's lock held.
 */
static bool
select_slot (const struct selection *sel, struct slot_chunk *chunk, unsigned i)
{
  uint8_t flags = chunk->flags[i];

  /* A deferred page is about to shrink: write it when it has.  A page
   * already in this batch (the hand's second lap) must not go twice: the
   * bit is the quick test, writeback_batch_add the exact one, for a page
   * touched since it was copied.
   */
  if (slot_flags_type (flags) != SLOT_STORED
      || (flags & (SLOT_DEFERRED | SLOT_WRITEBACK))
      || (!sel->include_huge
          && slot_word_length (chunk->word[i]) == CSWAP_PAGE_SIZE))
    return false;
  switch (sel->pick) {
  case PICK_CLOCK:
    if (flags & SLOT_REFERENCED) {
      chunk->flags[i] = flags & ~SLOT_REFERENCED;
      return false;
    }
    return true;
  case PICK_IDLE:
    return slot_flags_age (flags) >= sel->min_age;
  case PICK_ALL:
    return true;
  case PICK_READ_MARKED:
    return slot_flags_read_marked (flags);
  }
  return false;
}

int
writeback_offer_slot (struct writeback *wb, const struct selection *sel,
                      struct slot_chunk *chunk, uint64_t slot)
{
  struct store *store = wb->store;
  unsigned i = slot % SLOTS_PER_CHUNK;
  pthread_mutex_t *lock = slot_lock (&store->table, slot);
  int r = 0;

  pthread_mutex_lock (lock);
  if (select_slot (sel, chunk, i)) {
    uint64_t word = chunk->word[i];
    r = writeback_batch_add (wb, slot, chunk, i,
                             zs_object (store->pool, slot_word_handle (word)),
                             slot_word_length (word));
  }
  pthread_mutex_unlock (lock);
  return r;
}

int
writeback_gather (struct writeback *wb, const struct selection *sel,
                  uint64_t *cursor, uint64_t *budget, unsigned max)
{
  struct store *store = wb->store;
  struct slot_table *table = &store->table;

  while (wb->pending_count < max && *budget > 0) {
    uint64_t slot = *cursor;
    struct slot_chunk *chunk = slot_chunk (table, slot);
    uint64_t step = chunk ? 1 : SLOTS_PER_CHUNK - slot % SLOTS_PER_CHUNK;

    *budget -= step < *budget ? step : *budget;
    *cursor = slot + step < table->slots ? slot + step : 0;
    if (chunk == NULL)
      continue;
    int r = writeback_offer_slot (wb, sel, chunk, slot);
    if (r == -E2BIG)
      break;                    /* the buffer is full: submit what we have */
    if (r)
      return r;
  }
  return 0;
}

void
writeback_age_chunk (struct store *store, uint64_t slot)
{
  struct slot_chunk *chunk = slot_chunk (&store->table, slot);

  if (chunk == NULL)
    return;
  slot -= slot % SLOTS_PER_CHUNK;
  for (unsigned i = 0; i < SLOTS_PER_CHUNK && slot + i < store->table.slots; i++) {
    pthread_mutex_t *lock = slot_lock (&store->table, slot + i);
    pthread_mutex_lock (lock);
    uint8_t flags = chunk->flags[i];
    if (slot_flags_type (flags) == SLOT_STORED
        && slot_flags_age (flags) < SLOT_AGE_MAX)
      chunk->flags[i] = slot_flags_with_age (flags, slot_flags_age (flags) + 1);
    pthread_mutex_unlock (lock);
  }
}

unsigned
writeback_idle_min_age (struct writeback *wb, unsigned idle_seconds)
{
  /* Ages count idle sweeps; a page of age A has been idle at least
   * (A - 1) periods.
   */
  unsigned period = writeback_age_period_s (wb);
  uint64_t age = ((uint64_t) idle_seconds + period - 1) / period + 1;

  return age < SLOT_AGE_MAX ? age : SLOT_AGE_MAX;
}
