/* cswap: the ladder's follower — swap space that follows the swap in use
 * (cswap.conf(5), ladder-online = follow; doc/design.md, "Steps that
 * follow the swap in use").
 *
 * The kernel keeps a page's slot after reading the page back while less
 * than half of the swap online is in use, and so cswap keeps its copy;
 * zram's copies go at every swap-in.  With fewer steps of the ladder
 * online, swap is fuller and the kernel lets more of them go.  So with
 * follow, `cswap up` attaches a loop device over every window of the
 * FUSE file as before, mkswaps them all, swaps on the first one only,
 * and hands the ladder to the daemon over its control socket:
 *
 *   ladder add DEVICE OFFSET LENGTH PRIORITY  one step, in ladder order
 *   ladder follow HEADROOM [FLOOR]            start following
 *   ladder stop                               stop, forget the steps
 *   ladder                                    the steps, online or not
 *
 * `add` checks that DEVICE is a direct-I/O loop device over this daemon's
 * own file at exactly that window (LOOP_GET_STATUS64), and keeps it open:
 * a loop device cannot be detached from under a holder, so its name goes
 * on naming that window for as long as the daemon may swap it on.  The
 * nbdkit plugin has no file: with frontend = nbd, `cswap up` connects an
 * nbd device to each window, served as an export of its own
 * (nbd-window.h), and `add` checks that DEVICE is as long as the window
 * and that its first page, read uncached through it, is the window's
 * swap header, which mkswap made unique with a random UUID.
 *
 * A step is its descriptor from then on, never DEVICE's name: swapon(2)
 * and swapoff(2) are given /proc/self/fd/N, which the kernel resolves to
 * the open file itself (and /proc/swaps still shows /dev/loopN), and
 * before each the follower re-checks, cheaply, that the descriptor names
 * the same device number and, for a loop device, the same file and
 * window.  A name checked and then used again could be pointed elsewhere
 * in between (a symlink): swapon on a file of someone's choosing,
 * swapoff of any swap, and the window wiped while it is still swap.
 * `ladder` lists a step by the name the kernel opened, links resolved.
 *
 * One thread follows.  It reads /proc/swaps (proc-swaps.h: no fork, no
 * allocation), asks the policy (ladder-policy.h), and calls swapon(2) or
 * swapoff(2) itself, reading and asking again until the policy says
 * keep; then it sleeps until LADDER_WAKE_BYTES more have been written to
 * the device (ladder_note_write, from the write path) or LADDER_IDLE_MS
 * have passed.  The kernel's count is the measure: it takes a slot before
 * it writes the page, so its Used is ahead of any count the daemon could
 * keep of its own, and it is exact where the daemon's is not (the daemon
 * hears of freed slots only at discards, per whole cluster).  The writes
 * are the trigger: swap fills only by writes, so none go by unseen for
 * more than LADDER_WAKE_BYTES, and an idle follower costs one wake-up a
 * second, the one that lets steps go off.
 *
 * swapon(2) reads the step's header through this very daemon: the
 * request threads serve it while the follower waits, which is none of
 * them.  Since it must make room exactly when memory is short, it is
 * marked as they are (memory_safety_mark_io_thread: an I/O flusher, and
 * SCHED_FIFO where allowed), and logs nothing but failures (a log write
 * that blocks would hold the next step back).  A step that went off has
 * its window freed in the store, the header page kept: the kernel
 * discards only whole free clusters, and never the header's.  A swapon or
 * swapoff that fails makes its step rest for LADDER_REST_MS (the policy
 * passes over it: the next step down gives the room instead).
 *
 * With a store that outlives the process (cswap-ublk's), `follow` also
 * records the hand-over in the store (ladder-record.h), and a daemon
 * that takes the devices over from a killed one follows again from it
 * (ladder_resume): else the steps the dead one had swapped off would stay
 * off while the programs that filled swap go on.  `ladder stop` clears
 * the record.
 *
 * A step another process swaps off (systemd stopping its swap units at
 * shutdown, an administrator) makes the follower stand aside: it logs
 * the step, ends, and `ladder` says "stood_aside", until `ladder stop`
 * and `ladder follow` (cswap up); its record is cleared, so that no
 * daemon taking over follows again either.  Fighting it, it swapped steps
 * on again as fast as systemd took them off at shutdown.
 *
 * Locking: ladder->lock, a leaf (common/lock-order.h), guards the steps,
 * the headroom and the follower's start and stop; every control command
 * holds it.  The follower takes no lock: while it runs, the steps and the
 * headroom do not change (add is refused while following, and stop joins
 * it before it forgets them), and the rest it shares is atomic.  The
 * write path touches only an atomic and the eventfd.
 */
#ifndef CSWAP_LADDER_FOLLOW_H
#define CSWAP_LADDER_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

#include "control.h"
#include "store.h"

/* Most steps (the kernel allows fewer than 32 swap areas in all). */
#define LADDER_MAX_STEPS 32
/* Written bytes between two looks at /proc/swaps, at the most. */
#define LADDER_WAKE_BYTES (UINT64_C (1) << 20)
/* The longest the follower sleeps when nothing is written. */
#define LADDER_IDLE_MS 1000
/* How long a step whose swapon or swapoff failed is left alone. */
#define LADDER_REST_MS 10000

struct ladder;

/* A follower for the device file SWAP_FILE (its path with symbolic links
 * resolved) of STORE, or for STORE's window exports when SWAP_FILE is
 * NULL; idle until handed a ladder.  NULL with errno set.
 */
extern struct ladder *ladder_create (const char *swap_file,
                                     struct store *store);
/* The `ladder` command and the ladder_* numbers, for control_extend. */
extern const struct control_extension *
ladder_control_extension (struct ladder *ladder);
/* A daemon that adopted a killed one's store (cswap-ublk taking its
 * devices over): follows again what that daemon was handed, as it
 * recorded it in the store (ladder-record.h).  Call it once the devices
 * serve: each step's header is read through them.  The number of steps
 * followed, 0 where there is nothing to follow again (no record: the
 * ladder was never handed over, was stopped, or its follower stood
 * aside), or -1 with the reason in ERROR (nothing followed).
 */
extern int ladder_resume (struct ladder *ladder, char *error, size_t size);
/* From the write path: BYTES were written to the device.  LADDER may be
 * NULL.  Costs an atomic addition, and a write to an eventfd once per
 * LADDER_WAKE_BYTES while following.
 */
extern void ladder_note_write (struct ladder *ladder, uint64_t bytes);
/* Stops following, for good: later commands are refused.  Call it while
 * the request threads still serve (a swapon in flight reads through
 * them); it waits for the follower a few seconds at most.  LADDER may be
 * NULL.
 */
extern void ladder_shut (struct ladder *ladder);
/* Frees LADDER (NULL: nothing) once no control command can run. */
extern void ladder_destroy (struct ladder *ladder);

#endif /* CSWAP_LADDER_FOLLOW_H */
