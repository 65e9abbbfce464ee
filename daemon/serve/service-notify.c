/* cswap: sd_notify READY/STATUS/WATCHDOG (see service-notify.h).
 *
 * One thread, started only under systemd, wakes every
 * min(STATUS_INTERVAL_S, WATCHDOG_USEC / 2) and:
 *   - reads page 0 through the store (the swap header; any page would do)
 *     into a buffer allocated once, and sends WATCHDOG=1 only if that
 *     succeeded: the ping then proves the slot locks, the codec and the
 *     allocator still answer, not just that a thread is alive;
 *   - every STATUS_INTERVAL_S, sends STATUS= with the stats.
 * The thread is on the control side: no PR_SET_IO_FLUSHER, all signals
 * blocked (they belong to the front end's main thread), and nothing
 * allocated after start.
 *
 * Whether a hung store should be killed is the unit's choice
 * (WatchdogSec=, off in cswap.service: killing the daemon of an active
 * swap device sends SIGBUS to every process with a page on it).
 *
 * Locking: `lock` guards `stopping`; `cond` wakes the thread to stop.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "page.h"
#include "service-notify.h"

#define STATUS_INTERVAL_S 10

static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool running, stopping;       /* stopping: protected by lock */
  pthread_t thread;
  struct store *store;
  uint64_t watchdog_usec;       /* 0: no watchdog */
  unsigned char page[CSWAP_PAGE_SIZE];
} notify = {
  .lock = PTHREAD_MUTEX_INITIALIZER,
};

static void
send_status (struct store *store)
{
  struct store_stats s;
  uint64_t memory_bytes;
  double ratio;

  store_stats (store, &s);
  memory_bytes = s.pool_bytes + s.metadata_bytes;
  ratio = memory_bytes ? (double) s.original_bytes / memory_bytes : 0;
  sd_notifyf (0, "STATUS=%llu pages (%.1f MiB) in %.1f MiB of memory, "
              "ratio %.2f; %llu pages on the backing file",
              (unsigned long long) s.pages_stored,
              s.original_bytes / 1048576.0, memory_bytes / 1048576.0, ratio,
              (unsigned long long) s.tiered_pages);
}

static void *
notify_thread (void *arg)
{
  uint64_t period_usec = STATUS_INTERVAL_S * UINT64_C (1000000);
  struct timespec deadline, last_status = { 0 }, now;
  bool stopping = false;

  (void) arg;
  if (notify.watchdog_usec && notify.watchdog_usec / 2 < period_usec)
    period_usec = notify.watchdog_usec / 2;
  while (!stopping) {
    clock_gettime (CLOCK_MONOTONIC, &now);
    if (notify.watchdog_usec
        && store_read (notify.store, notify.page, CSWAP_PAGE_SIZE, 0) == 0)
      sd_notify (0, "WATCHDOG=1");
    if (now.tv_sec - last_status.tv_sec >= STATUS_INTERVAL_S) {
      send_status (notify.store);
      last_status = now;
    }

    deadline = now;
    deadline.tv_sec += period_usec / 1000000;
    deadline.tv_nsec += (period_usec % 1000000) * 1000;
    if (deadline.tv_nsec >= 1000000000) {
      deadline.tv_sec++;
      deadline.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock (&notify.lock);
    while (!notify.stopping
           && pthread_cond_timedwait (&notify.cond, &notify.lock,
                                      &deadline) != ETIMEDOUT)
      ;
    stopping = notify.stopping;
    pthread_mutex_unlock (&notify.lock);
  }
  return NULL;
}

int
service_notify_start (struct store *store)
{
  pthread_condattr_t attr;
  sigset_t all, old;
  int err;

  if (getenv ("NOTIFY_SOCKET") == NULL)
    return 0;
  sd_notify (0, "READY=1");
  if (sd_watchdog_enabled (0, &notify.watchdog_usec) <= 0)
    notify.watchdog_usec = 0;

  notify.store = store;
  notify.stopping = false;
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (&notify.cond, &attr);
  pthread_condattr_destroy (&attr);
  /* The thread inherits this mask: it never takes SIGTERM or SIGINT from
   * the front end's main thread.
   */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  err = pthread_create (&notify.thread, NULL, notify_thread, NULL);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (err) {
    pthread_cond_destroy (&notify.cond);
    errno = err;
    return -1;
  }
  notify.running = true;
  return 0;
}

void
service_notify_stop (void)
{
  if (!notify.running)
    return;
  sd_notify (0, "STOPPING=1");
  pthread_mutex_lock (&notify.lock);
  notify.stopping = true;
  pthread_cond_signal (&notify.cond);
  pthread_mutex_unlock (&notify.lock);
  pthread_join (notify.thread, NULL);
  pthread_cond_destroy (&notify.cond);
  notify.running = false;
}
