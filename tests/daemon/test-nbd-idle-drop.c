/* cswap: export-idle-drop= never drops an export that a client had open
 * less than the idle time ago (daemon/nbdkit/nbd-exports-idle.c).
 *
 * In <= 0.9 the idle thread checked an export's idle time, then looked
 * at its pages, then dropped it: a client that opened and closed the
 * export in between (a short session) had its pages dropped under it.
 * Here the store is a fake (linked in place of the real one) whose
 * store_area_stats runs such a session on the idle thread's first look:
 * at once if the table's claim_lock is free there (the window is open),
 * else on a thread of its own, which then waits for the lock.  The
 * drop (store_zero) must then find the export idle for the whole time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "monotonic.h"
#include "nbd-exports-idle.h"
#include "nbd-exports.h"
#include "tap.h"

#define NS_PER_S 1000000000ull
#define IDLE_S 1

static struct nbd_exports exports;
static struct {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  bool session_started;         /* protected by lock */
  bool session_done;            /* protected by lock */
  unsigned drops;               /* protected by lock */
  unsigned early_drops;         /* protected by lock: idle less than IDLE_S */
  pthread_t session;
} fake = { .lock = PTHREAD_MUTEX_INITIALIZER,
           .changed = PTHREAD_COND_INITIALIZER };

/* A client opens export "a" and closes it again. */
static void *
run_session (void *arg)
{
  const char *why;
  struct nbd_export *e = nbd_exports_open (&exports, arg, "a", &why);

  if (e)
    nbd_exports_close (&exports, e);
  pthread_mutex_lock (&fake.lock);
  fake.session_done = true;
  pthread_cond_broadcast (&fake.changed);
  pthread_mutex_unlock (&fake.lock);
  return NULL;
}

int
store_area_stats (struct store *store, unsigned area,
                  struct store_area_stats *stats)
{
  bool first;

  *stats = (struct store_area_stats) { .pages_stored = 1 };
  (void) area;
  pthread_mutex_lock (&fake.lock);
  first = !fake.session_started;
  fake.session_started = true;
  pthread_mutex_unlock (&fake.lock);
  if (!first)
    return 0;
  if (pthread_mutex_trylock (&exports.claim_lock) == 0) {
    pthread_mutex_unlock (&exports.claim_lock);
    run_session (store);
  }
  else
    pthread_create (&fake.session, NULL, run_session, store);
  return 0;
}

int
store_zero (struct store *store, uint64_t count, uint64_t offset)
{
  /* dropping is set: no close changes idle_since_ns meanwhile. */
  uint64_t idle_ns = monotonic_ns () - exports.list[0].idle_since_ns;

  (void) store;
  (void) count;
  (void) offset;
  pthread_mutex_lock (&fake.lock);
  fake.drops++;
  fake.early_drops += idle_ns < IDLE_S * NS_PER_S;
  pthread_cond_broadcast (&fake.changed);
  pthread_mutex_unlock (&fake.lock);
  return 0;
}

uint64_t
store_area_size (const struct store *store)
{
  (void) store;
  return 1 << 20;
}

int
store_set_area_limit (struct store *store, unsigned area, uint64_t bytes)
{
  (void) store;
  (void) area;
  (void) bytes;
  return 0;
}

int
main (void)
{
  struct store_config config = { .size_bytes = 1 << 20 };
  struct store *store = (struct store *) &config;     /* never read */
  const char *why = NULL;
  int r;

  nbd_exports_init (&exports);
  r = nbd_exports_config (&exports, "export", "a", &why) == 1
    && nbd_exports_config (&exports, "export-idle-drop", "1", &why) == 1
    && nbd_exports_finish (&exports, &config, &why) == 0
    && nbd_exports_apply (&exports, store) == 0;
  if (!ok (r, "export=a export-idle-drop=%d: %s", IDLE_S, why ? why : "set"))
    return tap_done ();
  nbd_exports_idle_start (&exports, store);

  /* Until the idle thread has dropped "a" once, or for 30 s. */
  uint64_t deadline = monotonic_ns () + 30 * NS_PER_S;
  pthread_mutex_lock (&fake.lock);
  while (fake.drops == 0 && monotonic_ns () < deadline) {
    struct timespec soon;

    clock_gettime (CLOCK_REALTIME, &soon);
    soon.tv_sec += 1;
    pthread_cond_timedwait (&fake.changed, &fake.lock, &soon);
  }
  unsigned drops = fake.drops, early = fake.early_drops;
  bool session = fake.session_started;
  pthread_mutex_unlock (&fake.lock);
  nbd_exports_idle_stop ();
  if (fake.session)
    pthread_join (fake.session, NULL);

  ok (session, "a client opened and closed the export as the idle thread "
      "looked at it");
  ok (drops >= 1, "the idle export was dropped (%u time(s))", drops);
  ok (early == 0, "never less than %d s after a client closed it "
      "(%u drop(s) too early)", IDLE_S, early);
  nbd_exports_free (&exports);
  return tap_done ();
}
