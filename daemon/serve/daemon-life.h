/* cswap: a daemon's start-up and shutdown, one path for both front ends.
 *
 * The nbdkit plugin and cswap-fuse bring the device up in the same steps
 * and take it down in reverse; only where each step runs differs:
 *
 *   daemon_prepare             before the front end forks, so that an
 *                              error still reaches the user's terminal:
 *     no core dumps unless core-dump=yes (before the store holds
 *     anything: the child of the fork inherits it), the store, the
 *     control socket (made and bound, not yet served)
 *   -- the fork: nbdkit's after .get_ready, cswap-fuse's fuse_daemonize()
 *   daemon_start_after_fork    threads and memory locks do not survive a
 *                              fork, so they come after it:
 *     memory locked (lock-memory=yes; a failure is a warning), the store's
 *     background threads and its key's page locked again, the control
 *     thread, READY=1 and the notify thread (service-notify.h)
 *   -- serving
 *   daemon_stop                once nothing serves the device any more:
 *     STOPPING=1 and the notify thread, the control thread and socket,
 *     the stats line (stats-line.h), the store
 *
 * nbdkit calls them from .get_ready, .after_fork and .unload; cswap-fuse
 * from main(), around its mount and transport, which stay its own, as do
 * the options (nbdkit's .config, cswap-fuse's command line).
 *
 * Locking: none.  Each runs on the front end's main thread, the first
 * two before any thread of the daemon's exists, daemon_stop after the
 * serving threads are gone.
 */
#ifndef CSWAP_DAEMON_LIFE_H
#define CSWAP_DAEMON_LIFE_H

#include "control.h"
#include "memory-safety.h"
#include "options.h"
#include "store.h"

struct daemon_life {
  /* Set by the front end before daemon_prepare. */
  const char *name;             /* "cswap", "cswap-fuse": warnings' prefix
                                   and the control socket's default name */
  /* Reports why a step failed: one line, without the newline (the
   * plugin's is nbdkit_error).  NULL: "NAME: message" on stderr, as
   * cswap-fuse and cswap-ublk say their errors.
   */
  void (*error) (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
  bool tls_possible;            /* nbdkit without --tls=off: its TLS
                                   libraries are locked whole */

  /* Set by daemon_prepare, cleared by daemon_stop. */
  const struct cswap_options *options;
  struct store *store;          /* NULL: not made (yet) */
  struct control_server *control; /* NULL: no control socket */
};

/* Returns 0, or -1 after reporting why; daemon_stop undoes what was done
 * either way.  OPTIONS must outlive LIFE.
 */
extern int daemon_prepare (struct daemon_life *life,
                           const struct cswap_options *options);
/* Returns 0, or -1 after reporting why. */
extern int daemon_start_after_fork (struct daemon_life *life);
/* What the daemon serving OPTIONS runs under pressure (memory-safety.h),
 * TLS_POSSIBLE where nbdkit may speak TLS: what daemon_start_after_fork
 * locks, and what cswap-ublk's standby locks before it is needed.
 */
extern struct io_path daemon_io_path (const struct cswap_options *options,
                                      bool tls_possible);
/* Undoes whatever of the two above ran; safe after neither. */
extern void daemon_stop (struct daemon_life *life);

#endif /* CSWAP_DAEMON_LIFE_H */
