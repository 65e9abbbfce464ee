/* cswap: recompression of pages that stay (recompress.c).
 *
 * The sweeper knows slots, not pages: each pass it hands every slot of
 * the table to the visit callback the store gives it at creation (the
 * data path's recompression of one page), and calls nothing else of the
 * store.
 */
#ifndef CSWAP_RECOMPRESS_H
#define CSWAP_RECOMPRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "compress.h"
#include "slot-state.h"
#include "store.h"

struct recompress_ops {
  /* One pass's visit of SLOT: compresses its page again with COLD if it
   * has been idle since the pass before (true), else ages it a pass.
   * Takes the slot's lock itself.  Called with no lock held.
   */
  bool (*visit) (void *owner, uint64_t slot, const struct codec_config *cold);
};

struct recompress;

/* Sweeps SLOTS's table.  NULL with errno on failure (EINVAL: SETTINGS
 * not valid; after_s 0 is not).
 */
extern struct recompress *recompress_create (const struct recompress_ops *ops,
                                             void *owner,
                                             struct slot_state *slots,
                                             const struct store_recompress *settings);
/* These are NULL-safe. */
extern void recompress_destroy (struct recompress *r);
/* The sweeper thread (store_start_background): 0 or -errno.  Stopping
 * ends a pass under way at the next chunk of slots.
 */
extern int recompress_start (struct recompress *r);
extern void recompress_stop (struct recompress *r);

extern bool recompress_settings_valid (const struct store_recompress *s);
/* -EINVAL (and nothing changed) unless valid.  A change starts the wait
 * for the next pass again.
 */
extern int recompress_set (struct recompress *r,
                           const struct store_recompress *settings);
extern void recompress_get (struct recompress *r,
                            struct store_recompress *settings);
/* One pass now, on the calling thread, beside the sweeper's (a slot is
 * visited under its lock either way): the pages it recompressed in
 * *PAGES.  0, or -EINVAL without a cold codec.
 */
extern int recompress_pass (struct recompress *r, uint64_t *pages);
/* Passes finished since creation. */
extern uint64_t recompress_passes (struct recompress *r);

#endif /* CSWAP_RECOMPRESS_H */
