/* cswap: writeback — what the store sees of its writer (writeback.c and
 * the files of writeback-internal.h).
 *
 * The writer is made with the store when it has a backing file, and is
 * handed what it works on (struct writeback_context): the slots (through
 * slot-state.h only), the pool limit, the tier, the compactor and the
 * counters.  It calls nothing of the store's files above it.
 */
#ifndef CSWAP_WRITEBACK_H
#define CSWAP_WRITEBACK_H

#include <stdbool.h>
#include <stdint.h>

#include "auto-compact.h"
#include "pool-limit.h"
#include "slot-state.h"
#include "store-counters.h"
#include "store.h"
#include "tier.h"

struct writeback_context {
  struct slot_state *slots;
  struct pool_limit *limit;
  struct tier *tier;
  struct auto_compact *compactor;
  struct store_counters *count;
};

struct writeback;

/* NULL with errno: ENOMEM, or EINVAL for a setting of CONFIG out of
 * range.
 */
extern struct writeback *writeback_create (const struct writeback_context *ctx,
                                           const struct store_config *config);
extern void writeback_destroy (struct writeback *wb);
/* The writer thread (store_start_background): 0 or -errno; NULL-safe. */
extern int writeback_start (struct writeback *wb);
extern void writeback_stop (struct writeback *wb);

/* A write found no room for a new zspage of NEEDED_PAGES below the pool
 * limit: performs (or waits for) a batch of writeback of colder pages.
 * Returns 0 when there may be room now, -ENOSPC when none could be made
 * or none was made by *DEADLINE_NS (monotonic_ns), which the first call
 * of a write sets (*DEADLINE_NS 0) and its retries share.  Called with
 * no slot lock held.
 */
extern int writeback_make_room (struct writeback *wb, unsigned needed_pages,
                                uint64_t *deadline_ns);
/* After a write: past the start watermark, wakes the writer thread so
 * that it makes room before anyone has to wait for it.  NULL-safe.
 */
extern void writeback_wake_early (struct writeback *wb);
/* A write found its area (an export) at its own limit: writes back pages
 * of the area's slots, [FIRST, END), from *HAND on (the area's CLOCK
 * hand, kept by the caller), until ROOM (ARG) says the write fits; cold
 * pages first, then any, as for the pool's limit.  In the caller's
 * thread, under the writeback mutex.  Returns 0 when the write fits,
 * -EDQUOT when nothing more of the area can go (all on disk already,
 * deferred, or the backing file full or failing).  Called with no slot
 * lock held.
 */
extern int writeback_make_area_room (struct writeback *wb, uint64_t first,
                                     uint64_t end, uint64_t *hand,
                                     bool (*room) (void *arg), void *arg);

/* Read writeback (writeback-reads.c): whether pages read back go to disk
 * (false for a NULL WB), and noting one: SLOT, just read, which carried
 * a read mark before the read if WAS_MARKED.  Called with the slot's
 * lock held.
 */
extern bool writeback_keeps_reads (struct writeback *wb);
extern void writeback_note_read (struct writeback *wb, uint32_t slot,
                                 bool was_marked);

/* store_writeback's sweep: SEL's pages, at most MAX_PAGES (0: all).
 * IDLE_SECONDS 0 takes every page, else those idle at least that long.
 */
extern int writeback_sweep (struct writeback *wb, unsigned idle_seconds,
                            uint64_t max_pages, bool include_huge,
                            struct store_writeback_result *result);

/* writeback-settings.c: the setters return 0 or -EINVAL, and change
 * nothing on -EINVAL.
 */
extern int writeback_set_batch (struct writeback *wb, unsigned pages);
extern unsigned writeback_batch (struct writeback *wb);
extern int writeback_set_idle (struct writeback *wb, unsigned seconds);
extern unsigned writeback_idle (struct writeback *wb);

/* writeback-budget.c: the budget (store.h's store_writeback_budget),
 * 0 or -EINVAL as above; and its numbers in S (writeback_limit_bytes,
 * writeback_budget_bytes).
 */
extern int writeback_set_budget (struct writeback *wb,
                                 const struct store_writeback_budget *budget);
extern void writeback_budget (struct writeback *wb,
                              struct store_writeback_budget *budget);
extern void writeback_budget_stats (struct writeback *wb,
                                    struct store_stats *s);

#endif /* CSWAP_WRITEBACK_H */
