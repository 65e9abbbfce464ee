/* cswap: deferred compression's queue and thread (deferred.c).
 *
 * The queue knows slots, not pages: its thread hands each queued slot to
 * the compress callback the store gives it at creation (the data path's
 * compression of a deferred page), and calls nothing else of the store.
 */
#ifndef CSWAP_DEFERRED_H
#define CSWAP_DEFERRED_H

#include <stdbool.h>
#include <stdint.h>

/* 4 MiB of raw pages: more than a burst of reclaim (32 pages a batch, a
 * few batches in flight), little next to any pool.  1024 measured better
 * than 4096.
 */
#define DEFERRED_QUEUE_PAGES 1024
#define DEFERRED_SLOT_NONE UINT32_MAX

struct deferred_ops {
  /* Compresses SLOT's raw page in place if it is still deferred; takes
   * the slot's lock itself.  Called on the compressor thread, no lock
   * held.
   */
  void (*compress) (void *owner, uint32_t slot);
};

struct deferred;

extern struct deferred *deferred_create (const struct deferred_ops *ops,
                                         void *owner);
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

#endif /* CSWAP_DEFERRED_H */
