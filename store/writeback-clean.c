/* cswap: writeback — the store's answers to the tier's cleaner.
 *
 * The cleaner (tier/clean.c) moves live records out of mostly-dead
 * segments; it asks the store, through tier_owner_ops, whether a record
 * is still a slot's (the slot is tiered, at that offset and length) and
 * tells it the record's new offset, which the slot takes only if it still
 * points at the old one.  A slot touched meanwhile (read back into
 * memory, rewritten, trimmed) no longer does, and the copy is freed.
 *
 * Lock order (writeback-internal.h): writeback mutex -> slot stripe lock
 * (the owner lock, one at a time) -> tier lock; the wake lock, a leaf,
 * when a cleaning batch completes.
 */
#include <errno.h>

#include "writeback-internal.h"

/* The chunk of slot COOKIE if it holds the record at OFFSET of LENGTH. */
static struct slot_chunk *
chunk_if_owned (struct store *store, uint32_t cookie, uint64_t offset,
                uint32_t length)
{
  struct slot_chunk *chunk = cookie < store->table.slots
    ? slot_chunk (&store->table, cookie) : NULL;
  unsigned i = cookie % SLOTS_PER_CHUNK;

  if (chunk == NULL || slot_flags_type (chunk->flags[i]) != SLOT_TIERED
      || chunk->word[i] != slot_word_make_tiered (offset, length))
    return NULL;
  return chunk;
}

static bool
owner_owns (void *owner, uint32_t cookie, uint64_t offset, uint32_t length)
{
  return chunk_if_owned (owner, cookie, offset, length) != NULL;
}

static bool
owner_retarget (void *owner, uint32_t cookie, uint64_t from, uint64_t to,
                uint32_t length)
{
  struct slot_chunk *chunk = chunk_if_owned (owner, cookie, from, length);

  if (chunk == NULL)
    return false;
  chunk->word[cookie % SLOTS_PER_CHUNK] = slot_word_make_tiered (to, length);
  return true;
}

static void
owner_batch_done (void *owner, int r)
{
  struct store *store = owner;
  writeback_post_batch (store->writeback, r ? -ENOSPC : 0);
}

static const struct tier_owner_ops owner_ops = {
  .lock = store_owner_lock,
  .unlock = store_owner_unlock,
  .owns = owner_owns,
  .retarget = owner_retarget,
  .batch_done = owner_batch_done,
};

struct tier_cleaner *
writeback_cleaner_create (struct store *store)
{
  return tier_cleaner_create (store->tier, &owner_ops, store,
                              STORE_MAX_WRITEBACK_BATCH);
}

void
writeback_clean (struct writeback *wb)
{
  int cleaned = tier_clean (wb->cleaner);

  counter_add (&wb->store->count.segments_cleaned, cleaned);
}
