/* cswap: the lost pages of a front end's devices in `cswapctl stats` and
 * `metrics` (a control extension of numbers only, control.h).
 *
 * A device taken over from a killed daemon whose store could not be
 * adopted (a backing file; a segment made by another configuration)
 * keeps a map of the pages it lost (lost-pages.h).  Its reads of them
 * fail with EIO, which the kernel turns into SIGBUS for their owner: an
 * administrator wants to see that happen while the daemon runs, not only
 * in the line it prints when it stops.  Summed over the devices:
 *
 *   lost_reads            reads refused for a lost page (a counter)
 *   lost_pages_unwritten  lost pages not written, discarded or zeroed
 *                         since (a gauge, down to 0)
 *
 * Both are 0 where no device lost a page.  The maps are added before the
 * control thread starts and must outlive it.
 */
#ifndef CSWAP_LOST_PAGES_NUMBERS_H
#define CSWAP_LOST_PAGES_NUMBERS_H

#include "control.h"
#include "lost-pages.h"

#define LOST_PAGES_NUMBERS_MAX_MAPS 32

struct lost_pages_numbers {
  struct control_extension extension;
  struct lost_pages *maps[LOST_PAGES_NUMBERS_MAX_MAPS];
  unsigned count;
};

/* The extension, for control_extend, with no map yet. */
extern const struct control_extension *
lost_pages_numbers_init (struct lost_pages_numbers *numbers);
/* MAP (NULL: nothing) counts too; at most LOST_PAGES_NUMBERS_MAX_MAPS. */
extern void lost_pages_numbers_add (struct lost_pages_numbers *numbers,
                                    struct lost_pages *map);

#endif /* CSWAP_LOST_PAGES_NUMBERS_H */
