/* cswap: the pages a killed daemon took with it — a bitmap over a
 * device, read by the request layer (blockdev.h).
 *
 When a daemon is killed while its device is swap and a new one takes
 * the device over (ublk's user recovery: cswap-ublk --recover), the
 * kernel still holds swap entries on the device whose pages were in the
 * dead daemon's store.  Where the new daemon could not adopt that store
 * (or a page of it), answering such a read with zeros would hand a
 * process a page of zeros for its data, silently.  So those pages are
 * lost, and a read that starts on a lost page fails with EIO (the
 * kernel then marks the swap entry bad: SIGBUS for the owner of that
 * page alone, and swapoff completes).  A page is found again once the
 * kernel gives it new contents since the restart: written, discarded or
 * zeroed (whole pages only: a partial write leaves the rest of the page
 * unknown).
 *
 *   bit set    lost: not written, discarded or zeroed since the restart
 *   bit clear  served by the new store, as any page
 *
 * The bits are a store's own where its store persists (store.h,
 * store_lost_map: in its segment, so that a page lost stays lost across
 * later take-overs: lost_pages_over), or this map's (a store with a
 * backing file, made new at each take-over: lost_pages_create).
 *
 * Counted: the pages still lost (a gauge, from all of them down) and the
 * reads refused (each refused request once, whatever its length).
 *
 * Threads: every function may be called from any number of threads at
 * once; the words are atomics (a bit is only ever cleared), the counts
 * atomic too.  No lock.
 */
#ifndef CSWAP_LOST_PAGES_H
#define CSWAP_LOST_PAGES_H

#include <stdatomic.h>
#include <stdint.h>

struct lost_pages;

/* A map of PAGES pages, every one lost.  NULL with errno set. */
extern struct lost_pages *lost_pages_create (uint64_t pages);
/* A map of PAGES pages over the bits WORDS (a store's lost map), page P
 * its bit FIRST + P, as they are.  NULL with errno set.
 */
extern struct lost_pages *lost_pages_over (_Atomic uint64_t *words,
                                           uint64_t first, uint64_t pages);
extern void lost_pages_destroy (struct lost_pages *lost);

/* From page FIRST, how many of the next COUNT pages in a row are not
 * lost: 0 when FIRST is, COUNT when none is.  Pages past the map's end
 * are not lost.
 */
extern uint64_t lost_pages_kept_run (const struct lost_pages *lost,
                                     uint64_t first, uint64_t count);

/* Pages FIRST to FIRST + COUNT - 1 have contents again (written,
 * discarded or zeroed since the restart).
 */
extern void lost_pages_found (struct lost_pages *lost, uint64_t first,
                              uint64_t count);

/* A read that started on a lost page was refused. */
extern void lost_pages_note_refused (struct lost_pages *lost);

extern uint64_t lost_pages_left (const struct lost_pages *lost);
extern uint64_t lost_pages_reads_refused (const struct lost_pages *lost);

#endif /* CSWAP_LOST_PAGES_H */
