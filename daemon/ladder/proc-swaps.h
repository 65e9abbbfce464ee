/* cswap: the kernel's swap areas, as /proc/swaps lists them.
 *
 *   Filename        Type       Size     Used    Priority
 *   /dev/loop0      partition  65532    1024    100
 *
 * One reader for the daemons' questions: whether a file or disk is swap
 * (swap-users.h, from the SIGTERM handler; cswap-ublk, by its disks'
 * numbers) and how full the ladder's steps are (ladder-follow.h, from a
 * thread that must keep working when memory is short).  So it is
 * async-signal-safe (stat(2) included) and allocates nothing:
 * the file is read whole into a buffer on the stack (the kernel has at
 * most a few dozen swap areas, about 80 bytes a line), the numbers are
 * parsed by hand, and the name is unescaped (the kernel writes a blank in
 * a path as \040) into another.  Sizes are the kernel's: the area less
 * its header page, in KiB, given here in bytes.
 *
 * Threads: none of its own; no state, so any thread or signal handler
 * can call it.
 */
#ifndef CSWAP_PROC_SWAPS_H
#define CSWAP_PROC_SWAPS_H

#include <stdint.h>
#include <sys/types.h>

/* An area is matched to a device by RDEV, never by NAME: swapon may have
 * been given any node of the device (a symlink, a node mknod made
 * elsewhere), and /proc/swaps shows the path it was given.
 */
struct proc_swap_area {
  const char *name;             /* unescaped; valid during the call only */
  dev_t rdev;                   /* NAME's device number if a block device
                                   (stat), else 0: a file, or a node gone
                                   ("… (deleted)") */
  uint64_t size_bytes;          /* Size: the pages the kernel may use */
  uint64_t used_bytes;          /* Used: its slots in use (swap cache too) */
  int priority;
};

/* Calls EACH (if not NULL) with every swap area, in /proc/swaps order.
 * Returns how many there are, or -1 when /proc/swaps cannot be read.
 */
extern int proc_swaps_each (void (*each) (const struct proc_swap_area *area,
                                          void *arg),
                            void *arg);

#endif /* CSWAP_PROC_SWAPS_H */
