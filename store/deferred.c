/* cswap: deferred compression — a swap-out completes before its page is
 * compressed.
 *
 * Why: under memory pressure the kernel's reclaim waits for the pages it
 * is swapping out to finish writeback (cgroup v1 memcg reclaim always
 * does), so the time a write spends compressing is time the program that
 * faulted stands still, and on a small machine the compression of a burst
 * of swap-outs also takes the CPU from the swap-ins queued behind it.
 * Measured on a Python program swapping in an 82 MiB memory group: writes
 * took 1.6-1.9 ms at the block layer, 290 us of it in the daemon.
 *
 * How: a whole-page write that is not same-filled is stored raw (the
 * allocator's huge class: one page, one memcpy) marked deferred,
 * and its slot goes on a bounded queue; the write returns.  A compressor
 * thread, at a lower CPU priority than the request threads so that reads
 * win the CPU, takes slots off the queue and, under each slot's lock,
 * compresses the raw object in place of itself.  Everything else already
 * handles raw pages: reads copy them, trims free them, compaction moves
 * them.  The writeback hand skips deferred pages (they are about to
 * shrink), and a page rewritten or trimmed before its turn is simply
 * found without the flag.
 *
 * Bounded: at most DEFERRED_QUEUE_PAGES pages wait (each 4 KiB of pool
 * memory, counted in pool_bytes and under the pool limit, and left out of
 * core dumps with the rest of the pool: allocator/pool.c); when the queue
 * is full, or the pool is within twice the queue's size of its limit
 * (data-path.c: raw pages must not crowd out the pool a limit leaves, nor be
 * what writeback finds there), the write compresses inline as it would
 * without this.  Without the thread
 * (store_start_background not called) nothing is deferred.
 *
 * Locks: the queue lock is a leaf, never held with another lock
 * (lock-order.h).  The compressor holds one slot's lock while it
 * compresses that page (about as long as a partial-page write does),
 * which is what keeps a rewrite from racing it: no generation numbers, no
 * ABA on a reused handle.  That is the store's compress callback's
 * (deferred.h): this file knows slots only as numbers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "deferred.h"
#include "lock-order.h"

/* Request threads run at nice 0: the compressor yields the CPU to them. */
#define COMPRESSOR_NICE 5

struct deferred {
  const struct deferred_ops *ops;       /* set at creation */
  void *owner;                          /* set at creation */

  pthread_mutex_t lock;
  pthread_cond_t queued;        /* a slot queued, a place given back, stop */
  uint32_t slots[DEFERRED_QUEUE_PAGES]; /* protected by lock: a ring,
                                           COUNT slots from HEAD */
  unsigned head, count;         /* protected by lock */
  unsigned reserved;            /* protected by lock: places taken by
                                   writes not yet queued */
  bool running, stop;           /* protected by lock */
  pthread_t thread;             /* protected by lock */
};

struct deferred *
deferred_create (const struct deferred_ops *ops, void *owner)
{
  struct deferred *d = calloc (1, sizeof *d);

  if (d == NULL)
    return NULL;
  d->ops = ops;
  d->owner = owner;
  pthread_mutex_init (&d->lock, NULL);
  pthread_cond_init (&d->queued, NULL);
  return d;
}

void
deferred_destroy (struct deferred *d)
{
  if (d == NULL)
    return;
  deferred_stop (d);
  pthread_cond_destroy (&d->queued);
  pthread_mutex_destroy (&d->lock);
  free (d);
}

bool
deferred_reserve (struct deferred *d)
{
  bool room;

  lock_acquire (&d->lock, LOCK_RANK_LEAF);
  room = d->running && d->count + d->reserved < DEFERRED_QUEUE_PAGES;
  d->reserved += room;
  lock_release (&d->lock);
  return room;
}

void
deferred_push (struct deferred *d, uint32_t slot)
{
  lock_acquire (&d->lock, LOCK_RANK_LEAF);
  d->reserved--;
  if (slot != DEFERRED_SLOT_NONE)
    d->slots[(d->head + d->count++) % DEFERRED_QUEUE_PAGES] = slot;
  pthread_cond_signal (&d->queued);
  lock_release (&d->lock);
}

static void *
compressor_thread (void *opaque)
{
  struct deferred *d = opaque;

  /* Per thread on Linux: the request threads keep their priority. */
  setpriority (PRIO_PROCESS, gettid (), COMPRESSOR_NICE);
  lock_acquire (&d->lock, LOCK_RANK_LEAF);
  for (;;) {
    /* Stopping still waits for writes that took a place to queue it. */
    while (d->count == 0 && !(d->stop && d->reserved == 0))
      pthread_cond_wait (&d->queued, &d->lock);
    if (d->count == 0)
      break;
    uint32_t slot = d->slots[d->head];
    d->head = (d->head + 1) % DEFERRED_QUEUE_PAGES;
    d->count--;
    lock_release (&d->lock);
    d->ops->compress (d->owner, slot);
    lock_acquire (&d->lock, LOCK_RANK_LEAF);
  }
  lock_release (&d->lock);
  return NULL;
}

int
deferred_start (struct deferred *d)
{
  int r = 0;

  lock_acquire (&d->lock, LOCK_RANK_LEAF);
  if (!d->running) {
    d->stop = false;
    r = -pthread_create (&d->thread, NULL, compressor_thread, d);
    d->running = r == 0;
  }
  lock_release (&d->lock);
  return r;
}

/* Stops taking pages, compresses every page already queued, and ends the
 * thread: after it no page is deferred.
 */
void
deferred_stop (struct deferred *d)
{
  if (d == NULL)
    return;
  lock_acquire (&d->lock, LOCK_RANK_LEAF);
  bool running = d->running;
  d->running = false;           /* deferred_reserve says no from now on */
  d->stop = true;
  pthread_cond_signal (&d->queued);
  lock_release (&d->lock);
  if (running)
    pthread_join (d->thread, NULL);
}

uint64_t
deferred_queued_pages (struct deferred *d)
{
  lock_acquire (&d->lock, LOCK_RANK_LEAF);
  uint64_t n = d->count + d->reserved;
  lock_release (&d->lock);
  return n;
}
