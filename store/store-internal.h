/* cswap: what the store's files share (store.c, pool-limit.c, the
 * writeback files (writeback-internal.h), deferred.c, auto-compact.c) —
 * the store itself.
 *
 * Lock order (all of them): writeback mutex -> slot stripe lock ->
 * { allocator class lock -> allocator pool lock | tier lock }.  Only one
 * slot lock is held at a time; the tier's lock is a leaf.  The writer's
 * wake lock (writeback-internal.h) is a leaf, taken under the writeback
 * mutex when a batch completes; the reads lock (writeback-reads.c) is a
 * leaf under a slot lock; the budget lock (writeback-budget.c) is a leaf
 * under the writeback mutex; the deferred queue's lock (deferred.c)
 * is never held with any other.
 */
#ifndef CSWAP_STORE_INTERNAL_H
#define CSWAP_STORE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "slot-table.h"
#include "store.h"
#include "tier.h"
#include "zsmalloc.h"

struct store_counters {
  atomic_uint_fast64_t same_filled_pages, huge_pages, compressed_pages;
  atomic_uint_fast64_t tiered_pages;
  atomic_uint_fast64_t compressed_bytes;
  atomic_uint_fast64_t reads, writes, trims;
  atomic_uint_fast64_t failed_writes, read_errors, pool_limit_hits;
  atomic_uint_fast64_t written_back_pages, written_back_reads;
  atomic_uint_fast64_t read_pages_written_back;
  atomic_uint_fast64_t writes_waited, segments_cleaned;
  atomic_uint_fast64_t writeback_budget_stops;
  atomic_uint_fast64_t pool_peak_bytes;
};

struct writeback;
struct deferred;
struct auto_compact;

struct store {
  uint64_t size_bytes;
  uint32_t huge_threshold_bytes;
  _Atomic uint32_t codec_packed;        /* id << 16 | (uint16_t) level */
  atomic_uint_fast64_t pool_limit_bytes;        /* pool-limit.c */
  _Atomic unsigned accept_percent;              /* pool-limit.c */
  struct slot_table table;
  struct zs_pool *pool;
  struct tier *tier;                    /* NULL: no backing file */
  struct writeback *writeback;          /* NULL: no backing file */
  struct deferred *deferred;            /* compression after the write */
  struct auto_compact *auto_compact;    /* the compaction thread */
  struct store_counters count;
  struct latency_histogram request_latency[STORE_REQUEST_KINDS];
};

static inline void
counter_add (atomic_uint_fast64_t *counter, int64_t delta)
{
  atomic_fetch_add_explicit (counter, (uint64_t) delta, memory_order_relaxed);
}

static inline uint64_t
counter_get (atomic_uint_fast64_t *counter)
{
  return atomic_load_explicit (counter, memory_order_relaxed);
}

/* The owner lock of slot SLOT (OPAQUE: the store) for the allocator's
 * and the tier's owner callbacks.  store.c.
 */
extern void store_owner_lock (void *opaque, uint32_t slot);
extern void store_owner_unlock (void *opaque, uint32_t slot);

/* Counts (SIGN +1) or uncounts (-1) a slot's contents.  store.c. */
extern void count_slot (struct store *store, uint8_t flags, uint64_t word,
                        int sign);

/* pool-limit.c: the pool limit (0: none) and its accept threshold. */
extern uint64_t pool_limit_bytes (struct store *store);
/* 0, or at least STORE_MIN_POOL_LIMIT_BYTES. */
extern bool pool_limit_valid (uint64_t bytes);
extern uint64_t pool_used_bytes (struct store *store);
/* Whether PAGES more pool pages fit below the limit. */
extern bool pool_has_room (struct store *store, unsigned pages);
/* Not one page more fits: the writer starts. */
extern bool pool_at_limit (struct store *store);
/* At or above the accept threshold: the writer goes on. */
extern bool pool_above_threshold (struct store *store);
/* Whether a page of LENGTH read back from disk should come back into
 * memory: only below the threshold.
 */
extern bool pool_may_promote (struct store *store, uint32_t length);
/* The accept threshold for a store with a backing file (0: 90%);
 * -EINVAL past 100.
 */
extern int pool_accept_threshold_init (struct store *store, unsigned percent);

/* writeback.c: the writer, made with the store when it has a tier. */
extern struct writeback *writeback_create (struct store *store,
                                           const struct store_config *config);
extern void writeback_destroy (struct writeback *wb);
/* The writer thread (store_start_background): 0 or -errno; NULL-safe. */
extern int writeback_start (struct writeback *wb);
extern void writeback_stop (struct writeback *wb);
/* A write found no room for a new zspage of NEEDED_PAGES below the pool
 * limit: performs (or waits for) a batch of writeback of colder pages.
 * Returns 0 when there may be room now, -ENOSPC when none could be made.
 * Called with no slot lock held.
 */
extern int writeback_make_room (struct store *store, unsigned needed_pages);
/* Read writeback (writeback-reads.c): whether pages read back go to disk
 * (false without a writer), and noting one: slot SLOT (I of CHUNK), just
 * read, whose flags were FLAGS_BEFORE before the read.  Called with the
 * slot's lock held.
 */
extern bool writeback_keeps_reads (struct writeback *wb);
extern void writeback_note_read (struct writeback *wb,
                                 struct slot_chunk *chunk, unsigned i,
                                 uint32_t slot, uint8_t flags_before);
/* The writeback budget's numbers (writeback-budget.c) in S. */
extern void writeback_budget_stats (struct writeback *wb,
                                    struct store_stats *s);

/* deferred.c: the queue of pages stored raw for the compressor thread.
 * 4 MiB of raw pages: more than a burst of reclaim (32 pages a batch, a
 * few batches in flight), little next to any pool.  1024 measured better
 * than 4096.
 */
#define DEFERRED_QUEUE_PAGES 1024
#define DEFERRED_SLOT_NONE UINT32_MAX
extern struct deferred *deferred_create (struct store *store);
extern void deferred_destroy (struct deferred *d);
/* The compressor thread (store_start_background): 0 or -errno.  Stopping
 * compresses what is queued first.
 */
extern int deferred_start (struct deferred *d);
extern void deferred_stop (struct deferred *d);
/* Takes a place on the queue for a write about to store its page raw:
 * false when the queue is full or the thread is not running.  Every place
 * taken is then filled or given back with deferred_push.
 */
extern bool deferred_reserve (struct deferred *d);
/* Queues SLOT in the place taken, or gives it back (DEFERRED_SLOT_NONE). */
extern void deferred_push (struct deferred *d, uint32_t slot);
extern uint64_t deferred_queued_pages (struct deferred *d);

/* auto-compact.c: the compaction thread, made with every store;
 * THRESHOLD_PERCENT 0 (auto-compaction off) leaves it only writeback's
 * requests.  NULL-safe.
 */
extern struct auto_compact *auto_compact_create (struct store *store,
                                                 unsigned threshold_percent);
extern void auto_compact_destroy (struct auto_compact *a);
extern int auto_compact_start (struct auto_compact *a);
extern void auto_compact_stop (struct auto_compact *a);
extern void auto_compact_stats (struct auto_compact *a, struct store_stats *s);
/* Asks the thread to compact soon, without waiting: false when it is not
 * running (the caller then compacts itself).
 */
extern bool auto_compact_request (struct auto_compact *a);

/* store.c: compresses the raw object of deferred slot I of CHUNK in its
 * place and clears SLOT_DEFERRED.  Called with the slot's lock held.
 */
extern void store_compress_deferred (struct store *store,
                                     struct slot_chunk *chunk, unsigned i,
                                     uint64_t slot);

#endif /* CSWAP_STORE_INTERNAL_H */
