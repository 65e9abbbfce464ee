/* cswap: the cleaner — room on disk from mostly-dead segments.
 *
 * When fewer than CLEAN_BELOW_FREE_SEGMENTS segments are free, the
 * emptiest full segment under CLEAN_LIVE_PERCENT live is read whole and
 * its records that the owner still refers to are written again, in
 * batches of the cleaner's own, to the segments kept for it
 * (TIER_CLEANER_SEGMENTS); then the owner is told their new offsets and
 * the old copies die, which frees the victim.  A segment cleaned that
 * frees none stops the loop: cleaning more would not help.
 *
 * The owner's contract (tier.h, struct tier_owner_ops) is the allocator's
 * for compaction, for disk offsets: under the owner's lock for a cookie,
 * "is the record at OFFSET still yours?" before the copy, and "it moved
 * from FROM to TO" after the batch is on disk, which the owner takes only
 * if it still refers to FROM; otherwise the new copy is freed.  Only the
 * batching caller writes records, and it is the one cleaning, so no
 * record can be written at a freed FROM meanwhile: comparing offsets is
 * enough.
 *
 * One owner lock at a time, dropped before a batch is submitted and
 * settled, which takes owner locks itself.  Lock order:
 * common/lock-order.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "prefault.h"
#include "tier-internal.h"

#define CLEAN_BELOW_FREE_SEGMENTS 2
#define CLEAN_LIVE_PERCENT 25

/* A record in the cleaner's batch in flight. */
struct moved_record {
  uint32_t cookie, length;
  uint64_t from, to;
};

struct tier_cleaner {
  struct tier *tier;
  const struct tier_owner_ops *ops;
  void *owner;
  struct tier_batch *batch;
  void *segment_buf;            /* TIER_SEGMENT_BYTES, block-aligned */
  unsigned max_objects, pending;
  struct moved_record moved[];
};

struct tier_cleaner *
tier_cleaner_create (struct tier *tier, const struct tier_owner_ops *ops,
                     void *owner, unsigned max_objects)
{
  struct tier_cleaner *c = calloc (1, sizeof *c
                                   + max_objects * sizeof c->moved[0]);

  if (c == NULL)
    return NULL;
  *c = (struct tier_cleaner) { .tier = tier, .ops = ops, .owner = owner,
                               .max_objects = max_objects };
  c->segment_buf = aligned_alloc (TIER_BLOCK_BYTES, TIER_SEGMENT_BYTES);
  c->batch = tier_batch_create (max_objects);
  if (c->segment_buf == NULL || c->batch == NULL) {
    tier_cleaner_destroy (c);
    errno = ENOMEM;
    return NULL;
  }
  tier_batch_for_cleaner (c->batch);
  /* The writeback thread fills them, under locks writers wait on
   * (common/prefault.h): touched now.
   */
  prefault_bytes (c->segment_buf, TIER_SEGMENT_BYTES);
  tier_batch_prefault (c->batch, max_objects);
  return c;
}

void
tier_cleaner_destroy (struct tier_cleaner *c)
{
  if (c == NULL)
    return;
  tier_batch_destroy (c->batch);
  free (c->segment_buf);
  free (c);
}

/* Writes the batch and settles every record of it: the owner takes the
 * new offset, or the new copy dies.  Returns 0 or a negative errno.
 */
static int
flush (struct tier_cleaner *c)
{
  if (c->pending == 0)
    return 0;
  int r = tier_batch_submit (c->tier, c->batch);
  for (unsigned n = 0; n < c->pending; n++) {
    const struct moved_record *m = &c->moved[n];
    c->ops->lock (c->owner, m->cookie);
    bool taken = r == 0 && c->ops->retarget (c->owner, m->cookie, m->from,
                                             m->to, m->length);
    tier_free (c->tier, taken ? m->from : m->to, m->length);
    c->ops->unlock (c->owner, m->cookie);
  }
  c->pending = 0;
  c->ops->batch_done (c->owner, r);
  return r;
}

/* Adds OBJECT to the batch if its owner still refers to it.  0, -E2BIG
 * when the batch is full, or another -errno.  Owner lock held.
 */
static int
add_if_owned (struct tier_cleaner *c, const struct tier_object *object)
{
  uint64_t to;

  if (!c->ops->owns (c->owner, object->cookie, object->offset,
                     object->length))
    return 0;                   /* dead: its owner moved on */
  if (c->pending == c->max_objects)
    return -E2BIG;
  int r = tier_batch_add (c->tier, c->batch, object->cookie, object->payload,
                          object->length, &to);
  if (r == 0)
    c->moved[c->pending++] = (struct moved_record) {
      .cookie = object->cookie, .length = object->length,
      .from = object->offset, .to = to };
  return r;
}

/* Moves the live records of SEGMENT elsewhere on disk. */
static int
clean_segment (struct tier_cleaner *c, uint64_t segment)
{
  struct tier_object object;
  size_t fill, pos = 0;
  int r = tier_read_segment (c->tier, segment, c->segment_buf, &fill);

  while (r >= 0
         && tier_segment_next (c->tier, segment, c->segment_buf, fill, &pos,
                               &object)) {
    c->ops->lock (c->owner, object.cookie);
    r = add_if_owned (c, &object);
    c->ops->unlock (c->owner, object.cookie);
    if (r == -E2BIG) {
      r = flush (c);
      if (r == 0) {
        c->ops->lock (c->owner, object.cookie);
        r = add_if_owned (c, &object);
        c->ops->unlock (c->owner, object.cookie);
      }
    }
  }
  int f = flush (c);
  return r < 0 ? r : f;
}

int
tier_clean (struct tier_cleaner *c)
{
  unsigned free_segments = tier_free_segments (c->tier);
  int cleaned = 0;

  while (free_segments < CLEAN_BELOW_FREE_SEGMENTS) {
    int64_t victim = tier_pick_victim (c->tier, CLEAN_LIVE_PERCENT);
    if (victim < 0 || clean_segment (c, victim) < 0)
      break;
    cleaned++;
    unsigned now = tier_free_segments (c->tier);
    if (now <= free_segments)
      break;                    /* no progress: cleaning more will not help */
    free_segments = now;
  }
  return cleaned;
}
