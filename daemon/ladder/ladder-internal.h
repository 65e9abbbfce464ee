/* cswap: the ladder's state, shared by its three files and no other file:
 *
 *   ladder-follow.c  the object: the `ladder` command, its numbers,
 *                    resume, shut (the public side, ladder-follow.h)
 *   ladder-steps.c   a step: checked to be this daemon's window, then
 *                    held open
 *   ladder-thread.c  the follower thread: reads /proc/swaps, asks the
 *                    policy (ladder-policy.h), swaps a step on or off,
 *                    stands aside
 *
 * Split so that the thread, which runs under memory pressure and must
 * neither allocate nor wait on a lock, reads apart from the control
 * commands, which may do both.  Locking: ladder-follow.h; the lock's
 * place in the order: common/lock-order.h.
 */
#ifndef CSWAP_LADDER_INTERNAL_H
#define CSWAP_LADDER_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "control.h"
#include "ladder-follow.h"
#include "ladder-policy.h"
#include "ladder-record.h"
#include "store.h"

#define DEVICE_NAME_BYTES LADDER_RECORD_DEVICE_BYTES
/* "/proc/self/fd/" and a descriptor's number. */
#define FD_PATH_BYTES 32

/* A step is its held descriptor, never a path: `ladder add` checks the
 * device it opened, and every swapon and swapoff after goes through
 * /proc/self/fd/FD, which the kernel resolves to that same open file,
 * whatever has become of the name it was opened by (a symlink pointed
 * elsewhere since).  DEVICE is only what it shows.
 */
struct ladder_step {
  char device[DEVICE_NAME_BYTES]; /* the name FD was opened at, resolved */
  int fd;                       /* held open: the window stays attached */
  dev_t rdev;
  uint64_t backing_dev, backing_inode; /* a loop's file, as checked */
  uint64_t offset_bytes, length_bytes;
  int priority;                 /* swapon -p; -1: the kernel's choice */
  _Atomic uint64_t rest_until_ns; /* written by the follower only */
};

struct ladder {
  char swap_file[PATH_MAX];
  struct store *store;
  void *record;                 /* the store's note (ladder-record.h), or NULL */
  struct control_extension extension;
  int wake_fd;                  /* eventfd: the write path wakes the follower */

  pthread_mutex_t lock;
  /* Protected by lock; constant while the follower runs. */
  struct ladder_step steps[LADDER_MAX_STEPS];
  unsigned count;
  uint64_t headroom_bytes;
  uint64_t floor_bytes;         /* the least swap kept online (0: none) */
  bool follower_running;
  pthread_t follower;
  bool shut;                    /* ladder_shut ran: commands are refused */
  bool abandoned;               /* the follower outlived ladder_shut */

  atomic_bool following;        /* read by the write path */
  atomic_bool stopping;         /* tells the follower to end */
  atomic_bool stood_aside;      /* it ended: another swapped a step off */
  _Atomic uint64_t written_bytes;
  _Atomic uint64_t swapons, swapoffs, swap_errors;
};

/* The name of descriptor FD: what swapon(2) and swapoff(2) are given for
 * a step, so that they open the device `ladder add` checked, and not
 * whatever its name names now.  The kernel shows the swap area in
 * /proc/swaps by the path the descriptor was opened at (/dev/loopN), not
 * by this name.
 */
static inline void
fd_path (int fd, char path[static FD_PATH_BYTES])
{
  snprintf (path, FD_PATH_BYTES, "/proc/self/fd/%d", fd);
}

/* The reason in ERROR (SIZE bytes), as printf makes it: -1, for a
 * `return refuse (…)`.
 */
__attribute__ ((format (printf, 3, 4)))
static inline int
refuse (char *error, size_t size, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (error, size, fmt, ap);
  va_end (ap);
  return -1;
}

/* ladder-thread.c */

/* The steps as the policy sees them, now; -1 when /proc/swaps cannot be
 * read.  A step is matched by its device number, whatever name swapon
 * was given.
 */
extern int ladder_read_views (struct ladder *l,
                              struct ladder_step_view *views,
                              uint64_t now_ns);
/* Starting and stopping the follower, under l->lock.  Start: 0, or an
 * errno value.
 */
extern int ladder_start_follower (struct ladder *l);
/* Ends the follower; waits at most WAIT_S seconds (0: for ever).  False
 * if it is still running then.
 */
extern bool ladder_stop_follower (struct ladder *l, unsigned wait_s);

/* ladder-steps.c, under l->lock, the follower not running */

/* Step l->count: DEVICE over the window OFFSET, LENGTH, swapped on at
 * PRIORITY, once checked to be this daemon's window.  0, or -1 with the
 * reason in ERROR.
 */
extern int ladder_add_checked_step (struct ladder *l, const char *device,
                                    uint64_t offset, uint64_t length,
                                    int priority, char *error, size_t size);
/* Closes every step's descriptor and forgets the steps. */
extern void ladder_forget_steps (struct ladder *l);

#endif /* CSWAP_LADDER_INTERNAL_H */
