/* cswap: telling the operator, once a minute, that the device is full.
 *
 * A full device (the pool at its limit, and no backing file, a full one
 * or a spent writeback budget) fails swap-outs with ENOSPC.  Nothing is lost: the kernel keeps
 * such a page in memory, marks it dirty and tries again later.  But the
 * workload then thrashes rather than meeting the OOM killer, and the
 * kernel's own "Write-error on swap-device" lines do not say why.  So the
 * front ends pass every write's result here, and the first refusal in a
 * minute prints one line with the count so far and the way out.
 *
 * A machine with no free memory left fails swap-outs with ENOMEM instead
 * (the refill thread found no page for a new zspage in time: see
 * allocator/reserve.c), which gets a line of its own, once a minute too.
 */
#ifndef CSWAP_FULL_WARNING_H
#define CSWAP_FULL_WARNING_H

#include "store.h"

/* RESULT: what store_write returned.  Thread-safe; cheap unless it warns. */
extern void full_warning_note (struct store *store, int result);

#endif /* CSWAP_FULL_WARNING_H */
