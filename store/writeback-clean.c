/* cswap: writeback — the slots' answers to the tier's cleaner.
 *
 * The cleaner (tier/clean.c) moves live records out of mostly-dead
 * segments; it asks the owner, through tier_owner_ops, whether a record
 * is still a slot's (the slot is tiered, at that offset and length) and
 * tells it the record's new offset, which the slot takes only if it still
 * points at the old one (slot_owns_record, slot_retarget_record).  A
 * slot touched meanwhile (read back into memory, rewritten, trimmed) no
 * longer does, and the copy is freed.  The owner is the writer: the slot
 * questions go to its slots, a completed cleaning batch ends the wait of
 * the writers who asked for room, as any batch does.
 *
 * Locks: the cleaner runs under the writeback mutex and takes one owner
 * lock (the slot lock) at a time (lock order: lock-order.h).
 */
#include <errno.h>

#include "writeback-internal.h"

static void
owner_lock (void *owner, uint32_t cookie)
{
  struct writeback *wb = owner;
  slot_lock (wb->slots, cookie);
}

static void
owner_unlock (void *owner, uint32_t cookie)
{
  struct writeback *wb = owner;
  slot_unlock (wb->slots, cookie);
}

static bool
owner_owns (void *owner, uint32_t cookie, uint64_t offset, uint32_t length)
{
  struct writeback *wb = owner;
  return slot_owns_record (wb->slots, cookie, offset, length);
}

static bool
owner_retarget (void *owner, uint32_t cookie, uint64_t from, uint64_t to,
                uint32_t length)
{
  struct writeback *wb = owner;
  return slot_retarget_record (wb->slots, cookie, from, to, length);
}

static void
owner_batch_done (void *owner, int r)
{
  writeback_post_batch (owner, r ? -ENOSPC : 0);
}

static const struct tier_owner_ops owner_ops = {
  .lock = owner_lock,
  .unlock = owner_unlock,
  .owns = owner_owns,
  .retarget = owner_retarget,
  .batch_done = owner_batch_done,
};

struct tier_cleaner *
writeback_cleaner_create (struct writeback *wb)
{
  return tier_cleaner_create (wb->tier, &owner_ops, wb,
                              STORE_MAX_WRITEBACK_BATCH);
}

void
writeback_clean (struct writeback *wb)
{
  lock_assert_held (&wb->mutex);
  int cleaned = tier_clean (wb->cleaner);

  counter_add (&wb->count->segments_cleaned, cleaned);
}
