/* cswap: what cswap-fuse does on SIGHUP, SIGINT and SIGTERM.
 *
 * A daemon whose device is swap must not die of a signal: every page the
 * kernel swapped to it would be lost, and the processes that own them
 * killed with SIGBUS.  So, in place of libfuse's handlers (which end the
 * session on all three):
 *   SIGHUP           logged and ignored: cswap-fuse has nothing to reload
 *                    (settings change through cswapctl), and a closed
 *                    terminal is no reason to stop;
 *   SIGINT, SIGTERM  end the session, unless the device file is swap
 *                    (swap-users.h): then they are refused, with a line
 *                    that names the device, and the daemon serves on;
 *   SIGPIPE          ignored, as libfuse does.
 * SIGKILL still kills, for whoever means it.
 */
#ifndef CSWAP_STOP_SIGNALS_H
#define CSWAP_STOP_SIGNALS_H

#include <signal.h>

struct fuse_session;             /* libfuse's */

/* Installs the handlers for SESSION, whose device file is SWAP_FILE (an
 * absolute path without symbolic links, as the kernel writes a loop
 * device's backing file).  Returns 0, or -1 with a message on stderr.
 */
extern int stop_signals_install (struct fuse_session *session,
                                 const char *swap_file);

/* Holds all three back while libfuse mounts or unmounts: as root in a
 * mount namespace of its own, or unprivileged, libfuse runs fusermount3
 * and waits for it, and a signal taking that wait (the handlers have no
 * SA_RESTART) fails the mount: a SIGTERM sent as the mount appeared made
 * the daemon exit 1, seen 2 runs in 5 in the Debian 13 chroot.  Held
 * back, it is handled once the mount is done.  Sets *SAVED to restore.
 */
extern void stop_signals_hold (sigset_t *saved);
extern void stop_signals_release (const sigset_t *saved);

/* On the way out: ignores all three from now on (a supervisor that saw
 * the unmount and signals the PID too would otherwise kill the process
 * before it prints its exit stats).
 */
extern void stop_signals_ignore (void);

#endif /* CSWAP_STOP_SIGNALS_H */
