/* cswap: the ladder's hand-over, recorded where a killed daemon's successor
 * finds it (ladder-online = follow with cswap-ublk).
 *
 * `cswap up` hands the ladder to the daemon once (ladder-follow.h), and
 * from then on only the daemon knows which steps it follows: the steps it
 * swapped off stay off until it swaps them on.  A cswap-ublk that is
 * killed leaves its devices and its store to the next daemon (its
 * standby, or `cswap up`'s --recover); that daemon must follow again, or
 * swap stays as small as it was at the kill while the programs that
 * filled it go on.  So the hand-over is written into the store's note
 * (store_persistent_note: the header page of the segment that outlives
 * the process), and the next daemon reads it there and follows again.
 *
 * A kill can come in the middle of a write: the note's first word says
 * whether the rest is whole.  It is cleared before the rest is written
 * and set after, each with release order, so that a reader that sees it
 * set sees the rest as written (the writer is the only one; a reader
 * reads only after the writer's process is gone).
 */
#ifndef CSWAP_LADDER_RECORD_H
#define CSWAP_LADDER_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ladder-follow.h"

#define LADDER_RECORD_DEVICE_BYTES 64

/* What `cswap up` handed over: the steps, in ladder order, and how to
 * follow.
 */
struct ladder_hand_over {
  unsigned count;
  struct {
    char device[LADDER_RECORD_DEVICE_BYTES];  /* as `ladder add` was given */
    uint64_t offset_bytes, length_bytes;
    int32_t priority;
  } steps[LADDER_MAX_STEPS];
  uint64_t headroom_bytes, floor_bytes;
};

/* The bytes a record takes in the note: the note must have as many. */
extern size_t ladder_record_bytes (void);
/* Writes H into the note at NOTE, whole or (killed meanwhile) not at
 * all.
 */
extern void ladder_record_save (void *note,
                                const struct ladder_hand_over *h);
/* Empties the note at NOTE: nothing to follow again. */
extern void ladder_record_clear (void *note);
/* The hand-over in the note at NOTE into *H: true; false where there is
 * none, or none whole (never written, cleared, or torn by a kill), or
 * one no writer of this layout made (a count or name out of range).
 */
extern bool ladder_record_load (const void *note,
                               struct ladder_hand_over *h);

#endif /* CSWAP_LADDER_RECORD_H */
