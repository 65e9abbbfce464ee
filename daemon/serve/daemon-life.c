/* cswap: a daemon's start-up and shutdown (see daemon-life.h).
 *
 * The order is the point of this file.  Core dumps are forbidden before
 * the store exists, because making it draws the backing file's key.  The
 * control socket is bound before the fork, so that a path nobody may use
 * fails the start; its thread starts after.  Memory is locked after the
 * fork (a child inherits no locks) and before the first thread, which
 * inherits the I/O-flusher mark (memory-safety.h).  The message drain
 * (daemon-log.h) starts before any thread that serves or speaks while the
 * device serves, and stops after the last.  READY=1 goes last:
 * by then the device serves.  Stopping runs the other way.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "daemon-life.h"
#include "daemon-log.h"
#include "memory-safety.h"
#include "program-message.h"
#include "service-notify.h"
#include "stats-line.h"

/* Says why a step failed: through LIFE's reporter, or, without one,
 * "NAME: message" on stderr.
 */
__attribute__ ((format (printf, 2, 3)))
static void
report (const struct daemon_life *life, const char *fmt, ...)
{
  char message[512];
  va_list ap;

  va_start (ap, fmt);
  if (life->error == NULL)
    program_message_v (life->name, fmt, ap);
  else
    vsnprintf (message, sizeof message, fmt, ap);
  va_end (ap);
  if (life->error)
    life->error ("%s", message);
}

int
daemon_prepare (struct daemon_life *life, const struct cswap_options *options)
{
  const char *warning, *why;

  /* The refill thread faults in the pool's pages for the request
   * threads: it needs their priority under pressure (memory-safety.h).
   */
  struct store_config store_config = options->store;
  store_config.refill_thread_init = memory_safety_mark_io_thread;

  life->options = options;
  if (!options->core_dump)
    memory_safety_forbid_core_dumps ();
  life->store = store_create (&store_config);
  if (life->store == NULL) {
    report (life, "creating the store: %s", store_create_error ());
    return -1;
  }
  if (control_server_open (&options->ctl, life->name, life->store,
                           &life->control, &warning, &why) == -1) {
    report (life, "%s", why);
    return -1;
  }
  if (warning)
    fprintf (stderr, "%s: warning: %s\n", life->name, warning);
  return 0;
}

int
daemon_start_after_fork (struct daemon_life *life)
{
  int r;

  /* Failing to lock is a warning, not a reason to serve nothing. */
  if (life->options->lock_memory) {
    struct io_path io_path = daemon_io_path (life->options,
                                             life->tls_possible);
    memory_safety_setup (&io_path);
  }
  /* Before the first thread that may serve I/O or say something while
   * it does: from here on, messages go through the drain (daemon-log.h).
   */
  r = daemon_log_start (life->name);
  if (r) {
    report (life, "starting the message thread: %s", strerror (r));
    return -1;
  }
  r = store_start_background (life->store);
  if (r) {
    report (life, "starting the store's threads, locking its key: %s",
            strerror (-r));
    return -1;
  }
  if (control_server_start (life->control) == -1) {
    report (life, "starting the control thread: %s", strerror (errno));
    return -1;
  }
  /* Under systemd: READY=1, then STATUS= and WATCHDOG=1 from a thread. */
  if (service_notify_start (life->store) == -1) {
    report (life, "starting the notify thread: %s", strerror (errno));
    return -1;
  }
  return 0;
}

struct io_path
daemon_io_path (const struct cswap_options *options, bool tls_possible)
{
  const struct store_config *store = &options->store;

  return (struct io_path) {
    .sealing = store->backing_path && !store->backing_in_clear,
    .tls = tls_possible,
  };
}

void
daemon_stop (struct daemon_life *life)
{
  service_notify_stop ();
  control_server_stop (life->control);
  life->control = NULL;
  /* Every thread that serves or says something meanwhile has stopped:
   * what they said is written out, and stderr is written at once again.
   */
  daemon_log_stop ();
  if (life->store) {
    /* One greppable line at exit, so that a script that stops the
     * daemon can still see what was held at the end.
     */
    stats_line_print (stderr, life->store);
    store_destroy (life->store);
    life->store = NULL;
  }
  life->options = NULL;
}
