/* cswap: what the writeback files share (store/writeback*.c).
 *
 *   writeback.c           the writer thread and its policy: when to write,
 *                         how much, compaction
 *   writeback-reads.c     pages the kernel has read back, to disk
 *   writeback-select.c    which pages: CLOCK, idle ages, the age sweep; the
 *                         loop of batches over a source of pages
 *   writeback-batch.c     a batch: fill, submit, settle each page, backoff
 *   writeback-clean.c     the slots' answers to the tier's cleaner
 *   writeback-room.c      writers waiting for room, batches ending the wait
 *   writeback-settings.c  batch size and idle-writeback settings
 *   writeback-budget.c    how much may be written: bytes a day, a burst
 *
 * in the order of their calls: each file calls only files below it in
 * this list (scripts/file-calls checks it).
 *
 * What the writer works on it is handed at creation (writeback.h,
 * struct writeback_context): slots only through slot-state.h.  Each
 * field below says what guards it; the order of its four locks among
 * the others is lock-order.h's.
 */
#ifndef CSWAP_WRITEBACK_INTERNAL_H
#define CSWAP_WRITEBACK_INTERNAL_H

#include <pthread.h>

#include "token-bucket.h"
#include "writeback.h"

/* A page in the batch in flight. */
struct pending {
  uint32_t slot, length;
  uint64_t offset;              /* where the batch puts it */
};

struct writeback {
  /* Set at creation: writeback.h's context. */
  struct slot_state *slots;
  struct pool_limit *limit;
  struct tier *tier;
  struct auto_compact *compactor;
  struct store_counters *count;

  pthread_mutex_t mutex;        /* the writeback mutex: one batcher */
  struct tier_batch *batch;     /* protected by mutex */
  struct pending pending[STORE_MAX_WRITEBACK_BATCH];    /* protected by mutex */
  unsigned pending_count;       /* protected by mutex */
  uint64_t hand;                /* protected by mutex: CLOCK */
  struct tier_cleaner *cleaner; /* protected by mutex */
  uint64_t retry_after_ns;      /* protected by mutex */
  unsigned backoff_ms;          /* protected by mutex */
  unsigned batches_since_compact;       /* protected by mutex */

  /* writeback-settings.c: relaxed atomics, no lock. */
  _Atomic unsigned batch_pages, idle_seconds;

  /* writeback-budget.c */
  uint64_t (*budget_clock) (void *arg); /* set at creation */
  void *budget_clock_arg;               /* set at creation */
  uint64_t budget_charged_bytes;        /* protected by mutex: the tier's
                                           bytes_written, as last taken
                                           from the budget */
  pthread_mutex_t budget_lock;
  struct token_bucket budget;           /* protected by budget_lock */
  struct store_writeback_budget budget_setting; /* protected by
                                                   budget_lock */

  bool reads_enabled;           /* writeback-reads.c; set at creation */
  uint64_t reads_wait_ns;       /* between rotations; set at creation */
  pthread_mutex_t reads_lock;
  uint32_t *reads_noting;       /* protected by reads_lock: slots read
                                   since the last rotation */
  unsigned reads_noted;         /* protected by reads_lock */
  uint32_t *reads_waiting;      /* protected by reads_lock: the generation
                                   before, judged next */
  unsigned reads_waiting_count; /* protected by reads_lock */
  uint64_t reads_rotated_ns;    /* the writer thread's only */

  pthread_mutex_t wake_lock;
  pthread_cond_t wake;          /* the thread waits for work */
  pthread_cond_t room;          /* writers wait for a batch */
  bool running, stop, kicked;   /* protected by wake_lock */
  uint64_t batches_done;        /* protected by wake_lock: batches
                                   completed, by anyone */
  int room_verdict;             /* protected by wake_lock: the last
                                   batch's, 0 or -ENOSPC */
  unsigned room_wanted;         /* protected by wake_lock: writers waiting
                                   for a batch */
  pthread_t thread;             /* protected by wake_lock */
};

/* The writeback mutex and the wake lock, at their ranks (lock-order.h). */
static inline void
writeback_lock (struct writeback *wb)
{
  lock_acquire (&wb->mutex, LOCK_RANK_WRITEBACK);
}

static inline void
writeback_unlock (struct writeback *wb)
{
  lock_release (&wb->mutex);
}

static inline void
wake_lock (struct writeback *wb)
{
  lock_acquire (&wb->wake_lock, LOCK_RANK_LEAF);
}

static inline void
wake_unlock (struct writeback *wb)
{
  lock_release (&wb->wake_lock);
}

/* Where a batch's pages come from (writeback-select.c): a sweep of the
 * slot table, SEL's range from *CURSOR on, visiting at most BUDGET slots;
 * or, CURSOR NULL, the slots LIST[NEXT..COUNT).
 */
struct writeback_source {
  const struct slot_selection *sel;
  uint64_t *cursor;
  uint64_t budget;
  const uint32_t *list;
  unsigned next, count;
};

/* writeback-select.c */
/* One batch: begin (budget, cleaner), gather up to MAX pages SRC gives,
 * submit, settle.  Adds the pages that left memory and the batch, if
 * anything was submitted, to *DONE, even when it fails; returns 0 or a
 * negative errno (-ENOSPC: the backing file is full).  Mutex held.
 */
extern int writeback_run_batch (struct writeback *wb,
                                struct writeback_source *src, unsigned max,
                                struct store_writeback_result *done);
/* Batches of what SRC gives until it is spent, MAX_PAGES have left memory
 * (0: no bound), or a batch cannot be made (backoff: -EAGAIN, the budget
 * spent, the disk full or failing: the error); the mutex taken for each.
 * *DONE counts them all.
 */
extern int writeback_run_batches (struct writeback *wb,
                                  struct writeback_source *src,
                                  uint64_t max_pages,
                                  struct store_writeback_result *done);
/* Seconds between idle sweeps. */
extern unsigned writeback_age_period_s (struct writeback *wb);
/* Advances the idle age of every page in memory of the chunk holding
 * SLOT, a slot lock at a time.
 */
extern void writeback_age_chunk (struct writeback *wb, uint64_t slot);
/* The age a page idle at least IDLE_SECONDS has reached. */
extern unsigned writeback_idle_min_age (struct writeback *wb,
                                        unsigned idle_seconds);

/* writeback-batch.c: all with the mutex held. */
/* Adds SLOT's object to the batch under the slot's lock already held; a
 * slot already in the batch is left out (0).
 */
extern int writeback_batch_add (struct writeback *wb, uint32_t slot);
/* Before a batch fills: the budget's check, the cleaner, and the batch's
 * cap.  0, or -EDQUOT when the budget is spent (nothing written, no
 * cleaning either).
 */
extern int writeback_begin_batch (struct writeback *wb);
/* Submits the batch, takes what it wrote from the budget, and settles
 * every page of it.  Returns the pages that left memory, or a negative
 * errno when the batch failed.
 */
extern int writeback_flush (struct writeback *wb);
extern bool writeback_in_backoff (struct writeback *wb);

/* writeback-room.c: writers waiting for room. */
/* A batch completed: ends the wait of every writer who asked for room
 * before it.  VERDICT -ENOSPC tells them writeback cannot make room.
 * Takes the wake lock.
 */
extern void writeback_post_batch (struct writeback *wb, int verdict);
/* Wakes the writer thread and waits for its next batch: that batch's
 * verdict (0 or -ENOSPC), 0 when the thread stopped first (try again),
 * -ETIMEDOUT when no batch completed by DEADLINE_NS (monotonic_ns), or
 * -ESRCH when no writer thread runs (the caller makes room itself).
 * Takes the wake lock.
 */
extern int writeback_wait_for_batch (struct writeback *wb,
                                     uint64_t deadline_ns);
/* Wakes the writer thread, if no one has yet, to look at the pool; no
 * one waits.  Takes the wake lock.
 */
extern void writeback_kick (struct writeback *wb);
/* Whether writers wait for a batch; *STOP whether the thread should
 * stop.  Takes the wake lock.
 */
extern bool writeback_writers_waiting (struct writeback *wb, bool *stop);

/* writeback-clean.c: the tier's cleaner, with the slots as its owner. */
extern struct tier_cleaner *writeback_cleaner_create (struct writeback *wb);
/* Keeps a couple of segments free for new batches.  Mutex held, the
 * batch empty.
 */
extern void writeback_clean (struct writeback *wb);

/* writeback-reads.c: pages read back go to disk (store_config's
 * read_writeback).  Init 0 or -ENOMEM; destroy is safe after a failed
 * init.
 */
extern int writeback_reads_init (struct writeback *wb,
                                 const struct store_config *config);
extern void writeback_reads_destroy (struct writeback *wb);
/* Every wait (a second): writes out the pages noted a generation ago
 * that nothing touched since, in batches.  The writer thread.
 */
extern void writeback_drain_reads (struct writeback *wb);
/* When the next judgement is due (UINT64_MAX: never). */
extern uint64_t writeback_reads_due_ns (struct writeback *wb);

/* writeback-settings.c: the defaults for a new writer. */
extern int writeback_settings_init (struct writeback *wb,
                                    const struct store_config *config);

/* writeback-budget.c: the budget of a new writer, full; -EINVAL for one
 * out of bounds.  The budget lock is the caller's to make and destroy.
 */
extern int writeback_budget_init (struct writeback *wb,
                                  const struct store_config *config);
/* Mutex held: whether a batch may start (0), or -EDQUOT, counted, when
 * less than STORE_MIN_WRITEBACK_BUDGET_BYTES is left.
 */
extern int writeback_budget_check (struct writeback *wb);
/* Mutex held: takes from the budget what the tier wrote since last time
 * (the cleaner's copies, a batch).
 */
extern void writeback_budget_charge (struct writeback *wb);
/* Mutex held: charges, then caps the batch at what is left. */
extern void writeback_budget_cap (struct writeback *wb);

#endif /* CSWAP_WRITEBACK_INTERNAL_H */
