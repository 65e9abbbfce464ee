/* cswap: the tier's io_uring ring — one batch of writes at a time.
 *
 * ring_write() writes a batch's runs (each a contiguous piece of the
 * file, from an aligned buffer) with one io_uring_enter when all goes
 * well, and returns only when none of them can still be in flight:
 *
 *   - each run's SQE carries (batch generation << 8 | run index) as its
 *     user data, and completions are matched to runs by it, never by
 *     count: a completion that is not for a run of this batch still in
 *     flight is a stray, counted and never taken for one of ours;
 *   - the batch is written when every run's completion says all of its
 *     bytes were; a negative or short result, a run that got no SQE, or
 *     one the kernel never took fails it;
 *   - a submission that takes nothing (EINTR, EAGAIN, EBUSY, 0) is tried
 *     again, up to RING_SUBMIT_TRIES times in a row; a short one goes on
 *     with the rest; an interrupted wait is resumed;
 *   - whatever happened, every run the kernel took is waited for before
 *     ring_write returns, so no write of a failed batch lands later, on
 *     space the caller frees and reuses; and if anything of the batch may
 *     still sit in the ring (runs queued but never taken, or an SQE
 *     refused), the ring is closed and made afresh at the next call.
 *     (Only if waiting failed for good, which io_uring_wait_cqe does not
 *     on a live ring, could a run still be in flight then: the ring is
 *     closed all the same, and the failure returned.)
 *
 * The ring is made on first use, in the process that writes: one made
 * before nbdkit's fork would be shared with the parent.
 *
 * Threads: one caller at a time (the tier's batching caller, serialised
 * by the store's writeback mutex); the counters are relaxed atomics that
 * any thread may read.  No lock.
 */
#ifndef CSWAP_TIER_RING_H
#define CSWAP_TIER_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "io-ops.h"
#include "tier.h"

#define RING_SUBMIT_TRIES 8     /* submissions in a row that take nothing */

struct ring_run {
  const void *buf;
  uint32_t bytes;
  uint64_t offset;
};

struct tier_ring {
  const struct tier_io_ops *io;
  void *io_ctx;
  struct io_uring uring;
  bool ready;                   /* uring is set up */
  uint64_t generation;          /* batches so far: the user data's top */
  atomic_uint_fast64_t submissions, retries, resets, strays;
};

struct ring_counts {
  uint64_t submissions;         /* io_uring_enter calls that submit */
  uint64_t retries;             /* of those and of waits, after EINTR/EAGAIN */
  uint64_t resets;              /* rings closed and made afresh */
  uint64_t strays;              /* completions for no run in flight */
};

extern void ring_init (struct tier_ring *ring, const struct tier_io_ops *io,
                       void *io_ctx);
extern void ring_destroy (struct tier_ring *ring);
/* Writes the N (1..TIER_MAX_RUNS) RUNS to FD.  Returns 0 when every byte
 * of every run is written, else a negative errno; either way nothing of
 * the batch is in flight any more.
 */
extern int ring_write (struct tier_ring *ring, int fd,
                       const struct ring_run *runs, unsigned n);
extern void ring_counts (struct tier_ring *ring, struct ring_counts *counts);

#endif /* CSWAP_TIER_RING_H */
