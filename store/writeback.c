/* cswap: writeback — cold pages from the pool to the backing file.
 *
 * Cold is chosen by CLOCK: every access sets a slot's referenced bit; the
 * hand sweeps the slot table, clearing set bits (a second chance) and
 * taking pages whose bit was already clear.  An idle sweep every
 * idle-writeback/3 seconds ages the pages in memory (2 bits, reset by any
 * access); those reaching the top age, idle for about idle-writeback
 * seconds, go out proactively.  Same-filled pages never go to disk (they
 * live in the slot word); raw pages do.
 *
 * A batch: under each chosen slot's lock, copy its compressed object into
 * the tier's aligned batch buffer and set the slot's under-writeback bit;
 * submit the whole batch with one io_uring submission; then, under each
 * slot's lock again, free the pool object only if the bit is still set.
 * Any read, write or trim meanwhile clears it (slot-table.h): such a page
 * stays in memory and its fresh disk copy is freed at once — the race
 * zswap and zram both had to fix, decided here by one flag bit per slot.
 * Compaction may move the object meanwhile; it does not touch the flags,
 * and the bytes on disk are still the page's.
 *
 * Pool limit with hysteresis: a write that finds the pool at its limit
 * notes how many batches have completed, wakes the background writer and
 * waits for one more batch to complete, then tries again: colder pages go
 * to disk before it installs its own, so it never goes ahead of them.  It
 * waits for a batch, never for a compaction, a whole sweep or the
 * cleaner's loop: every batch, whoever wrote it, ends the wait of every
 * writer who asked before it.  The background writer keeps going while
 * writers wait or the pool is above the accept threshold.  Only when
 * writeback cannot make room (the backing file full or failing, nothing
 * left to write) does the write get ENOSPC.  Freeing objects leaves holes
 * in zspages, so batches are followed by compaction while the pool stays
 * above the threshold; the writer thread hands it to the compaction
 * thread (auto-compact.c) and goes on writing.  Without the background
 * threads, a write makes room itself: a batch, and compaction if the pool
 * is still at its limit.
 *
 * Errors: a failed batch (EIO, ENOSPC from a thin file's filesystem)
 * leaves every page of it in memory; the writer backs off, 10 ms doubling
 * up to 2 s, and writes that need room meanwhile get ENOSPC at once.
 *
 * The cleaner: when fewer than two segments are free, the emptiest segment
 * under 25% live is read whole and its live objects (those whose slot
 * still points at them) are moved into the current batch, with the same
 * under-writeback check as pages from memory.  Its batches may take the
 * segment the tier keeps for them (TIER_CLEANER_SEGMENTS).
 *
 * Lock order: writeback mutex (one batcher at a time: hand, batch,
 * pending list, cleaner buffer, backoff) -> slot stripe lock ->
 * { allocator locks | tier lock }.  The wake lock guards the thread's
 * start, stop, wake-ups and the count of completed batches; it is a leaf,
 * taken under the writeback mutex when a batch completes.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "monotonic.h"
#include "page.h"
#include "store-internal.h"

#define DEFAULT_ACCEPT_PERCENT 90
#define DEFAULT_BATCH_PAGES 64
#define CLEAN_BELOW_FREE_SEGMENTS 2
#define CLEAN_LIVE_PERCENT 25
#define BACKOFF_MIN_MS 10
#define BACKOFF_MAX_MS 2000
/* Without idle writeback, pages still age (for store_writeback idle=S). */
#define DEFAULT_AGE_PERIOD_S 20
#define COMPACT_EVERY_BATCHES 8

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

enum pick { PICK_CLOCK, PICK_IDLE, PICK_ALL };

struct selection {
  enum pick pick;
  unsigned min_age;             /* PICK_IDLE */
  bool include_huge;
};

/* A page (or, from the cleaner, a disk object) in the batch in flight. */
struct pending {
  uint32_t slot, length;
  uint64_t offset;              /* where the batch puts it */
};

struct writeback {
  struct store *store;

  pthread_mutex_t mutex;        /* one batcher: guards the fields below */
  struct tier_batch *batch;
  struct pending pending[STORE_MAX_WRITEBACK_BATCH];
  unsigned pending_count;
  uint64_t hand;                /* CLOCK */
  void *segment_buf;            /* the cleaner's, TIER_SEGMENT_BYTES */
  uint64_t retry_after_ns;
  unsigned backoff_ms;
  unsigned batches_since_compact;

  _Atomic unsigned accept_percent, batch_pages, idle_seconds;

  pthread_mutex_t wake_lock;    /* guards the fields below */
  pthread_cond_t wake;          /* the thread waits for work */
  pthread_cond_t room;          /* writers wait for a batch */
  bool running, stop, kicked;
  uint64_t batches_done;        /* batches completed, by anyone */
  int room_verdict;             /* the last one's: 0, or -ENOSPC */
  unsigned room_wanted;         /* writers waiting for a batch */
  pthread_t thread;
};

uint64_t
pool_used_bytes (struct store *store)
{
  return zs_pool_pages_used (store->pool) * CSWAP_PAGE_SIZE;
}

static uint64_t
pool_limit (struct store *store)
{
  return atomic_load_explicit (&store->pool_limit_bytes, memory_order_relaxed);
}

uint64_t
pool_threshold_bytes (struct store *store)
{
  return pool_limit (store) / 100
    * atomic_load_explicit (&store->writeback->accept_percent,
                            memory_order_relaxed);
}

bool
writeback_may_promote (struct store *store, uint32_t length)
{
  return pool_limit (store) == 0
    || pool_used_bytes (store) + length <= pool_threshold_bytes (store);
}

static unsigned
age_period_s (struct writeback *wb)
{
  unsigned idle = atomic_load_explicit (&wb->idle_seconds, memory_order_relaxed);
  return idle ? (idle + 2) / 3 : DEFAULT_AGE_PERIOD_S;
}

/* Whether slot I of CHUNK goes into this batch; CLOCK clears the
 * referenced bits it passes.  Called with the slot's lock held.
 */
static bool
select_slot (const struct selection *sel, struct slot_chunk *chunk, unsigned i)
{
  uint8_t flags = chunk->flags[i];

  /* A deferred page is about to shrink: write it when it has.  A page
   * already in this batch (the hand's second lap) must not go twice.
   */
  if (slot_flags_type (flags) != SLOT_STORED
      || (flags & (SLOT_DEFERRED | SLOT_WRITEBACK))
      || (!sel->include_huge
          && slot_word_length (chunk->word[i]) == CSWAP_PAGE_SIZE))
    return false;
  switch (sel->pick) {
  case PICK_CLOCK:
    if (flags & SLOT_REFERENCED) {
      chunk->flags[i] = flags & ~SLOT_REFERENCED;
      return false;
    }
    return true;
  case PICK_IDLE:
    return slot_flags_age (flags) >= sel->min_age;
  case PICK_ALL:
    return true;
  }
  return false;
}

/* Adds one object to the batch under the slot's lock already held. */
static int
batch_add (struct writeback *wb, uint32_t slot, struct slot_chunk *chunk,
           unsigned i, const void *bytes, uint32_t length)
{
  uint64_t offset;
  int r = tier_batch_add (wb->store->tier, wb->batch, slot, bytes, length,
                          &offset);
  if (r == 0) {
    chunk->flags[i] |= SLOT_WRITEBACK;
    wb->pending[wb->pending_count++] = (struct pending) {
      .slot = slot, .length = length, .offset = offset };
  }
  return r;
}

/* Fills the batch with up to MAX pages chosen by SEL, sweeping from
 * *CURSOR for at most *BUDGET slots.  Returns 0, or -ENOSPC when the
 * backing file is full.
 */
static int
gather (struct writeback *wb, const struct selection *sel, uint64_t *cursor,
        uint64_t *budget, unsigned max)
{
  struct store *store = wb->store;
  struct slot_table *table = &store->table;

  while (wb->pending_count < max && *budget > 0) {
    uint64_t slot = *cursor;
    struct slot_chunk *chunk = slot_chunk (table, slot);
    uint64_t step = chunk ? 1 : SLOTS_PER_CHUNK - slot % SLOTS_PER_CHUNK;
    unsigned i = slot % SLOTS_PER_CHUNK;
    int r = 0;

    *budget -= step < *budget ? step : *budget;
    *cursor = slot + step < table->slots ? slot + step : 0;
    if (chunk == NULL)
      continue;
    pthread_mutex_t *lock = slot_lock (table, slot);
    pthread_mutex_lock (lock);
    if (select_slot (sel, chunk, i)) {
      uint64_t word = chunk->word[i];
      r = batch_add (wb, slot, chunk, i,
                     zs_object (store->pool, slot_word_handle (word)),
                     slot_word_length (word));
    }
    pthread_mutex_unlock (lock);
    if (r == -E2BIG)
      break;                    /* the buffer is full: submit what we have */
    if (r)
      return r;
  }
  return 0;
}

/* The batch is on disk (R == 0) or failed: under each slot's lock, move
 * the slot to its disk copy if untouched meanwhile, else free that copy.
 * Returns the pages that left memory.
 */
static unsigned
complete (struct writeback *wb, int r)
{
  struct store *store = wb->store;
  unsigned moved = 0;

  for (unsigned n = 0; n < wb->pending_count; n++) {
    const struct pending *p = &wb->pending[n];
    struct slot_chunk *chunk = slot_chunk (&store->table, p->slot);
    unsigned i = p->slot % SLOTS_PER_CHUNK;
    pthread_mutex_t *lock = slot_lock (&store->table, p->slot);

    pthread_mutex_lock (lock);
    uint8_t flags = chunk->flags[i];
    uint64_t word = chunk->word[i];
    if (r == 0 && (flags & SLOT_WRITEBACK)
        && slot_flags_type (flags) == SLOT_STORED) {
      count_slot (store, flags, word, -1);
      zs_free (store->pool, slot_word_handle (word));
      chunk->word[i] = slot_word_make_tiered (p->offset, p->length);
      chunk->flags[i] = (flags & ~(SLOT_TYPE_MASK | SLOT_WRITEBACK))
        | SLOT_TIERED;
      count_slot (store, chunk->flags[i], chunk->word[i], +1);
      moved++;
    }
    else if (r == 0 && (flags & SLOT_WRITEBACK)) {
      /* The cleaner's: the page moves from one disk place to another. */
      tier_free (store->tier, slot_word_tier_offset (word), p->length);
      chunk->word[i] = slot_word_make_tiered (p->offset, p->length);
      chunk->flags[i] = flags & ~SLOT_WRITEBACK;
    }
    else {
      chunk->flags[i] = flags & ~SLOT_WRITEBACK;
      tier_free (store->tier, p->offset, p->length);
    }
    pthread_mutex_unlock (lock);
  }
  counter_add (&store->count.written_back_pages, moved);
  wb->pending_count = 0;
  return moved;
}

static bool
in_backoff (struct writeback *wb)
{
  return wb->retry_after_ns && monotonic_ns () < wb->retry_after_ns;
}

/* Submits the batch and settles every page of it.  Returns the pages that
 * left memory, or a negative errno when the batch failed.
 */
/* A batch completed (R: its result): ends the wait of every writer who
 * asked for room before it.  VERDICT -ENOSPC tells them writeback cannot
 * make room.
 */
static void
post_batch (struct writeback *wb, int verdict)
{
  pthread_mutex_lock (&wb->wake_lock);
  wb->batches_done++;
  wb->room_verdict = verdict;
  pthread_cond_broadcast (&wb->room);
  pthread_mutex_unlock (&wb->wake_lock);
}

static int
flush (struct writeback *wb)
{
  if (wb->pending_count == 0)
    return 0;
  int r = tier_batch_submit (wb->store->tier, wb->batch);
  unsigned moved = complete (wb, r);
  post_batch (wb, r ? -ENOSPC : 0);
  if (r) {
    wb->backoff_ms = wb->backoff_ms ? wb->backoff_ms * 2 : BACKOFF_MIN_MS;
    if (wb->backoff_ms > BACKOFF_MAX_MS)
      wb->backoff_ms = BACKOFF_MAX_MS;
    wb->retry_after_ns = monotonic_ns () + wb->backoff_ms * 1000000ull;
    return r;
  }
  wb->backoff_ms = 0;
  wb->retry_after_ns = 0;
  wb->batches_since_compact++;
  return moved;
}

/* Moves the live objects of SEGMENT elsewhere on disk.  Called with the
 * writeback mutex held and the batch empty.
 */
static int
clean_segment (struct writeback *wb, uint64_t segment)
{
  struct store *store = wb->store;
  struct tier_object object;
  size_t fill, pos = 0;
  unsigned max = atomic_load_explicit (&wb->batch_pages, memory_order_relaxed);
  int r = tier_read_segment (store->tier, segment, wb->segment_buf, &fill);

  tier_batch_set_cleaning (wb->batch, true);

  while (r >= 0
         && tier_segment_next (store->tier, segment, wb->segment_buf, fill,
                               &pos, &object)) {
    struct slot_chunk *chunk = object.cookie < store->table.slots
      ? slot_chunk (&store->table, object.cookie) : NULL;
    unsigned i = object.cookie % SLOTS_PER_CHUNK;
    if (chunk == NULL)
      continue;
    if (wb->pending_count == max)
      r = flush (wb);
    pthread_mutex_t *lock = slot_lock (&store->table, object.cookie);
    pthread_mutex_lock (lock);
    for (int tries = 0; r >= 0 && tries < 2; tries++) {
      if (slot_flags_type (chunk->flags[i]) != SLOT_TIERED
          || chunk->word[i] != slot_word_make_tiered (object.offset,
                                                      object.length))
        break;                  /* dead: its slot moved on */
      int a = batch_add (wb, object.cookie, chunk, i, object.payload,
                         object.length);
      if (a != -E2BIG) {
        r = a;
        break;
      }
      pthread_mutex_unlock (lock);      /* flush takes slot locks */
      r = flush (wb);
      pthread_mutex_lock (lock);
    }
    pthread_mutex_unlock (lock);
  }
  int f = flush (wb);
  tier_batch_set_cleaning (wb->batch, false);
  if (r >= 0 && f >= 0)
    counter_add (&store->count.segments_cleaned, 1);
  return r < 0 ? r : f < 0 ? f : 0;
}

/* Keeps a couple of segments free for new batches.  Mutex held. */
static void
clean_if_needed (struct writeback *wb)
{
  struct tier *tier = wb->store->tier;

  unsigned free_segments = tier_free_segments (tier);

  while (free_segments < CLEAN_BELOW_FREE_SEGMENTS) {
    int64_t victim = tier_pick_victim (tier, CLEAN_LIVE_PERCENT);
    if (victim < 0 || clean_segment (wb, victim) < 0)
      return;
    unsigned now = tier_free_segments (tier);
    if (now <= free_segments)
      return;                   /* no progress: cleaning more will not help */
    free_segments = now;
  }
}

/* One batch: clean if needed, gather, submit, settle.  Mutex held.
 * Adds the pages that left memory and the batch, if anything was
 * submitted, to *DONE, even when it fails; returns 0 or a negative errno.
 */
static int
run_batch (struct writeback *wb, const struct selection *sel, uint64_t *cursor,
           uint64_t *budget, unsigned max, struct store_writeback_result *done)
{
  clean_if_needed (wb);
  int r = gather (wb, sel, cursor, budget, max);
  done->batches += wb->pending_count > 0;
  int moved = flush (wb);
  if (moved > 0)
    done->pages_written += moved;
  return r ? r : moved < 0 ? moved : 0;
}

/* Compaction, so that freed objects become free pool pages: by the
 * compaction thread when it runs, else here.  Mutex held.
 */
static void
compact_pool (struct writeback *wb)
{
  struct zs_compact_result result;

  if (!auto_compact_request (wb->store->auto_compact))
    store_compact (wb->store, &result);
  wb->batches_since_compact = 0;
}

/* Pressure: a CLOCK batch of cold pages, and compaction now and then.
 * Mutex held.  Returns the pages that left memory, or a negative errno
 * when none did because of an error.
 */
static int
pressure_batch (struct writeback *wb)
{
  struct store *store = wb->store;
  struct selection sel = { .pick = PICK_CLOCK, .include_huge = true };
  uint64_t budget = 2 * store->table.slots;     /* two laps: a second chance */
  unsigned max = atomic_load_explicit (&wb->batch_pages, memory_order_relaxed);
  struct store_writeback_result done = { 0 };
  int r = run_batch (wb, &sel, &wb->hand, &budget, max, &done);

  if (done.pages_written > 0
      && (wb->batches_since_compact >= COMPACT_EVERY_BATCHES
          || pool_used_bytes (store) >= pool_limit (store)))
    compact_pool (wb);
  return done.pages_written > 0 ? (int) done.pages_written : r;
}

static bool
has_room (struct store *store, unsigned needed_pages)
{
  uint64_t limit = pool_limit (store);

  return limit == 0
    || pool_used_bytes (store) + needed_pages * CSWAP_PAGE_SIZE <= limit;
}

/* No writer thread: the write makes room itself. */
static int
make_room_here (struct writeback *wb, unsigned needed_pages)
{
  int r = -ENOSPC;

  pthread_mutex_lock (&wb->mutex);
  if (has_room (wb->store, needed_pages)
      || (!in_backoff (wb) && pressure_batch (wb) > 0))
    r = 0;
  pthread_mutex_unlock (&wb->mutex);
  return r;
}

int
writeback_make_room (struct store *store, unsigned needed_pages)
{
  struct writeback *wb = store->writeback;

  counter_add (&store->count.writes_waited, 1);
  if (has_room (store, needed_pages))
    return 0;
  pthread_mutex_lock (&wb->wake_lock);
  if (!wb->running || wb->stop) {
    pthread_mutex_unlock (&wb->wake_lock);
    return make_room_here (wb, needed_pages);
  }
  uint64_t asked_at = wb->batches_done;
  wb->room_wanted++;
  wb->kicked = true;
  pthread_cond_signal (&wb->wake);
  while (wb->batches_done == asked_at && !wb->stop)
    pthread_cond_wait (&wb->room, &wb->wake_lock);
  /* Stopped before a batch: try again, and make room here next time. */
  int r = wb->batches_done != asked_at ? wb->room_verdict : 0;
  wb->room_wanted--;
  pthread_mutex_unlock (&wb->wake_lock);
  return r;
}

/* Whether writers wait for a batch, and whether the thread should stop. */
static bool
writers_waiting (struct writeback *wb, bool *stop)
{
  pthread_mutex_lock (&wb->wake_lock);
  bool waiting = wb->room_wanted > 0;
  *stop = wb->stop;
  pthread_mutex_unlock (&wb->wake_lock);
  return waiting;
}

/* Background: batches while writers wait for room, and from the limit
 * down to the accept threshold.
 */
static void
relieve_pressure (struct writeback *wb)
{
  struct store *store = wb->store;
  bool stop, waiting = writers_waiting (wb, &stop);
  uint64_t limit = pool_limit (store);

  if (!waiting
      && (limit == 0 || pool_used_bytes (store) + CSWAP_PAGE_SIZE < limit))
    return;
  while (!stop) {
    /* The limit may be lifted (set to 0: no limit) meanwhile: then there
     * is no threshold to reach, and no writer needs room.
     */
    if (pool_limit (store) == 0) {
      if (waiting)
        post_batch (wb, 0);
      break;
    }
    if (!waiting && pool_used_bytes (store) < pool_threshold_bytes (store))
      break;
    pthread_mutex_lock (&wb->mutex);
    int moved = in_backoff (wb) ? -EAGAIN : pressure_batch (wb);
    pthread_mutex_unlock (&wb->mutex);
    waiting = writers_waiting (wb, &stop);
    if (moved <= 0) {
      if (waiting)
        post_batch (wb, -ENOSPC);       /* nothing written, or cannot be */
      break;
    }
  }
  pthread_mutex_lock (&wb->mutex);
  compact_pool (wb);
  pthread_mutex_unlock (&wb->mutex);
}

/* Advances the idle age of every page in memory, serving writers that
 * wait for room between chunks.
 */
static void
age_sweep (struct writeback *wb)
{
  struct store *store = wb->store;

  for (uint64_t slot = 0; slot < store->table.slots; slot += SLOTS_PER_CHUNK) {
    struct slot_chunk *chunk = slot_chunk (&store->table, slot);
    bool stop;
    if (writers_waiting (wb, &stop))
      relieve_pressure (wb);
    if (stop)
      return;
    if (chunk == NULL)
      continue;
    for (unsigned i = 0; i < SLOTS_PER_CHUNK && slot + i < store->table.slots; i++) {
      pthread_mutex_t *lock = slot_lock (&store->table, slot + i);
      pthread_mutex_lock (lock);
      uint8_t flags = chunk->flags[i];
      if (slot_flags_type (flags) == SLOT_STORED
          && slot_flags_age (flags) < SLOT_AGE_MAX)
        chunk->flags[i] = slot_flags_with_age (flags, slot_flags_age (flags) + 1);
      pthread_mutex_unlock (lock);
    }
  }
}

/* Writes back what SEL picks, one sweep of the table, at most MAX_PAGES
 * (0: all).
 */
static int
sweep_writeback (struct writeback *wb, const struct selection *sel,
                 uint64_t max_pages, struct store_writeback_result *result)
{
  uint64_t cursor = 0, budget = wb->store->table.slots;
  int r = 0;

  *result = (struct store_writeback_result) { 0 };
  while (budget > 0 && (max_pages == 0 || result->pages_written < max_pages)) {
    unsigned max = atomic_load_explicit (&wb->batch_pages, memory_order_relaxed);
    if (max_pages && max_pages - result->pages_written < max)
      max = max_pages - result->pages_written;
    pthread_mutex_lock (&wb->mutex);
    r = in_backoff (wb) ? -EAGAIN
      : run_batch (wb, sel, &cursor, &budget, max, result);
    pthread_mutex_unlock (&wb->mutex);
    if (r < 0)
      break;
  }
  return r;
}

static void *
writer_thread (void *opaque)
{
  struct writeback *wb = opaque;
  uint64_t next_age_ns = monotonic_ns () + age_period_s (wb) * 1000000000ull;

  /* The writer frees memory for the kernel's reclaim: let it dip into the
   * reserves as an I/O flusher (needs CAP_SYS_RESOURCE; fine without).
   */
  prctl (PR_SET_IO_FLUSHER, 1, 0, 0, 0);
  pthread_mutex_lock (&wb->wake_lock);
  while (!wb->stop) {
    if (!wb->kicked) {
      uint64_t until = monotonic_ns () + 1000000000ull;   /* check the pool each second */
      if (until > next_age_ns)
        until = next_age_ns;
      struct timespec ts = { .tv_sec = until / 1000000000ull,
                             .tv_nsec = until % 1000000000ull };
      pthread_cond_timedwait (&wb->wake, &wb->wake_lock, &ts);
    }
    wb->kicked = false;
    if (wb->stop)
      break;
    pthread_mutex_unlock (&wb->wake_lock);

    relieve_pressure (wb);
    if (monotonic_ns () >= next_age_ns) {
      age_sweep (wb);
      if (atomic_load_explicit (&wb->idle_seconds, memory_order_relaxed)) {
        struct selection sel = { .pick = PICK_IDLE, .min_age = SLOT_AGE_MAX };
        struct store_writeback_result result;
        sweep_writeback (wb, &sel, 0, &result);
      }
      next_age_ns = monotonic_ns () + age_period_s (wb) * 1000000000ull;
    }
    pthread_mutex_lock (&wb->wake_lock);
  }
  pthread_mutex_unlock (&wb->wake_lock);
  return NULL;
}

struct writeback *
writeback_create (struct store *store, const struct store_config *config)
{
  struct writeback *wb = calloc (1, sizeof *wb);

  if (wb == NULL)
    return NULL;
  wb->store = store;
  wb->segment_buf = aligned_alloc (TIER_BLOCK_BYTES, TIER_SEGMENT_BYTES);
  wb->batch = tier_batch_create (STORE_MAX_WRITEBACK_BATCH);
  if (wb->segment_buf == NULL || wb->batch == NULL) {
    tier_batch_destroy (wb->batch);
    free (wb->segment_buf);
    free (wb);
    errno = ENOMEM;
    return NULL;
  }
  pthread_mutex_init (&wb->mutex, NULL);
  pthread_mutex_init (&wb->wake_lock, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (&wb->wake, &attr);
  pthread_condattr_destroy (&attr);
  pthread_cond_init (&wb->room, NULL);
  atomic_init (&wb->accept_percent, config->accept_threshold_percent
               ? config->accept_threshold_percent : DEFAULT_ACCEPT_PERCENT);
  atomic_init (&wb->batch_pages, config->writeback_batch_pages
               ? config->writeback_batch_pages : DEFAULT_BATCH_PAGES);
  atomic_init (&wb->idle_seconds, config->idle_writeback_seconds);
  store->writeback = wb;
  if (store_set_accept_threshold (store, atomic_load (&wb->accept_percent))
      || store_set_writeback_batch (store, atomic_load (&wb->batch_pages))) {
    store->writeback = NULL;
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
  free (wb->segment_buf);
  pthread_cond_destroy (&wb->wake);
  pthread_cond_destroy (&wb->room);
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
  pthread_mutex_lock (&wb->wake_lock);
  if (!wb->running) {
    wb->stop = false;
    r = -pthread_create (&wb->thread, NULL, writer_thread, wb);
    wb->running = r == 0;
  }
  pthread_mutex_unlock (&wb->wake_lock);
  return r;
}

void
writeback_stop (struct writeback *wb)
{
  if (wb == NULL)
    return;
  pthread_mutex_lock (&wb->wake_lock);
  bool running = wb->running;
  wb->stop = true;
  pthread_cond_signal (&wb->wake);
  pthread_cond_broadcast (&wb->room);
  pthread_mutex_unlock (&wb->wake_lock);
  if (running)
    pthread_join (wb->thread, NULL);
  pthread_mutex_lock (&wb->wake_lock);
  wb->running = false;
  pthread_mutex_unlock (&wb->wake_lock);
}

int
store_writeback (struct store *store, unsigned idle_seconds,
                 uint64_t max_pages, bool include_huge,
                 struct store_writeback_result *result)
{
  struct writeback *wb = store->writeback;
  struct selection sel = { .pick = idle_seconds ? PICK_IDLE : PICK_ALL,
                           .include_huge = include_huge };

  *result = (struct store_writeback_result) { 0 };
  if (wb == NULL)
    return -ENODEV;
  if (idle_seconds) {
    /* Ages count idle sweeps; a page of age A has been idle at least
     * (A - 1) periods.
     */
    unsigned period = age_period_s (wb);
    sel.min_age = (idle_seconds + period - 1) / period + 1;
    if (sel.min_age > SLOT_AGE_MAX)
      sel.min_age = SLOT_AGE_MAX;
  }
  return sweep_writeback (wb, &sel, max_pages, result);
}

int
store_set_accept_threshold (struct store *store, unsigned percent)
{
  if (store->writeback == NULL || percent < 1 || percent > 100)
    return -EINVAL;
  atomic_store (&store->writeback->accept_percent, percent);
  return 0;
}

unsigned
store_get_accept_threshold (struct store *store)
{
  return store->writeback ? atomic_load (&store->writeback->accept_percent) : 0;
}

int
store_set_writeback_batch (struct store *store, unsigned pages)
{
  if (store->writeback == NULL || pages < 1 || pages > STORE_MAX_WRITEBACK_BATCH)
    return -EINVAL;
  atomic_store (&store->writeback->batch_pages, pages);
  return 0;
}

unsigned
store_get_writeback_batch (struct store *store)
{
  return store->writeback ? atomic_load (&store->writeback->batch_pages) : 0;
}

void
store_set_idle_writeback (struct store *store, unsigned seconds)
{
  if (store->writeback)
    atomic_store (&store->writeback->idle_seconds, seconds);
}

unsigned
store_get_idle_writeback (struct store *store)
{
  return store->writeback ? atomic_load (&store->writeback->idle_seconds) : 0;
}
