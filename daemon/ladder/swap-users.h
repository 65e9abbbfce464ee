/* cswap: whether the kernel swaps to a cswap-fuse device file.
 *
 * The rule, the one place it is written: the device file FILE is in use
 * as swap when a line of /proc/swaps names a block device that is a loop
 * device (it has /sys/dev/block/MAJ:MIN/loop/) whose backing_file is
 * FILE.  The kernel writes backing_file as the file's path from the
 * reader's root, so a loop attached through /proc/PID/root/… or from
 * another mount namespace still reads as MOUNTPOINT/swap here.  Swap
 * through a loop device over another name of the file (a bind mount) is
 * not seen.  `cswap-fuse --swap-users MOUNTPOINT` prints the devices by
 * this rule, for scripts/cswap.in.
 *
 * Async-signal-safe: open(), read(), stat() and close() only, no stdio or
 * allocation, so that the SIGTERM handler (fuse-main.c) can ask.
 */
#ifndef CSWAP_SWAP_USERS_H
#define CSWAP_SWAP_USERS_H

#include <stdbool.h>
#include <stddef.h>

/* The longest device name reported (longer ones are cut). */
#define SWAP_USERS_DEVICE_BYTES 64

/* Calls FOUND (if not NULL) with each swap device over FILE, in
 * /proc/swaps order; returns how many there are (0 also when /proc/swaps
 * cannot be read).
 */
extern unsigned swap_users_list (const char *file,
                                 void (*found) (const char *device, void *arg),
                                 void *arg);

/* Whether FILE is swap; if so, the first such device's name goes to
 * DEVICE (SWAP_USERS_DEVICE_BYTES).
 */
extern bool swap_users_first (const char *file,
                              char device[SWAP_USERS_DEVICE_BYTES]);

#endif /* CSWAP_SWAP_USERS_H */
