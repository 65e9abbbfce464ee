/* cswap: writeback — a batch, from memory to disk.
 *
 * Under each chosen slot's lock, copy its compressed object into the
 * tier's aligned batch buffer and set the slot's under-writeback bit;
 * submit the whole batch with one io_uring submission; then, under each
 * slot's lock again, free the pool object only if the bit is still set.
 * Any read, write or trim meanwhile clears it (slot-table.h): such a page
 * stays in memory and its fresh disk copy is freed at once — the race
 * zswap and zram both had to fix, decided here by one flag bit per slot.
 * Compaction may move the object meanwhile; it does not touch the flags,
 * and the bytes on disk are still the page's.
 *
 * A slot is in a batch at most once.  The bit says "untouched since the
 * page was copied", not which copy: a page copied, then rewritten and
 * read (which clears the bit and marks it again for read writeback) and
 * copied again would have its bit set by the second entry, and the first
 * entry's completion would point the slot at the older copy (issue #27).
 * So writeback_batch_add refuses a slot already in the batch, by a scan
 * of the pending list: at most 256 entries, next to a batch's compression
 * and I/O nothing, and no bit per slot.
 *
 * Every completed batch ends the wait of the writers who asked for room
 * before it (writeback-room.c).  Which pages go in is the caller's
 * (writeback-select.c): this file calls no file above it.
 *
 * The budget (writeback-budget.c) decides whether a batch begins, caps
 * what it may write, and is charged what it wrote.
 *
 * Errors: a failed batch (EIO, ENOSPC from a thin file's filesystem)
 * leaves every page of it in memory; the writer backs off, 10 ms doubling
 * up to 2 s, and writes that need room meanwhile get ENOSPC at once.
 *
 * Locks: all of it with the writeback mutex held, the wake lock when a
 * batch completes, the budget lock before and after; lock order:
 * lock-order.h.
 */
#include <errno.h>

#include "monotonic.h"
#include "writeback-internal.h"

#define BACKOFF_MIN_MS 10
#define BACKOFF_MAX_MS 2000

/* Whether SLOT has an entry in the batch being filled.  Mutex held. */
static bool
batch_holds (const struct writeback *wb, uint32_t slot)
{
  for (unsigned n = 0; n < wb->pending_count; n++)
    if (wb->pending[n].slot == slot)
      return true;
  return false;
}

int
writeback_batch_add (struct writeback *wb, uint32_t slot)
{
  uint64_t offset;
  uint32_t length;

  lock_assert_held (&wb->mutex);
  if (batch_holds (wb, slot))
    return 0;                   /* it goes once (see above) */
  const void *bytes = slot_object (wb->slots, slot, &length);
  int r = tier_batch_add (wb->tier, wb->batch, slot, bytes, length, &offset);
  if (r == 0) {
    slot_mark_writeback (wb->slots, slot);
    wb->pending[wb->pending_count++] = (struct pending) {
      .slot = slot, .length = length, .offset = offset };
  }
  return r;
}

/* The batch is on disk (R == 0) or failed: under each slot's lock, move
 * the slot to its disk copy if untouched meanwhile, else free that copy.
 * Returns the pages that left memory.
 */
static unsigned
complete (struct writeback *wb, int r)
{
  unsigned moved = 0;

  for (unsigned n = 0; n < wb->pending_count; n++) {
    const struct pending *p = &wb->pending[n];

    slot_lock (wb->slots, p->slot);
    moved += slot_to_tier (wb->slots, p->slot, r == 0, p->offset, p->length);
    slot_unlock (wb->slots, p->slot);
  }
  counter_add (&wb->count->written_back_pages, moved);
  wb->pending_count = 0;
  return moved;
}

bool
writeback_in_backoff (struct writeback *wb)
{
  return wb->retry_after_ns && monotonic_ns () < wb->retry_after_ns;
}

int
writeback_begin_batch (struct writeback *wb)
{
  lock_assert_held (&wb->mutex);
  int r = writeback_budget_check (wb);

  if (r == 0) {
    writeback_clean (wb);
    writeback_budget_cap (wb);
  }
  return r;
}

int
writeback_flush (struct writeback *wb)
{
  if (wb->pending_count == 0)
    return 0;
  lock_assert_held (&wb->mutex);
  int r = tier_batch_submit (wb->tier, wb->batch);
  writeback_budget_charge (wb);
  unsigned moved = complete (wb, r);
  writeback_post_batch (wb, r ? -ENOSPC : 0);
  if (r) {
    wb->backoff_ms = wb->backoff_ms ? wb->backoff_ms * 2 : BACKOFF_MIN_MS;
    if (wb->backoff_ms > BACKOFF_MAX_MS)
      wb->backoff_ms = BACKOFF_MAX_MS;
    wb->retry_after_ns = monotonic_ns () + wb->backoff_ms * 1000000ull;
    return r;
  }
  wb->backoff_ms = 0;
  wb->retry_after_ns = 0;
  wb->batches_since_compact++;
  return moved;
}
