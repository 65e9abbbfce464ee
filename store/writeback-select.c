/* cswap: writeback — which pages go out, and the batches that take them.
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
 * (slot_select); here is the sweep.  Pages are offered from a source
 * (writeback-internal.h): a sweep of the table from a hand, or a list of
 * slots (read writeback's); writeback_run_batch fills one batch from it
 * (writeback-batch.c: begin, add, flush), writeback_run_batches as many
 * as the source gives, taking the writeback mutex for each.  The sweeps
 * take one slot lock at a time, under the writeback mutex (lock order:
 * lock-order.h).
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

/* Adds SLOT to the batch if SEL picks it, under the slot's lock.  0,
 * -E2BIG when the batch is full, or -ENOSPC.  Mutex held.
 */
static int
offer_slot (struct writeback *wb, const struct slot_selection *sel,
            uint64_t slot)
{
  int r = 0;

  slot_lock (wb->slots, slot);
  if (slot_select (wb->slots, slot, sel))
    r = writeback_batch_add (wb, slot);
  slot_unlock (wb->slots, slot);
  return r;
}

/* Whether SRC has slots left to offer. */
static bool
source_has_more (const struct writeback_source *src)
{
  return src->cursor ? src->budget > 0 : src->next < src->count;
}

/* A sweep's share of a batch: the slots of SRC->sel's range from
 * *SRC->cursor on, while its budget lasts.  A slot that finds the batch
 * full is passed over this lap.
 */
static int
gather_sweep (struct writeback *wb, struct writeback_source *src,
              unsigned max)
{
  const struct slot_selection *sel = src->sel;
  uint64_t first = sel->end ? sel->first : 0;
  uint64_t end = sel->end ? sel->end : wb->slots->table.slots;

  if (*src->cursor < first || *src->cursor >= end)
    *src->cursor = first;
  while (wb->pending_count < max && src->budget > 0) {
    uint64_t slot = *src->cursor;
    bool exists = slot_exists (wb->slots, slot);
    uint64_t step = exists ? 1 : SLOTS_PER_CHUNK - slot % SLOTS_PER_CHUNK;

    src->budget -= step < src->budget ? step : src->budget;
    *src->cursor = slot + step < end ? slot + step : first;
    if (!exists)
      continue;
    int r = offer_slot (wb, sel, slot);
    if (r == -E2BIG)
      break;                    /* the buffer is full: submit what we have */
    if (r)
      return r;
  }
  return 0;
}

/* A list's share of a batch: its slots in turn.  A slot that finds the
 * batch full is offered again to the next one.
 */
static int
gather_list (struct writeback *wb, struct writeback_source *src,
             unsigned max)
{
  while (src->next < src->count && wb->pending_count < max) {
    int r = offer_slot (wb, src->sel, src->list[src->next]);
    if (r == -E2BIG && wb->pending_count > 0)
      break;                    /* the buffer is full: submit what we have */
    if (r)
      return r;
    src->next++;
  }
  return 0;
}

int
writeback_run_batch (struct writeback *wb, struct writeback_source *src,
                     unsigned max, struct store_writeback_result *done)
{
  int r = writeback_begin_batch (wb);

  if (r)
    return r;
  r = src->cursor ? gather_sweep (wb, src, max) : gather_list (wb, src, max);
  done->batches += wb->pending_count > 0;
  int moved = writeback_flush (wb);
  if (moved > 0)
    done->pages_written += moved;
  return r ? r : moved < 0 ? moved : 0;
}

int
writeback_run_batches (struct writeback *wb, struct writeback_source *src,
                       uint64_t max_pages, struct store_writeback_result *done)
{
  int r = 0;

  *done = (struct store_writeback_result) { 0 };
  while (source_has_more (src)
         && (max_pages == 0 || done->pages_written < max_pages)) {
    unsigned max = atomic_load_explicit (&wb->batch_pages, memory_order_relaxed);
    if (max_pages && max_pages - done->pages_written < max)
      max = max_pages - done->pages_written;
    writeback_lock (wb);
    r = writeback_in_backoff (wb) ? -EAGAIN
      : writeback_run_batch (wb, src, max, done);
    writeback_unlock (wb);
    if (r < 0)
      break;
  }
  return r;
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
