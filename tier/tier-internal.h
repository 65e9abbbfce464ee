/* cswap: what tier.c gives the cleaner (clean.c) and the keeper of its
 * state (keep.c), and nobody else.
 *
 * Each of these takes tier->lock briefly, or none.  Lock order:
 * common/lock-order.h.
 */
#ifndef CSWAP_TIER_INTERNAL_H
#define CSWAP_TIER_INTERNAL_H

#include "record.h"
#include "tier.h"

/* Makes the batch the cleaner's, which may take the segments kept for it
 * (TIER_CLEANER_SEGMENTS).  A new batch is not.
 */
extern void tier_batch_for_cleaner (struct tier_batch *batch);

/* Free segments a batch could start now: those with blocks, and while
 * the filesystem has not said it is full, those of a thin file without.
 */
extern unsigned tier_free_segments (struct tier *tier);

/* A full segment with less than LIVE_PERCENT live bytes, from the
 * emptiest bucket that has one (SEGMENT_BUCKETS steps of live share), or
 * -1.  Costs the number of buckets, not of segments.
 */
extern int64_t tier_pick_victim (struct tier *tier, unsigned live_percent);

/* Reads SEGMENT whole into BUF (TIER_SEGMENT_BYTES, aligned); then
 * tier_segment_next walks its valid records, decrypting them in place.
 */
extern int tier_read_segment (struct tier *tier, uint64_t segment, void *buf,
                              size_t *fill);
struct tier_object {
  uint64_t offset;
  uint32_t cookie, length;
  const void *payload;
};
/* Returns true and the next object at or after *POS with a valid
 * checksum, advancing *POS past it; false at the end.
 */
extern bool tier_segment_next (struct tier *tier, uint64_t segment,
                               void *buf, size_t fill, size_t *pos,
                               struct tier_object *object);

/* keep.c's: the file, its segments, the record format; and where the
 * segments' generations live from now on: GENERATION, which holds them
 * already (KEEP_VALUES: a killed daemon's) or gets the tier's copied in.
 */
extern int tier_file (struct tier *tier);
extern uint32_t tier_segment_count (struct tier *tier);
extern struct record_format *tier_format (struct tier *tier);
extern void tier_use_generations (struct tier *tier, uint32_t *generation,
                                  bool keep_values);

#endif /* CSWAP_TIER_INTERNAL_H */
