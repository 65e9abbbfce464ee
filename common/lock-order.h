/* cswap: the lock order — every lock of the engine, in the one order in
 * which they nest.  This is the only copy; other files point here.
 *
 *   control->lock          control/internal.h: serialises get and set
 *     -> writeback mutex   store/writeback-internal.h: one batcher at a
 *                          time (the CLOCK hand, the batch, the pending
 *                          list, the tier's cleaner, the backoff); the
 *                          tier's batching serialisation (tier.h)
 *       -> slot lock       store/slot-table.h: a stripe of slots, and the
 *                          owner lock of both relocations (zs_owner_ops
 *                          for compaction, tier_owner_ops for the
 *                          cleaner); ONE at a time, never two
 *         -> allocator class lock   allocator/zs-internal.h (in index
 *                                   order where a walk takes them all)
 *           -> allocator pool lock  allocator/zs-internal.h: zspage ids
 *                                   and the reserve
 *         -> tier lock     tier/tier.c: segments and space; nothing is
 *                          taken under it, and it is never held with an
 *                          allocator lock
 *
 *   Leaves, each held alone or innermost, never two together:
 *     writeback wake lock  the writer thread's start, stop, wake-ups and
 *                          the count of completed batches: taken under
 *                          the writeback mutex when a batch completes
 *     writeback reads lock read writeback's notes: taken under a slot
 *                          lock when a read is noted
 *     budget lock          store/writeback-budget.c: the writeback
 *                          budget; taken under the writeback mutex by the
 *                          batcher, alone by its setter and the stats
 *     deferred queue lock  store/deferred.c: never with any other lock
 *     slot-table make lock store/slot-table.c: a chunk made at its home
 *                          (a store that outlives its process), taken
 *                          under the maker's slot lock, nothing under it
 *     the daemon's own     daemon/serve/service-notify.c,
 *                          daemon/serve/io-queues.c,
 *                          daemon/nbdkit/nbd-exports-idle.c: around no
 *                          call into the engine
 *     exports claim lock   daemon/nbdkit/nbd-exports.h: the plugin's export
 *                          table's claims and each export's clients; a
 *                          drop frees the export's pages after letting
 *                          it go
 *     ladder lock          daemon/ladder/ladder-follow.c: the ladder's
 *                          steps and its follower's start and stop, held
 *                          by the control thread (and at exit) while it
 *                          joins the follower, which takes no lock of
 *                          the ladder; nothing of the engine is taken
 *                          under it
 *
 * A lock may be skipped (the data path takes no writeback mutex, the
 * cleaner no allocator lock), never taken out of order.  Compaction
 * holds no class lock when it takes an owner lock: it drops the class
 * lock, takes the owner's, and takes the class lock again.
 *
 * Checked in debug builds (meson -Dbuildtype=debug defines
 * CSWAP_LOCK_CHECKS): lock_acquire() aborts when a lock is taken while
 * one of the same or a later rank is held, and lock_assert_held() when a
 * function that needs a lock is called without it.  Each thread keeps
 * the locks it holds in a small thread-local list.  In other builds they
 * are plain pthread calls and the assertion is nothing, so the data path
 * pays for none of it.  The store's locks and the tier's are taken
 * through lock_acquire; the allocator's, control's and the daemon's are
 * plain pthread calls, and unchecked (a stats walk holds every class lock
 * at once, in index order, which one rank per lock cannot say).
 */
#ifndef CSWAP_LOCK_ORDER_H
#define CSWAP_LOCK_ORDER_H

#include <pthread.h>

/* The ranks, outermost first: the order above. */
enum lock_rank {
  LOCK_RANK_CONTROL = 1,
  LOCK_RANK_WRITEBACK,
  LOCK_RANK_SLOT,
  LOCK_RANK_ALLOC_CLASS,
  LOCK_RANK_ALLOC_POOL,
  LOCK_RANK_TIER,
  LOCK_RANK_LEAF,
};

#ifdef CSWAP_LOCK_CHECKS

extern void lock_check_acquire (const pthread_mutex_t *lock,
                                enum lock_rank rank);
extern void lock_check_release (const pthread_mutex_t *lock);
extern void lock_check_held (const pthread_mutex_t *lock, const char *what,
                             const char *file, int line);
#define lock_assert_held(lock)                                          \
  lock_check_held ((lock), #lock, __FILE__, __LINE__)

#else

static inline void
lock_check_acquire (const pthread_mutex_t *lock, enum lock_rank rank)
{
  (void) lock;
  (void) rank;
}

static inline void
lock_check_release (const pthread_mutex_t *lock)
{
  (void) lock;
}

#define lock_assert_held(lock) ((void) (lock))

#endif /* CSWAP_LOCK_CHECKS */

static inline void
lock_acquire (pthread_mutex_t *lock, enum lock_rank rank)
{
  lock_check_acquire (lock, rank);
  pthread_mutex_lock (lock);
}

static inline void
lock_release (pthread_mutex_t *lock)
{
  lock_check_release (lock);
  pthread_mutex_unlock (lock);
}

#endif /* CSWAP_LOCK_ORDER_H */
