/* cswap: what the writeback files share (store/writeback*.c).
 *
 *   writeback.c           the writer thread and its policy: when to write,
 *                         how much, writers waiting for room, compaction
 *   writeback-select.c    which pages: CLOCK, idle ages, the age sweep
 *   writeback-batch.c     a batch: fill, submit, settle each page, backoff
 *   writeback-clean.c     the store's answers to the tier's cleaner
 *   writeback-settings.c  batch size and idle-writeback settings
 *   writeback-budget.c    how much may be written: bytes a day, a burst
 *   writeback-reads.c     pages the kernel has read back, to disk
 *   pool-limit.c          the pool limit and its accept threshold
 *
 * Lock order: writeback mutex (one batcher at a time: hand, batch,
 * pending list, cleaner, backoff) -> slot stripe lock ->
 * { allocator locks | tier lock }.  The wake lock guards the thread's
 * start, stop, wake-ups and the count of completed batches; it is a leaf,
 * taken under the writeback mutex when a batch completes.  The reads
 * lock (writeback-reads.c) is taken under a slot lock and is a leaf.  The
 * budget lock (writeback-budget.c) is a leaf, taken under the writeback
 * mutex by the batcher and alone by the setters and the stats.
 */
#ifndef CSWAP_WRITEBACK_INTERNAL_H
#define CSWAP_WRITEBACK_INTERNAL_H

#include <pthread.h>

#include "store-internal.h"
#include "token-bucket.h"

enum pick { PICK_CLOCK, PICK_IDLE, PICK_ALL, PICK_READ_MARKED };

struct selection {
  enum pick pick;
  unsigned min_age;             /* PICK_IDLE */
  bool include_huge;
};

/* A page in the batch in flight. */
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
  struct tier_cleaner *cleaner;
  uint64_t retry_after_ns;
  unsigned backoff_ms;
  unsigned batches_since_compact;

  _Atomic unsigned batch_pages, idle_seconds;   /* writeback-settings.c */

  /* writeback-budget.c */
  uint64_t (*budget_clock) (void *arg);         /* set at creation */
  void *budget_clock_arg;
  uint64_t budget_charged_bytes;        /* the tier's bytes_written, as last
                                           taken from the budget: mutex */
  pthread_mutex_t budget_lock;          /* guards the two below */
  struct token_bucket budget;
  struct store_writeback_budget budget_setting;

  bool reads_enabled;           /* writeback-reads.c; set at creation */
  uint64_t reads_wait_ns;       /* between rotations; set at creation */
  pthread_mutex_t reads_lock;   /* guards the five fields below */
  uint32_t *reads_noting;       /* slots read since the last rotation */
  unsigned reads_noted;
  uint32_t *reads_waiting;      /* the generation before: judged next */
  unsigned reads_waiting_count;
  uint64_t reads_rotated_ns;

  pthread_mutex_t wake_lock;    /* guards the fields below */
  pthread_cond_t wake;          /* the thread waits for work */
  pthread_cond_t room;          /* writers wait for a batch */
  bool running, stop, kicked;
  uint64_t batches_done;        /* batches completed, by anyone */
  int room_verdict;             /* the last one's: 0, or -ENOSPC */
  unsigned room_wanted;         /* writers waiting for a batch */
  pthread_t thread;
};

/* writeback-select.c */
/* Fills the batch with up to MAX pages chosen by SEL, sweeping from
 * *CURSOR for at most *BUDGET slots.  Returns 0, or -ENOSPC when the
 * backing file is full.  Mutex held.
 */
extern int writeback_gather (struct writeback *wb, const struct selection *sel,
                             uint64_t *cursor, uint64_t *budget, unsigned max);
/* Adds slot SLOT of CHUNK to the batch if SEL picks it, under the slot's
 * lock.  0, -E2BIG when the batch is full, or -ENOSPC.  Mutex held.
 */
extern int writeback_offer_slot (struct writeback *wb,
                                 const struct selection *sel,
                                 struct slot_chunk *chunk, uint64_t slot);
/* Seconds between idle sweeps. */
extern unsigned writeback_age_period_s (struct writeback *wb);
/* Advances the idle age of every page in memory of the chunk holding
 * SLOT, a slot lock at a time.
 */
extern void writeback_age_chunk (struct store *store, uint64_t slot);
/* The age a page idle at least IDLE_SECONDS has reached. */
extern unsigned writeback_idle_min_age (struct writeback *wb,
                                        unsigned idle_seconds);

/* writeback-batch.c: all with the mutex held. */
/* Adds one object to the batch under the slot's lock already held; a
 * slot already in the batch is left out (0).
 */
extern int writeback_batch_add (struct writeback *wb, uint32_t slot,
                                struct slot_chunk *chunk, unsigned i,
                                const void *bytes, uint32_t length);
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
/* One batch: begin (budget, cleaner), gather, submit, settle.  Adds the pages
 * that left memory and the batch, if anything was submitted, to *DONE,
 * even when it fails; returns 0 or a negative errno.
 */
extern int writeback_run_batch (struct writeback *wb,
                                const struct selection *sel, uint64_t *cursor,
                                uint64_t *budget, unsigned max,
                                struct store_writeback_result *done);
/* A batch completed: ends the wait of every writer who asked for room
 * before it.  VERDICT -ENOSPC tells them writeback cannot make room.
 * Takes the wake lock.
 */
extern void writeback_post_batch (struct writeback *wb, int verdict);

/* writeback-clean.c: the tier's cleaner, with the store as its owner. */
extern struct tier_cleaner *writeback_cleaner_create (struct store *store);
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
