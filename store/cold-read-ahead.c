/* cswap: the cold pages of one read request fetched in one disk read
 * (see cold-read-ahead.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cold-read-ahead.h"
#include "prefault.h"
#include "slot-state.h"

_Static_assert (COLD_READ_AHEAD_BUFFERS <= 32, "a bit per buffer");

int
cold_read_ahead_init (struct cold_read_ahead_pool *pool)
{
  pool->buffers = aligned_alloc (TIER_BLOCK_BYTES, (size_t)
                                 COLD_READ_AHEAD_BUFFERS
                                 * COLD_READ_AHEAD_BYTES);
  atomic_store (&pool->busy, pool->buffers ? 0 : UINT32_MAX);
  /* Filled by the threads that serve reads (common/prefault.h). */
  prefault_bytes (pool->buffers,
                  (size_t) COLD_READ_AHEAD_BUFFERS * COLD_READ_AHEAD_BYTES);
  return pool->buffers ? 0 : -1;
}

void
cold_read_ahead_destroy (struct cold_read_ahead_pool *pool)
{
  free (pool->buffers);
  pool->buffers = NULL;
  atomic_store (&pool->busy, UINT32_MAX);
}

/* A free buffer claimed: its index, or -1. */
static int
claim (struct cold_read_ahead_pool *pool)
{
  uint32_t busy = atomic_load_explicit (&pool->busy, memory_order_relaxed);

  if (pool->buffers == NULL)
    return -1;
  for (;;) {
    uint32_t all = (UINT32_C (1) << COLD_READ_AHEAD_BUFFERS) - 1;
    if ((busy & all) == all)
      return -1;
    unsigned i = __builtin_ctz (~busy);
    if (atomic_compare_exchange_weak_explicit (&pool->busy, &busy,
                                               busy | UINT32_C (1) << i,
                                               memory_order_acquire,
                                               memory_order_relaxed))
      return i;
  }
}

void
cold_read_ahead_start (struct cold_read_ahead_pool *pool,
                       struct slot_state *ss, uint64_t first_slot,
                       uint64_t pages, struct cold_read_ahead *ahead)
{
  uint64_t first = UINT64_MAX, end = 0;
  unsigned cold = 0;

  *ahead = (struct cold_read_ahead) { 0 };
  if (ss->tier == NULL || pages < 2)
    return;
  for (uint64_t slot = first_slot; slot < first_slot + pages; slot++) {
    struct slot_contents c;
    uint64_t from, to;

    if (!slot_exists (ss, slot))
      continue;
    slot_lock (ss, slot);
    slot_get (ss, slot, &c);
    slot_unlock (ss, slot);
    if (c.type != SLOT_TIERED)
      continue;
    tier_record_blocks (ss->tier, c.tier_offset, c.length, &from, &to);
    first = from < first ? from : first;
    end = to > end ? to : end;
    cold++;
  }
  if (cold < 2 || end - first > COLD_READ_AHEAD_BYTES)
    return;
  int i = claim (pool);
  if (i < 0)
    return;
  unsigned char *buf = pool->buffers + (size_t) i * COLD_READ_AHEAD_BYTES;
  if (tier_fetch_blocks (ss->tier, first, end, buf) != 0) {
    atomic_fetch_and_explicit (&pool->busy, ~(UINT32_C (1) << i),
                               memory_order_release);
    return;
  }
  *ahead = (struct cold_read_ahead) { .buf = buf, .index = i,
                                      .first = first, .end = end };
}

bool
cold_read_ahead_take (const struct cold_read_ahead *ahead, struct tier *tier,
                      uint64_t offset, uint32_t length,
                      struct tier_record_buf *buf)
{
  uint64_t from, to;

  if (ahead == NULL || ahead->buf == NULL)
    return false;
  tier_record_blocks (tier, offset, length, &from, &to);
  if (from < ahead->first || to > ahead->end || to - from > sizeof buf->bytes)
    return false;
  memcpy (buf->bytes, ahead->buf + (from - ahead->first), to - from);
  return true;
}

void
cold_read_ahead_end (struct cold_read_ahead_pool *pool,
                     struct cold_read_ahead *ahead)
{
  if (ahead->buf)
    atomic_fetch_and_explicit (&pool->busy, ~(UINT32_C (1) << ahead->index),
                               memory_order_release);
  ahead->buf = NULL;
}
