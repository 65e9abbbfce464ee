/* cswap: the tier's io_uring ring (see ring.h for the contract).
 *
 * No lock: one caller at a time, counters relaxed atomics.
 */
#include <errno.h>

#include "counter.h"
#include "ring.h"

#define RUN_INDEX_BITS 8
_Static_assert (TIER_MAX_RUNS <= 1u << RUN_INDEX_BITS,
                "a run index fits in the user data's low byte");

/* The first error of a batch is the one it returns. */
static void
note_error (int *error, int e)
{
  if (*error == 0)
    *error = e;
}

static uint64_t
run_tag (uint64_t generation, unsigned index)
{
  return generation << RUN_INDEX_BITS | index;
}

void
ring_init (struct tier_ring *ring, const struct tier_io_ops *io, void *io_ctx)
{
  *ring = (struct tier_ring) { .io = io, .io_ctx = io_ctx };
}

static void
ring_close (struct tier_ring *ring)
{
  if (ring->ready)
    ring->io->queue_exit (ring->io_ctx, &ring->uring);
  ring->ready = false;
}

void
ring_destroy (struct tier_ring *ring)
{
  ring_close (ring);
}

/* An SQE for each run, in order, until the ring refuses one.  Returns
 * how many runs are queued.
 */
static unsigned
queue_runs (struct tier_ring *ring, int fd, const struct ring_run *runs,
            unsigned n)
{
  unsigned i;

  for (i = 0; i < n; i++) {
    struct io_uring_sqe *sqe = ring->io->get_sqe (ring->io_ctx, &ring->uring);
    if (sqe == NULL)
      break;
    io_uring_prep_write (sqe, fd, runs[i].buf, runs[i].bytes, runs[i].offset);
    io_uring_sqe_set_data64 (sqe, run_tag (ring->generation, i));
  }
  return i;
}

/* Hands the QUEUED runs to the kernel, waiting for their completions in
 * the same call when it takes them all.  Returns how many it took: the
 * first ones, since the kernel takes SQEs in order.
 */
static unsigned
submit_runs (struct tier_ring *ring, unsigned queued, int *error)
{
  unsigned taken = 0, idle = 0;

  while (taken < queued) {
    int r = ring->io->submit_and_wait (ring->io_ctx, &ring->uring,
                                       queued - taken);
    counter_add (&ring->submissions, 1);
    /* What the kernel took, from its own head: a return value may not
     * say (an interrupted wait after a full submit returns the count,
     * a failed one the error).
     */
    unsigned now = queued - io_uring_sq_ready (&ring->uring);
    if (now > taken) {
      taken = now;
      idle = 0;
      continue;
    }
    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
      note_error (error, r);
      break;
    }
    if (++idle == RING_SUBMIT_TRIES) {
      note_error (error, r < 0 ? r : -EIO);
      break;
    }
    counter_add (&ring->retries, 1);
  }
  return taken;
}

/* Waits for the completions of the TAKEN first runs, matching each by
 * its user data.  Returns false if waiting failed for good, when some
 * may still be in flight.
 */
static bool
reap_runs (struct tier_ring *ring, const struct ring_run *runs,
           unsigned taken, int *error)
{
  bool done[TIER_MAX_RUNS] = { false };

  for (unsigned reaped = 0; reaped < taken; ) {
    struct io_uring_cqe *cqe;
    int r = ring->io->wait_cqe (ring->io_ctx, &ring->uring, &cqe);
    if (r == -EINTR || r == -EAGAIN) {
      counter_add (&ring->retries, 1);
      continue;
    }
    if (r < 0) {
      note_error (error, r);
      return false;
    }
    uint64_t tag = io_uring_cqe_get_data64 (cqe);
    int res = cqe->res;
    unsigned i = tag & ((1u << RUN_INDEX_BITS) - 1);
    io_uring_cqe_seen (&ring->uring, cqe);
    if (tag >> RUN_INDEX_BITS != ring->generation || i >= taken || done[i]) {
      counter_add (&ring->strays, 1);
      continue;
    }
    done[i] = true;
    reaped++;
    if (res < 0)
      note_error (error, res);
    else if ((uint32_t) res != runs[i].bytes)
      note_error (error, -EIO);         /* short: O_DIRECT does not resume */
  }
  return true;
}

int
ring_write (struct tier_ring *ring, int fd, const struct ring_run *runs,
            unsigned n)
{
  int error = 0;

  if (!ring->ready) {
    int r = ring->io->queue_init (ring->io_ctx, TIER_MAX_RUNS, &ring->uring);
    if (r < 0)
      return r;
    ring->ready = true;
  }
  ring->generation++;
  /* Refused an SQE: the runs queued so far are dropped with the ring,
   * unsubmitted.
   */
  unsigned queued = queue_runs (ring, fd, runs, n);
  if (queued < n)
    note_error (&error, -EBUSY);
  unsigned taken = queued == n ? submit_runs (ring, queued, &error) : 0;
  bool drained = reap_runs (ring, runs, taken, &error);
  if (queued < n || taken < queued || !drained) {
    ring_close (ring);
    counter_add (&ring->resets, 1);
  }
  return error;
}

void
ring_counts (struct tier_ring *ring, struct ring_counts *c)
{
  *c = (struct ring_counts) {
    .submissions = atomic_load_explicit (&ring->submissions, memory_order_relaxed),
    .retries = atomic_load_explicit (&ring->retries, memory_order_relaxed),
    .resets = atomic_load_explicit (&ring->resets, memory_order_relaxed),
    .strays = atomic_load_explicit (&ring->strays, memory_order_relaxed),
  };
}
