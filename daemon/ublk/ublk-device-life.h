/* cswap: a cswap-ublk device's life — added (ADD_DEV, SET_PARAMS, its
 * char device opened), its queues and its disk started (START_DEV; for a
 * device taken over, END_USER_RECOVERY: ublk-take-over.h), its disk
 * stopped (STOP_DEV) and the device deleted (DEL_DEV), each step saying
 * what failed; and which of the devices is swap, since a disk that is
 * must be neither stopped nor deleted.
 *
 * One ublk device serves one window of the store: the whole store, or a
 * step of `cswap up`'s ladder (--windows).  The user-recovery flags a
 * device is added with are decided here too (ublk_recovery_flags): they
 * decide how its life may end.
 *
 * Locking: none.  main()'s thread alone calls these (ublk-control.h: a
 * control handle is one thread's).
 */
#ifndef CSWAP_UBLK_DEVICE_LIFE_H
#define CSWAP_UBLK_DEVICE_LIFE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "blockdev.h"
#include "ublk-abi.h"
#include "ublk-control.h"
#include "ublk-queue.h"

/* The ladder's most windows (scripts/cswap/ladder.sh, MAX_LADDER_WINDOWS). */
#define UBLK_MAX_WINDOWS 16
_Static_assert (UBLK_MAX_WINDOWS <= UBLK_QUEUES_MAX_DEVICES,
                "one set of queues serves every window");

struct lost_pages;

/* One ublk device: a window of the store. */
struct served_device {
  uint64_t offset_bytes, length_bytes;
  struct ublk_dev_info info;
  bool added, started;
  dev_t disk;                   /* the started disk's MAJ:MIN; 0: unknown */
  int char_fd;
  struct blockdev window;       /* the request layer over the window */
  char path[64];                /* /dev/ublkbN */
  bool recovering;              /* taken over: END_USER_RECOVERY, not START_DEV */
  struct lost_pages *lost;      /* the dead daemon's pages; NULL: none */
};

/* The user-recovery flags devices are added with, from the driver's
 * FEATURES (doc/design.md, "ublk": why this order).  A store that
 * outlives the daemon (STORE_PERSISTS) wants I/O to wait for a new
 * server, and the requests the dead one held sent again (REISSUE): the
 * new daemon has every page.  A store that dies with it has none of
 * them: where the driver can fail I/O while no server runs (FAIL_IO,
 * 6.13), it does, which for swap loses nothing more than waiting would
 * (the kernel keeps a page whose swap-out failed in memory, dirty, and
 * writes it again later), and nothing waits for a server nobody starts.
 * Without recovery the driver deletes the disk under the swap area,
 * which then stays until the next boot.
 */
extern uint64_t ublk_recovery_flags (uint64_t features, bool store_persists);
/* What a device added with FLAGS does with I/O while no server runs. */
extern const char *ublk_recovery_mode (uint64_t flags);

/* The step of every wait for the driver (here and ublk-take-over.c). */
extern void ublk_wait_10ms (void);
/* /dev/ublkcDEV_ID, opened once it exists. */
extern int ublk_open_char_device (uint32_t dev_id);

/* Adds D as a ublk device (number DEV_ID, or the driver's choice at -1)
 * with its parameters and opens its char device: 0, or -1 after saying
 * why.  QUEUES queues of DEPTH tags, added with the user-recovery flags
 * of a store that persists (STORE_PERSISTS) or not.
 */
extern int ublk_add_device (struct ublk_control *control,
                            struct served_device *d, unsigned queues,
                            unsigned depth, bool store_persists,
                            int64_t dev_id);
/* Starts the queues that serve the COUNT DEVICES, a thread per CPU for
 * all of them (ublk-queue.h): the queues, or NULL after saying why.
 */
extern struct ublk_queues *
ublk_start_queues (struct ublk_control *control,
                   struct served_device *devices, int count, int ended_fd);
/* Starts D's disk, its queues served: 0, or -1 after saying why. */
extern int ublk_start_device (struct ublk_control *control,
                              struct served_device *d);
/* Stops D's disk, if this daemon started it, while the queues still
 * serve what it flushes; the driver then aborts its commands.
 */
extern void ublk_stop_disk (struct ublk_control *control,
                           struct served_device *d);
/* Undoes what ublk_add_device did of D, once every disk is stopped and
 * the queues are (the driver deletes a device only when no ring holds its
 * char device).  False when the device stays (its DEL_DEV failed, or it
 * was never ours: a device being taken over is left as it was found).
 */
extern bool ublk_delete_device (struct ublk_control *control,
                                struct served_device *d);

/* The first of the COUNT DEVICES whose disk is swap, or NULL.  An area
 * is matched by device number (proc-swaps.h), not by the name swapon was
 * given: a symlink or another node of the disk is the same swap.
 */
extern const char *ublk_swap_device (const struct served_device *devices,
                                     int count);

#endif /* CSWAP_UBLK_DEVICE_LIFE_H */
