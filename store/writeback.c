/* cswap: writeback — the writer thread and its policy: what to write,
 * when, and how much.  Cold pages leave the pool for the backing file
 * (tier/) in batches; which pages, and the batches' loop, is
 * writeback-select.c's, a batch writeback-batch.c's, the disk cleaner
 * writeback-clean.c's, the writers' wait for a batch writeback-room.c's,
 * the limit and threshold pool-limit.c's.
 *
 * Pool limit with hysteresis: a write that finds the pool at its limit
 * notes how many batches have completed, wakes the writer thread and
 * waits for one more batch to complete, then tries again: colder pages go
 * to disk before it installs its own, so it never goes ahead of them.  It
 * waits for a batch, never for a compaction, a whole sweep or the
 * cleaner's loop: every batch, whoever wrote it, ends the wait of every
 * writer who asked before it.  The writer thread keeps going while
 * writers wait or the pool is above the accept threshold.  When
 * writeback cannot make room (the backing file full or failing, nothing
 * left to write) the write gets ENOSPC, and so it does when no batch
 * completes within ROOM_WAIT_MS (below): a writer never waits for
 * writeback without bound.
 *
 * Waiting is the exception: the writer thread starts at the start
 * watermark (pool-limit.c, below the limit), woken by the write that
 * finds the pool there (writeback_wake_early), with no one waiting, and
 * goes on down to the accept threshold.  Freeing objects leaves holes
 * in zspages, so batches are followed by compaction while the pool stays
 * above the threshold; the writer thread hands it to the compaction
 * thread (auto-compact.c) and goes on writing.  Without the background
 * threads, a write makes room itself: a batch, and compaction if the pool
 * is still at its limit.
 *
 * Pages the kernel has read back (writeback-reads.c) are judged every
 * read-writeback wait, and those untouched since go out.
 *
 * Every batch, on every path, starts only if the writeback budget
 * (writeback-budget.c) allows it; a spent budget stops writeback like a
 * full backing file: writers that need room get ENOSPC once compaction
 * cannot make any, and never wait for the budget to refill.
 *
 * Ageing: every idle-writeback/3 seconds the thread ages the pages in
 * memory, serving writers that wait for room between chunks, and with
 * idle writeback on, writes out those that reached the top age.
 *
 * Locks: the writeback mutex and the wake lock (writeback-internal.h);
 * lock order: lock-order.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "monotonic.h"
#include "page.h"
#include "writeback-internal.h"

#define COMPACT_EVERY_BATCHES 8

/* How long a write at the pool's limit waits for writeback to make room
 * before it is refused with ENOSPC (the kernel keeps the page dirty and
 * tries again later, as at a full pool).  Why a bound at all: the thread
 * that waits serves a request, and on a ublk or nbd device the kernel's
 * swap-out bio is held until it answers.  The batch's own write to the
 * backing file (O_DIRECT, on a block device) needs a bio from the same
 * kernel mempools (fs_bio_set); when every queue thread waits, holding
 * theirs, the batch can wait for one forever, and with it kswapd and the
 * journal (the VM's "deadlock B", 6.12, ext4 on virtio).  Refused, the
 * requests complete, their bios come back, and the batch goes on.
 * Why 1 s: a batch is at most STORE_MAX_WRITEBACK_BATCH pages compressed,
 * 1 MiB at most, which a healthy disk writes in milliseconds and even a
 * slow HDD or an emulated disk in well under a second, together with the
 * cleaner's copies before it; so a healthy batch ends the wait long
 * before.  And a second is short next to what the kernel tolerates for
 * held I/O (hung-task warnings at 120 s, block timeouts at 30 s): the
 * bios come back while reclaim can still make progress.
 */
#define ROOM_WAIT_MS 1000
#define EMPTY_PASSES_BEFORE_REFUSAL 3

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

/* Compaction, so that freed objects become free pool pages: by the
 * compaction thread when it runs, else here.  Mutex held.
 */
static void
compact_pool (struct writeback *wb)
{
  lock_assert_held (&wb->mutex);
  auto_compact_soon (wb->compactor);
  wb->batches_since_compact = 0;
}

/* Pressure: a batch of the pages PICK takes (CLOCK: the cold ones) among
 * the slots [FIRST, END) (END 0: the whole table) from *HAND on, and
 * compaction now and then.  Mutex held.  Returns the pages that left
 * memory, or a negative errno when none did because of an error.
 */
static int
pressure_batch (struct writeback *wb, enum slot_pick pick, uint64_t first,
                uint64_t end, uint64_t *hand)
{
  struct slot_selection sel = { .pick = pick, .include_huge = true,
                                .first = first, .end = end };
  uint64_t slots = end ? end - first : wb->slots->table.slots;
  /* Two laps of the range: a second chance. */
  struct writeback_source src = { .sel = &sel, .cursor = hand,
                                  .budget = 2 * slots };
  unsigned max = atomic_load_explicit (&wb->batch_pages, memory_order_relaxed);
  struct store_writeback_result done = { 0 };
  int r = writeback_run_batch (wb, &src, max, &done);

  if (done.pages_written > 0
      && (wb->batches_since_compact >= COMPACT_EVERY_BATCHES
          || pool_limit_reached (wb->limit)))
    compact_pool (wb);
  return done.pages_written > 0 ? (int) done.pages_written : r;
}

/* The pick of a pressure pass after EMPTY_PASSES that moved nothing:
 * CLOCK found nothing when pages touched between its two laps have their
 * bits clear now, so it looks again.  But threads that touch pages
 * faster than the hand laps the table can keep every page from it, and
 * "nothing left to write" must mean exactly that before a writer is
 * refused: the last pass takes any page in memory, cold or not.
 */
static enum slot_pick
pass_pick (unsigned empty_passes)
{
  return empty_passes + 1 < EMPTY_PASSES_BEFORE_REFUSAL
         ? SLOT_PICK_CLOCK : SLOT_PICK_ALL;
}

/* No writer thread: the write makes room itself. */
static int
make_room_here (struct writeback *wb, unsigned needed_pages)
{
  int r = -ENOSPC;

  writeback_lock (wb);
  if (pool_limit_has_room (wb->limit, needed_pages)
      || (!writeback_in_backoff (wb)
          && pressure_batch (wb, SLOT_PICK_CLOCK, 0, 0, &wb->hand) > 0))
    r = 0;
  writeback_unlock (wb);
  return r;
}

int
writeback_make_room (struct writeback *wb, unsigned needed_pages,
                     uint64_t *deadline_ns)
{
  counter_add (&wb->count->writes_waited, 1);
  if (pool_limit_has_room (wb->limit, needed_pages))
    return 0;
  if (*deadline_ns == 0)
    *deadline_ns = monotonic_ns () + ROOM_WAIT_MS * 1000000ull;
  int r = writeback_wait_for_batch (wb, *deadline_ns);
  if (r == -ETIMEDOUT) {
    counter_add (&wb->count->room_waits_expired, 1);
    return -ENOSPC;
  }
  return r == -ESRCH ? make_room_here (wb, needed_pages) : r;
}

void
writeback_wake_early (struct writeback *wb)
{
  if (wb && pool_limit_writeback_due (wb->limit))
    writeback_kick (wb);
}

int
writeback_make_area_room (struct writeback *wb, uint64_t first, uint64_t end,
                          uint64_t *hand, bool (*room) (void *arg), void *arg)
{
  unsigned empty_passes = 0;
  bool fits;

  counter_add (&wb->count->writes_waited, 1);
  writeback_lock (wb);
  while (!(fits = room (arg)) && !writeback_in_backoff (wb)) {
    if (pressure_batch (wb, pass_pick (empty_passes), first, end, hand) > 0)
      empty_passes = 0;
    else if (++empty_passes == EMPTY_PASSES_BEFORE_REFUSAL)
      break;
  }
  writeback_unlock (wb);
  return fits ? 0 : -EDQUOT;
}

/* Compacts the pool before a writer is refused.  A compaction already
 * running (the automatic one, a command's) makes zs_compact return EBUSY
 * at once, and a refusal then would judge a pool that compaction has not
 * finished with: a write refused with room about to be made (seen in
 * test-tier as 3 writes refused in a run, under load).  So wait for it,
 * and compact again.
 */
static void
compact_before_refusal (struct writeback *wb)
{
  static const struct timespec pause = { 0, 100 * 1000 };      /* 100 us */
  struct zs_compact_result compacted;

  while (auto_compact_run (wb->compactor, &compacted) == -EBUSY)
    nanosleep (&pause, NULL);
}

/* Background: batches while writers wait for room, and from the start
 * watermark down to the accept threshold.
 */
static void
relieve_pressure (struct writeback *wb)
{
  bool stop, waiting = writeback_writers_waiting (wb, &stop);
  unsigned empty_passes = 0;

  if (!waiting && !pool_limit_writeback_due (wb->limit))
    return;
  while (!stop) {
    /* The limit may be lifted (set to 0: no limit) meanwhile: then there
     * is no threshold to reach, and no writer needs room.
     */
    if (pool_limit_bytes (wb->limit) == 0) {
      if (waiting)
        writeback_post_batch (wb, 0);
      break;
    }
    if (!waiting && !pool_limit_above_threshold (wb->limit))
      break;
    writeback_lock (wb);
    int moved = writeback_in_backoff (wb) ? -EAGAIN
                : pressure_batch (wb, pass_pick (empty_passes), 0, 0,
                                  &wb->hand);
    writeback_unlock (wb);
    waiting = writeback_writers_waiting (wb, &stop);
    if (moved > 0) {
      empty_passes = 0;
      continue;
    }
    if (moved == 0 && ++empty_passes < EMPTY_PASSES_BEFORE_REFUSAL)
      continue;
    /* Nothing (more) to write, or it cannot be written.  Another batch
     * or a trim may have made room meanwhile (the pool was seen empty
     * here), or holes in zspages hold it: the writers are refused only
     * if, compacted, the pool still has no room for a zspage of any
     * class.
     */
    if (waiting) {
      compact_before_refusal (wb);
      writeback_post_batch (wb, pool_limit_has_room (wb->limit,
                                                     ZS_MAX_PAGES_PER_ZSPAGE)
                                ? 0 : -ENOSPC);
    }
    break;
  }
  writeback_lock (wb);
  compact_pool (wb);
  writeback_unlock (wb);
}

/* Advances the idle age of every page in memory, serving writers that
 * wait for room between chunks.
 */
static void
age_sweep (struct writeback *wb)
{
  uint64_t slots = wb->slots->table.slots;

  for (uint64_t slot = 0; slot < slots; slot += SLOTS_PER_CHUNK) {
    bool stop;
    if (writeback_writers_waiting (wb, &stop))
      relieve_pressure (wb);
    if (stop)
      return;
    writeback_age_chunk (wb, slot);
  }
}

/* Writes back what SEL picks, one sweep of the table, at most MAX_PAGES
 * (0: all).
 */
static int
sweep_writeback (struct writeback *wb, const struct slot_selection *sel,
                 uint64_t max_pages, struct store_writeback_result *result)
{
  uint64_t cursor = 0;
  struct writeback_source src = { .sel = sel, .cursor = &cursor,
                                  .budget = wb->slots->table.slots };

  return writeback_run_batches (wb, &src, max_pages, result);
}

static void *
writer_thread (void *opaque)
{
  struct writeback *wb = opaque;
  uint64_t next_age_ns = monotonic_ns () + writeback_age_period_s (wb) * 1000000000ull;

  /* The writer frees memory for the kernel's reclaim: let it dip into the
   * reserves as an I/O flusher (needs CAP_SYS_RESOURCE; fine without).
   */
  prctl (PR_SET_IO_FLUSHER, 1, 0, 0, 0);
  wake_lock (wb);
  while (!wb->stop) {
    if (!wb->kicked) {
      uint64_t until = monotonic_ns () + 1000000000ull;   /* check the pool each second */
      if (until > next_age_ns)
        until = next_age_ns;
      if (until > writeback_reads_due_ns (wb))
        until = writeback_reads_due_ns (wb);
      struct timespec ts = monotonic_timespec (until);
      pthread_cond_timedwait (&wb->wake, &wb->wake_lock, &ts);
    }
    wb->kicked = false;
    if (wb->stop)
      break;
    wake_unlock (wb);

    relieve_pressure (wb);
    writeback_drain_reads (wb);
    if (monotonic_ns () >= next_age_ns) {
      age_sweep (wb);
      if (atomic_load_explicit (&wb->idle_seconds, memory_order_relaxed)) {
        struct slot_selection sel = { .pick = SLOT_PICK_IDLE,
                                      .min_age = SLOT_AGE_MAX };
        struct store_writeback_result result;
        sweep_writeback (wb, &sel, 0, &result);
      }
      next_age_ns = monotonic_ns () + writeback_age_period_s (wb) * 1000000000ull;
    }
    wake_lock (wb);
  }
  wake_unlock (wb);
  return NULL;
}

struct writeback *
writeback_create (const struct writeback_context *ctx,
                  const struct store_config *config)
{
  struct writeback *wb = calloc (1, sizeof *wb);

  if (wb == NULL)
    return NULL;
  wb->slots = ctx->slots;
  wb->limit = ctx->limit;
  wb->tier = ctx->tier;
  wb->compactor = ctx->compactor;
  wb->count = ctx->count;
  wb->cleaner = writeback_cleaner_create (wb);
  wb->batch = tier_batch_create (STORE_MAX_WRITEBACK_BATCH);
  if (wb->cleaner == NULL || wb->batch == NULL) {
    tier_batch_destroy (wb->batch);
    tier_cleaner_destroy (wb->cleaner);
    free (wb);
    errno = ENOMEM;
    return NULL;
  }
  pthread_mutex_init (&wb->mutex, NULL);
  pthread_mutex_init (&wb->wake_lock, NULL);
  pthread_mutex_init (&wb->budget_lock, NULL);
  monotonic_cond_init (&wb->wake);
  monotonic_cond_init (&wb->room);  /* writers wait with a deadline */
  if (writeback_reads_init (wb, config)) {
    writeback_destroy (wb);
    errno = ENOMEM;
    return NULL;
  }
  if (pool_limit_threshold_init (wb->limit, config->accept_threshold_percent)
      || writeback_settings_init (wb, config)
      || writeback_budget_init (wb, config)) {
    writeback_destroy (wb);
    errno = EINVAL;
    return NULL;
  }
  return wb;
}

void
writeback_destroy (struct writeback *wb)
{
  if (wb == NULL)
    return;
  writeback_stop (wb);
  tier_batch_destroy (wb->batch);
  tier_cleaner_destroy (wb->cleaner);
  writeback_reads_destroy (wb);
  pthread_cond_destroy (&wb->wake);
  pthread_cond_destroy (&wb->room);
  pthread_mutex_destroy (&wb->budget_lock);
  pthread_mutex_destroy (&wb->wake_lock);
  pthread_mutex_destroy (&wb->mutex);
  free (wb);
}

int
writeback_start (struct writeback *wb)
{
  int r = 0;

  if (wb == NULL)
    return 0;
  wake_lock (wb);
  if (!wb->running) {
    wb->stop = false;
    r = -pthread_create (&wb->thread, NULL, writer_thread, wb);
    wb->running = r == 0;
  }
  wake_unlock (wb);
  return r;
}

void
writeback_stop (struct writeback *wb)
{
  if (wb == NULL)
    return;
  wake_lock (wb);
  bool running = wb->running;
  wb->stop = true;
  pthread_cond_signal (&wb->wake);
  pthread_cond_broadcast (&wb->room);
  wake_unlock (wb);
  if (running)
    pthread_join (wb->thread, NULL);
  wake_lock (wb);
  wb->running = false;
  wake_unlock (wb);
}

int
writeback_sweep (struct writeback *wb, unsigned idle_seconds,
                 uint64_t max_pages, bool include_huge,
                 struct store_writeback_result *result)
{
  struct slot_selection sel = {
    .pick = idle_seconds ? SLOT_PICK_IDLE : SLOT_PICK_ALL,
    .include_huge = include_huge };

  if (idle_seconds)
    sel.min_age = writeback_idle_min_age (wb, idle_seconds);
  return sweep_writeback (wb, &sel, max_pages, result);
}
