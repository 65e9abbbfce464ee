/* cswap: export-idle-drop=SECONDS — an export that no client has had open
 * for SECONDS gives its pages back to the pool.
 *
 * Why: a server of many clients' swap outlives its clients, and a client
 * that went away for good (a machine rebuilt, a VM deleted) would
 * otherwise hold its pages for as long as the server runs.  A reconnect
 * within the time finds every page (nbd-exports.h); after it, the export
 * reads as zeros, which a client that swapped to it and is still running
 * cannot tell from its data: so the time should be far longer than any
 * client's reconnect (hours; the default is never).
 *
 * One thread wakes every eighth of the time (at least each second, at
 * most each minute) and drops each export idle that long that still
 * holds pages, saying so on stderr; the idle time is checked again as
 * the drop starts (nbd_exports_drop_if_idle), so that a client that
 * came and went since is not dropped.
 *
 * Locking: lock guards stop, and is held only to wait and to set it;
 * the drop takes the table's claim_lock itself (nbd-exports.h), never
 * under this one.  Both are leaves (common/lock-order.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "monotonic.h"
#include "nbd-exports-idle.h"

#define NS_PER_S 1000000000ull

static struct {
  struct nbd_exports *exports;
  struct store *store;
  pthread_t thread;
  bool running;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  bool stop;                    /* protected by lock */
} idle = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static uint64_t
period_ns (uint64_t idle_s)
{
  uint64_t s = idle_s / 8;

  return (s < 1 ? 1 : s > 60 ? 60 : s) * NS_PER_S;
}

static void
drop_idle_exports (void)
{
  struct nbd_exports *exports = idle.exports;
  unsigned count = exports->count;

  /* Each drop says so on stderr, and so does each failure. */
  for (unsigned i = 0; i < count; i++)
    nbd_exports_drop_if_idle (exports, idle.store, i,
                              exports->idle_drop_s * NS_PER_S);
}

static void *
idle_thread (void *arg)
{
  uint64_t period = period_ns (idle.exports->idle_drop_s);

  (void) arg;
  pthread_mutex_lock (&idle.lock);
  while (!idle.stop) {
    uint64_t deadline = monotonic_ns () + period;
    struct timespec until = { deadline / NS_PER_S, deadline % NS_PER_S };

    pthread_cond_timedwait (&idle.wake, &idle.lock, &until);
    if (idle.stop)
      break;
    pthread_mutex_unlock (&idle.lock);
    drop_idle_exports ();
    pthread_mutex_lock (&idle.lock);
  }
  pthread_mutex_unlock (&idle.lock);
  return NULL;
}

int
nbd_exports_idle_start (struct nbd_exports *exports, struct store *store)
{
  pthread_condattr_t attr;
  int r;

  if (exports->idle_drop_s == 0 || !nbd_exports_active (exports))
    return 0;
  idle.exports = exports;
  idle.store = store;
  idle.stop = false;
  /* Deadlines on the monotonic clock: a clock step must not drop early. */
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_destroy (&idle.wake);
  pthread_cond_init (&idle.wake, &attr);
  pthread_condattr_destroy (&attr);
  r = pthread_create (&idle.thread, NULL, idle_thread, NULL);
  if (r)
    return -r;
  idle.running = true;
  return 0;
}

void
nbd_exports_idle_stop (void)
{
  if (!idle.running)
    return;
  pthread_mutex_lock (&idle.lock);
  idle.stop = true;
  pthread_cond_signal (&idle.wake);
  pthread_mutex_unlock (&idle.lock);
  pthread_join (idle.thread, NULL);
  idle.running = false;
}
