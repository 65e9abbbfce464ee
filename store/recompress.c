/* cswap: recompression — pages that stay are stored again, smaller.
 *
 * Why: a page just swapped out is the one most likely to be swapped back
 * in soon, so it should be cheap to store and to read (lz4: 5.6 us to
 * compress and 2 us to decompress a page here, against zstd-1's 15 and
 * 6); a page that stays should be small (zstd-1 keeps the corpus in
 * about half of lz4's memory).  One codec cannot be both.  So with a cold
 * codec set (cold-codec=, cswap.conf(5)), pages are written with the
 * codec (codec=) and a sweeper compresses again, with the cold codec,
 * those that nobody has touched for a whole pass.  zram's recompression
 * (recompress type=idle, after marking pages idle) is the anchor; here
 * it is automatic and continuous.
 *
 * How: every cold-after seconds the sweeper visits each slot of the
 * table (absent chunks skipped whole).  A compressed page in another
 * codec than the cold one, untouched since the pass before (its idle age,
 * which every access resets, is 1 or more), is decompressed and
 * compressed again under its slot lock, and the smaller copy replaces it
 * (data-path.c, the visit callback); a younger page is aged a pass.  So
 * a page is recompressed between one and two passes after its last
 * access.  The writer's idle sweep (writeback-select.c) ages pages too,
 * so with a backing file they may age faster than that.  Raw, deferred
 * and tiered pages, and pages in a writeback batch, are left alone.
 *
 * The sweeper runs at nice 10, below the deferred compressor (5) and the
 * request threads (0): it only saves memory, and it yields the CPU to
 * anything waiting on the device.
 *
 * Locks: the sweeper's lock is a leaf, never held with another lock (it
 * guards the settings and the stop flag; lock-order.h).  A visit holds
 * one slot's lock at a time, as the data path does.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lock-order.h"
#include "monotonic.h"
#include "recompress.h"

#define SWEEPER_NICE 10

struct recompress {
  const struct recompress_ops *ops;     /* set at creation */
  void *owner;                          /* set at creation */
  struct slot_state *slots;             /* set at creation */

  pthread_mutex_t lock;
  pthread_cond_t changed;               /* settings changed, or stop */
  struct store_recompress settings;     /* protected by lock */
  bool running;                         /* protected by lock */
  pthread_t thread;                     /* protected by lock */
  /* Set under lock; read without it between chunks of a pass. */
  atomic_bool stop;
  _Atomic uint64_t passes;              /* relaxed atomic */
};

bool
recompress_settings_valid (const struct store_recompress *s)
{
  int min, max;

  return !s->enabled
    || (s->cold.id < CODEC_COUNT
        && codec_check_level (s->cold.id, s->cold.level, &min, &max) == 0
        && s->after_s >= 1 && s->after_s <= STORE_MAX_COLD_AFTER_S);
}

struct recompress *
recompress_create (const struct recompress_ops *ops, void *owner,
                   struct slot_state *slots,
                   const struct store_recompress *settings)
{
  struct recompress *r;

  if (!recompress_settings_valid (settings)) {
    errno = EINVAL;
    return NULL;
  }
  r = calloc (1, sizeof *r);
  if (r == NULL)
    return NULL;
  r->ops = ops;
  r->owner = owner;
  r->slots = slots;
  r->settings = *settings;
  pthread_mutex_init (&r->lock, NULL);
  monotonic_cond_init (&r->changed);
  return r;
}

void
recompress_destroy (struct recompress *r)
{
  if (r == NULL)
    return;
  recompress_stop (r);
  pthread_cond_destroy (&r->changed);
  pthread_mutex_destroy (&r->lock);
  free (r);
}

/* One pass over the table with COLD; stops early when asked to.  Returns
 * the pages recompressed.
 */
static uint64_t
sweep (struct recompress *r, const struct codec_config *cold)
{
  uint64_t slots = r->slots->table.slots, recompressed = 0;

  for (uint64_t slot = 0; slot < slots; ) {
    if (slot % SLOTS_PER_CHUNK == 0) {
      if (atomic_load (&r->stop))
        return recompressed;
      if (!slot_exists (r->slots, slot)) {
        slot += SLOTS_PER_CHUNK;
        continue;
      }
    }
    recompressed += r->ops->visit (r->owner, slot, cold);
    slot++;
  }
  atomic_fetch_add_explicit (&r->passes, 1, memory_order_relaxed);
  return recompressed;
}

static void *
sweeper_thread (void *opaque)
{
  struct recompress *r = opaque;

  /* Per thread on Linux: the request threads keep their priority. */
  setpriority (PRIO_PROCESS, gettid (), SWEEPER_NICE);
  lock_acquire (&r->lock, LOCK_RANK_LEAF);
  while (!atomic_load (&r->stop)) {
    struct store_recompress s = r->settings;
    if (!s.enabled) {
      pthread_cond_wait (&r->changed, &r->lock);
      continue;
    }
    struct timespec due = monotonic_timespec (monotonic_ns ()
                                       + s.after_s * UINT64_C (1000000000));
    /* A change of settings (or stop) starts the wait again. */
    if (pthread_cond_timedwait (&r->changed, &r->lock, &due) != ETIMEDOUT)
      continue;
    lock_release (&r->lock);
    sweep (r, &s.cold);
    lock_acquire (&r->lock, LOCK_RANK_LEAF);
  }
  lock_release (&r->lock);
  return NULL;
}

int
recompress_start (struct recompress *r)
{
  int err = 0;

  lock_acquire (&r->lock, LOCK_RANK_LEAF);
  if (!r->running) {
    atomic_store (&r->stop, false);
    err = pthread_create (&r->thread, NULL, sweeper_thread, r);
    r->running = err == 0;
  }
  lock_release (&r->lock);
  return -err;
}

void
recompress_stop (struct recompress *r)
{
  if (r == NULL)
    return;
  lock_acquire (&r->lock, LOCK_RANK_LEAF);
  bool running = r->running;
  r->running = false;
  atomic_store (&r->stop, true);
  pthread_cond_signal (&r->changed);
  lock_release (&r->lock);
  if (running)
    pthread_join (r->thread, NULL);
}

int
recompress_set (struct recompress *r, const struct store_recompress *settings)
{
  if (!recompress_settings_valid (settings))
    return -EINVAL;
  lock_acquire (&r->lock, LOCK_RANK_LEAF);
  r->settings = *settings;
  pthread_cond_signal (&r->changed);
  lock_release (&r->lock);
  return 0;
}

void
recompress_get (struct recompress *r, struct store_recompress *settings)
{
  lock_acquire (&r->lock, LOCK_RANK_LEAF);
  *settings = r->settings;
  lock_release (&r->lock);
}

int
recompress_pass (struct recompress *r, uint64_t *pages)
{
  struct store_recompress s;

  *pages = 0;
  recompress_get (r, &s);
  if (!s.enabled)
    return -EINVAL;
  *pages = sweep (r, &s.cold);
  return 0;
}

uint64_t
recompress_passes (struct recompress *r)
{
  return atomic_load_explicit (&r->passes, memory_order_relaxed);
}
