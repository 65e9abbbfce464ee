/* cswap: taking a killed cswap-ublk's devices over, and leaving a
 * daemon's devices to be taken over.
 *
 * Devices are added with user recovery where the driver has it
 * (ublk_recovery_flags), so that a killed cswap-ublk's devices outlive
 * it: its standby (ublk-standby.h), or a daemon started with --recover
 * ID,… (one per window, same windows), takes them over instead of adding
 * new ones.  The store outlives it too (store-segment.h: its memory is a
 * locked System V segment, found by the first device's number), and the
 * new daemon adopts it: every page the kernel was told is written reads
 * back as it was, those on its backing file too (tier.h,
 * tier_keep_state).  Where it cannot (a segment gone or made by another
 * configuration; a backing file that is not the one it wrote to),
 * its store is new and empty, and every page of a device taken over
 * starts lost: a read of one fails with EIO until the kernel writes,
 * discards or zeroes it (lost-pages.h; doc/design.md, "ublk").
 *
 * The other side: a daemon that cannot go on, or is stopping, while one
 * of its disks is swap leaves its devices as a killed one would
 * (ublk_leave_swap_for_recovery), never stopped nor deleted under swap.
 *
 * Locking: none.  main()'s thread alone.
 */
#ifndef CSWAP_UBLK_TAKE_OVER_H
#define CSWAP_UBLK_TAKE_OVER_H

#include <stdbool.h>
#include <stdint.h>

#include "ladder-follow.h"
#include "store.h"
#include "ublk-control.h"
#include "ublk-device-life.h"

/* Takes device DEV_ID over as D (its window set): checks it is a killed
 * cswap-ublk's device of D's size, starts its user recovery and opens
 * its char device; ublk_start_device ends the recovery.  Every page of
 * it is lost.  0, or -1 after saying why, the device left as it was found
 * (never stopped nor deleted: it may still be swap).
 */
extern int ublk_recover_device (struct ublk_control *control,
                                struct served_device *d, uint32_t dev_id);
/* kernel.shm_rmid_forced=1 turns the store's persistence off: said at
 * every start, since nothing else would until a kill lost the pages.
 */
extern void ublk_warn_forced_removal (void);
/* What became of the killed daemon's store, when taking over. */
extern void ublk_say_adoption (struct store *store);
/* With the devices served: where the killed daemon followed the swap in
 * use (ladder-online = follow), this one follows again as it did.
 */
extern void ublk_resume_ladder (struct ladder *ladder);
/* Called where the daemon cannot go on (an error after a disk started,
 * its queues ended or failed) or is stopping: if a disk it serves is swap,
 * it exits here, leaving every device as a killed daemon would, and says
 * so.  Never STOP_DEV nor DEL_DEV under swap: the kernel's swap area would
 * become "… (deleted)", every page swapped there lost, and the delete
 * would wait for ever for swap to let the disk go.
 *
 * With user recovery the driver holds the disks' I/O until a new server
 * ends their recovery, and the store (a System V segment, PERSISTS) is
 * left as it is: the standby (HAS_STANDBY: it takes this exit status,
 * UBLK_EXIT_LEFT_FOR_RECOVERY, as its server's death), `cswap up` or
 * --recover takes both over.  Without it there is no choice: no server
 * can take the disk over, and the driver fails its I/O and removes it as
 * this process ends, its pages lost; stopping it here would only add the
 * endless wait.  The exit comes while the queues still serve, so that the
 * messages can be written even where stderr is a file whose pages are in
 * that swap: the queue threads' own first (daemon-log.h: the ring written
 * out), then this one's.  Returns only when no disk is swap.
 */
extern void
ublk_leave_swap_for_recovery (const struct served_device *devices, int count,
                              bool has_standby);

#endif /* CSWAP_UBLK_TAKE_OVER_H */
