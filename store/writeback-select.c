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
 * What each bit means and how a page is picked is slot-state.c's
 * (slot_select); here is the sweep.  The sweeps take one slot lock at a
 * time, under the writeback mutex (lock order: lock-order.h).
 */
#include <errno.h>

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

int
writeback_offer_slot (struct writeback *wb, const struct slot_selection *sel,
                      uint64_t slot)
{
  int r = 0;

  slot_lock (wb->slots, slot);
  if (slot_select (wb->slots, slot, sel))
    r = writeback_batch_add (wb, slot);
  slot_unlock (wb->slots, slot);
  return r;
}

int
writeback_gather (struct writeback *wb, const struct slot_selection *sel,
                  uint64_t *cursor, uint64_t *budget, unsigned max)
{
  uint64_t first = sel->end ? sel->first : 0;
  uint64_t end = sel->end ? sel->end : wb->slots->table.slots;

  lock_assert_held (&wb->mutex);
  if (*cursor < first || *cursor >= end)
    *cursor = first;
  while (wb->pending_count < max && *budget > 0) {
    uint64_t slot = *cursor;
    bool exists = slot_exists (wb->slots, slot);
    uint64_t step = exists ? 1 : SLOTS_PER_CHUNK - slot % SLOTS_PER_CHUNK;

    *budget -= step < *budget ? step : *budget;
    *cursor = slot + step < end ? slot + step : first;
    if (!exists)
      continue;
    int r = writeback_offer_slot (wb, sel, slot);
    if (r == -E2BIG)
      break;                    /* the buffer is full: submit what we have */
    if (r)
      return r;
  }
  return 0;
}

void
writeback_age_chunk (struct writeback *wb, uint64_t slot)
{
  uint64_t slots = wb->slots->table.slots;

  if (!slot_exists (wb->slots, slot))
    return;
  slot -= slot % SLOTS_PER_CHUNK;
  for (uint64_t end = slot + SLOTS_PER_CHUNK; slot < end && slot < slots;
       slot++) {
    slot_lock (wb->slots, slot);
    slot_age (wb->slots, slot);
    slot_unlock (wb->slots, slot);
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
