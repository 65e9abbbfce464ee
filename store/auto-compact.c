/* cswap: automatic compaction — the pool follows its data with no command.
 *
 * Frees leave holes in zspages: after a program's swap is discarded the
 * pool of the quickstart device held 183-192 MiB for 37-50 MiB of data,
 * and stayed so until someone typed `cswapctl compact`.  The kernel
 * compacts zram's pool from its shrinker whenever the machine needs
 * memory; a userspace daemon gets the same signal from PSI.  So a thread
 * compacts:
 *
 *   - when what compaction could free (the allocator's per-class
 *     pages_freeable) reaches compact-threshold percent of the pool and
 *     at least AUTO_MIN_FREEABLE_PAGES, checked every second: this is what
 *     follows large trims;
 *   - when the kernel reports memory pressure (a PSI trigger on
 *     /proc/pressure/memory, some 150 ms of stall in 2 s) and at least
 *     PRESSURE_MIN_FREEABLE_PAGES can be freed: PSI is machine-wide, and
 *     the floor keeps other groups' events from costing a pass for
 *     nothing (tests/daemon/test-psi-compact.sh fires it for real);
 *   - when writeback asks (auto_compact_soon), after its batches freed
 *     objects: the writeback thread then goes on writing batches, so a
 *     write waiting for room never waits for a compaction.
 *
 * With auto-compaction off (threshold 0) the thread still serves
 * writeback's requests, and nothing else.
 *
 * CPU is bounded: at most one compaction a second for the timer, one at a
 * time (the allocator's single flight), and each takes its locks in short
 * steps.  Where PSI is missing or refuses the trigger, the timer alone runs.
 *
 * Every other compaction (store_compact, writeback's when this thread is
 * not running) goes through auto_compact_run too: the store compacts in
 * this one place.
 *
 * Threads: this one thread; it takes no lock of the store's beyond what
 * zs_class_stats and zs_compact take.  Its own state is read by
 * store_stats and auto_compact_soon through atomics.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "auto-compact.h"
#include "counter.h"

#define AUTO_PERIOD_MS 1000
#define AUTO_MIN_FREEABLE_PAGES 256     /* 1 MiB: less is not worth a pass */
#define PRESSURE_MIN_FREEABLE_PAGES 16
#define PSI_PATH "/proc/pressure/memory"
/* 150 ms of stall in 2 s.  Without CAP_SYS_RESOURCE (this daemon often
 * runs so) the kernel takes only windows in whole multiples of 2 s.
 */
#define PSI_TRIGGER "some 150000 2000000"

struct auto_compact {
  struct zs_pool *pool;         /* set at creation */
  unsigned threshold_percent;   /* set at creation; 0: only writeback's */
  int stop_fd;                  /* set at creation: an eventfd, written
                                   to stop the thread */
  int request_fd;               /* set at creation: an eventfd, writeback
                                   asks to compact */
  /* The PSI trigger: opened by the thread itself (auto_compact_thread
   * says why), closed by the stopping thread once it has joined; read by
   * store_stats meanwhile.  -1: none (yet), the timer alone.
   */
  atomic_int psi_fd;
  atomic_bool running;          /* atomic; written by start and stop */
  pthread_t thread;             /* start's and stop's */
  atomic_uint_fast64_t runs, pressure_runs, last_run_unix;  /* atomics */
};

struct auto_compact *
auto_compact_create (const struct auto_compact_config *config)
{
  struct auto_compact *a = calloc (1, sizeof *a);

  if (a == NULL)
    return NULL;
  a->pool = config->pool;
  a->threshold_percent = config->threshold_percent;
  a->psi_fd = -1;
  a->stop_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  a->request_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (a->stop_fd == -1 || a->request_fd == -1) {
    auto_compact_destroy (a);
    return NULL;
  }
  return a;
}

void
auto_compact_destroy (struct auto_compact *a)
{
  if (a == NULL)
    return;
  auto_compact_stop (a);
  if (a->stop_fd != -1)
    close (a->stop_fd);
  if (a->request_fd != -1)
    close (a->request_fd);
  free (a);
}

static uint64_t
pool_pages_freeable (struct zs_pool *pool)
{
  uint64_t freeable = 0;

  for (unsigned i = 0; i < zs_class_count (pool); i++) {
    struct zs_class_stats cs;
    zs_class_stats (pool, i, &cs);
    freeable += cs.pages_freeable;
  }
  return freeable;
}

/* Compacts, counting the run in COUNTER (NULL: writeback's, uncounted). */
static void
compact_now (struct auto_compact *a, atomic_uint_fast64_t *counter)
{
  struct zs_compact_result result;

  if (auto_compact_run (a, &result) < 0 || counter == NULL)
    return;                     /* another compaction is running */
  counter_add (counter, 1);
  atomic_store_explicit (&a->last_run_unix, (uint64_t) time (NULL),
                         memory_order_relaxed);
}

/* A PSI trigger for memory stalls, or -1 where the kernel has none. */
static int
open_psi_trigger (void)
{
  int fd = open (PSI_PATH, O_RDWR | O_NONBLOCK | O_CLOEXEC);

  if (fd == -1)
    return -1;
  if (write (fd, PSI_TRIGGER, strlen (PSI_TRIGGER) + 1) == -1) {
    close (fd);
    return -1;
  }
  return fd;
}

static void *
auto_compact_thread (void *opaque)
{
  struct auto_compact *a = opaque;
  struct zs_pool *pool = a->pool;
  uint64_t requests;

  /* The trigger is opened here, not by the thread that starts this one.
   * The machine's first PSI trigger makes the kernel start its poller
   * thread (psimon) through kthreadd, and kthreadd allocates like any
   * task: under pressure it reclaims, and reclaim writes swap to this
   * daemon's devices.  A daemon taking a killed one's devices over starts
   * this thread before its queues serve: the killed daemon's triggers
   * went with it, psimon with them, so the trigger needs a new psimon,
   * and kthreadd waited in swap writes to the devices being taken over
   * (measured: a standby's main thread in psi_trigger_create, kthreadd in
   * wbt_wait, the machine hung).  Here only compaction on pressure waits
   * for the devices to serve; the timer and writeback's requests wait
   * with it, and nothing on the way to serving does.
   */
  if (a->threshold_percent)
    atomic_store (&a->psi_fd, open_psi_trigger ());

  int psi_fd = atomic_load (&a->psi_fd);
  struct pollfd fds[3] = {
    { .fd = a->stop_fd, .events = POLLIN },
    { .fd = a->request_fd, .events = POLLIN },
    { .fd = psi_fd, .events = POLLPRI },
  };

  for (;;) {
    int n = poll (fds, psi_fd == -1 ? 2 : 3, AUTO_PERIOD_MS);
    if (n == -1 && errno != EINTR)
      break;
    if (fds[0].revents)
      break;
    if (fds[1].revents && read (a->request_fd, &requests, sizeof requests) > 0)
      compact_now (a, NULL);
    if (a->threshold_percent == 0)
      continue;                 /* off: writeback's requests only */
    bool pressure = psi_fd != -1 && (fds[2].revents & POLLPRI);
    if (fds[2].revents & (POLLERR | POLLHUP | POLLNVAL))
      fds[2].fd = -1;           /* the trigger is gone: the timer goes on */
    uint64_t freeable = pool_pages_freeable (pool);
    uint64_t pages = zs_pool_pages_used (pool);
    if (pressure ? freeable >= PRESSURE_MIN_FREEABLE_PAGES
        : freeable >= AUTO_MIN_FREEABLE_PAGES
          && freeable * 100 >= pages * a->threshold_percent)
      compact_now (a, pressure ? &a->pressure_runs : &a->runs);
  }
  return NULL;
}

int
auto_compact_start (struct auto_compact *a)
{
  if (a == NULL || a->running)
    return 0;
  int r = -pthread_create (&a->thread, NULL, auto_compact_thread, a);
  if (r)
    return r;
  a->running = true;
  return 0;
}

void
auto_compact_stop (struct auto_compact *a)
{
  uint64_t one = 1, drain;

  if (a == NULL || !a->running)
    return;
  if (write (a->stop_fd, &one, sizeof one) != sizeof one)
    abort ();                   /* an eventfd write of 1 cannot fail */
  pthread_join (a->thread, NULL);
  if (read (a->stop_fd, &drain, sizeof drain) == -1)
    drain = 0;                  /* already empty: nothing to undo */
  int psi_fd = atomic_exchange (&a->psi_fd, -1);
  if (psi_fd != -1)
    close (psi_fd);
  a->running = false;
}

int
auto_compact_run (struct auto_compact *a, struct zs_compact_result *result)
{
  return zs_compact (a->pool, result) == 0 ? 0 : -errno;
}

void
auto_compact_soon (struct auto_compact *a)
{
  uint64_t one = 1;
  struct zs_compact_result result;

  if (!atomic_load (&a->running)) {
    auto_compact_run (a, &result);
    return;
  }
  if (write (a->request_fd, &one, sizeof one) != sizeof one)
    abort ();                   /* an eventfd write of 1 cannot fail */
}

void
auto_compact_stats (struct auto_compact *a, struct store_stats *s)
{
  if (a->threshold_percent == 0)
    return;
  s->auto_compactions = atomic_load_explicit (&a->runs, memory_order_relaxed);
  s->pressure_compactions = atomic_load_explicit (&a->pressure_runs,
                                                  memory_order_relaxed);
  s->last_auto_compaction_time_seconds
    = atomic_load_explicit (&a->last_run_unix, memory_order_relaxed);
  s->psi_trigger = atomic_load (&a->running)
                   && atomic_load (&a->psi_fd) != -1;
}
