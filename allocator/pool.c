/* cswap allocator: the pool, its memory and its zspage ids.
 *
 * A pool maps its whole address space up front, sized from
 * config.max_objects (see zs-internal.h for the layout), so that a zspage
 * never needs a mapping of its own and a handle turns into an address with
 * one multiply.  MAP_NORESERVE: nothing is committed or resident until a
 * zspage touches it, and release_pages gives it back when the zspage dies,
 * so the resident size follows the live data.
 *
 * The zspage area may instead be the caller's (config.shared_area), a
 * shared-memory segment that outlives the process: nothing in it is a
 * pointer, so it means the same wherever it is mapped, and a new pool
 * over the same segment adopts what the old one held (adopt.c).  The
 * descriptor table stays private: adoption rebuilds it.
 *
 * Core dumps: the zspage area holds every page the pool stores, and a
 * dump written to disk would keep them past the process (issue 27), so
 * it is MADV_DONTDUMP for its whole life, the ranges release_pages maps
 * afresh included.  Whatever the user allows of dumps: one taken to
 * debug needs the descriptors, which hold no page data and stay in, not
 * gigabytes of other programs' memory.
 *
 * Capacity: every live zspage holds at least one live object, except the
 * at most two that one compaction holds isolated, and a zspage being freed
 * whose id is not yet back on the free list.  max_objects plus one spare
 * per class plus ZS_SPARE_ZSPAGES covers that.
 *
 * The pool lock guards the free-id list, the count of ids in use, the
 * high-water id and the reserve (reserve.c).  Lock order:
 * common/lock-order.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cleanup.h"
#include "monotonic.h"
#include "zs-internal.h"

#define ZS_SPARE_ZSPAGES 64

/* BYTES of address space at AT (NULL: where the kernel chooses; else
 * over what is there), nothing committed until touched.  (Not the
 * reserve, reserve.c's warm zspages: this is only address space.)
 */
static void *
map_uncommitted (void *at, size_t bytes)
{
  void *p = mmap (at, bytes, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
                  | (at ? MAP_FIXED : 0), -1, 0);

  return p == MAP_FAILED ? NULL : p;
}

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24         /* Linux 5.18; older headers lack it */
#endif

/* The one place that hands the zspage area's memory back to the kernel:
 * BYTES from zspage ID's base.
 *
 * A private area: under mlockall the pages are locked, and MADV_DONTNEED
 * refuses them (EINVAL).  MADV_DONTNEED_LOCKED frees them under the
 * address-space lock taken for reading, as a page fault takes it.  Before
 * Linux 5.18 (EINVAL again) a fresh anonymous mapping is put over the
 * range instead; given the same flags as its neighbours (MADV_DONTDUMP
 * too), it is merged back into one mapping and vm.max_map_count is not
 * consumed, but it takes that lock for writing, behind every thread in a
 * page fault: under whole-machine pressure one of those may be waiting for
 * reclaim, and so for this device (doc/design.md, "Staying alive under
 * memory pressure").
 *
 * A shared area (config.shared_area): MADV_DONTNEED would only unmap the
 * pages from this process and leave them in the shared-memory object, so
 * MADV_REMOVE punches them out of it.  The kernel refuses MADV_REMOVE on a
 * locked mapping (madvise_remove: EINVAL on VM_LOCKED), which is why the
 * caller munlocks the area before handing it over (a SysV segment locked
 * with SHM_LOCK stays unswappable without it); if it did not, the pages
 * stay, a leak of memory and not of data.  Never a mapping put over it:
 * that would cut the range off from the segment.
 */
void
release_area (struct zs_pool *pool, uint32_t id, size_t bytes)
{
  void *base = zspage_base (pool, id);

  if (pool->zspage_area_shared) {
    madvise (base, bytes, MADV_REMOVE);
    return;
  }
  if (madvise (base, bytes, MADV_DONTNEED) == 0 || errno != EINVAL)
    return;
  if (madvise (base, bytes, MADV_DONTNEED_LOCKED) == 0 || errno != EINVAL)
    return;
  if (map_uncommitted (base, bytes))
    madvise (base, bytes, MADV_DONTDUMP);
}

void
release_pages (struct zs_pool *pool, uint32_t id, unsigned pages)
{
  atomic_fetch_add_explicit (&pool->pages_given_back, pages,
                             memory_order_relaxed);
  release_area (pool, id, (size_t) pages * CSWAP_PAGE_SIZE);
}

/* Faults in a new zspage's pages with one system call instead of one
 * page fault each: on a virtual machine a fault is an exit to the
 * hypervisor, and the store measured 10% of its write time in them.
 * Failure (a kernel before 5.14) only means the pages fault in later.
 */
void
populate_pages (struct zs_pool *pool, uint32_t id, unsigned pages)
{
  atomic_fetch_add_explicit (&pool->pages_faulted_in, pages,
                             memory_order_relaxed);
  madvise (zspage_base (pool, id), (size_t) pages * CSWAP_PAGE_SIZE,
           MADV_POPULATE_WRITE);
}

/* The pool and class locks guard a few list and bitmap operations.  When
 * two threads meet on one, sleeping in the kernel and being woken costs
 * far more than the critical section (two system calls, and on a virtual
 * machine exits to the hypervisor): an adaptive mutex spins briefly first.
 * bench/alloc, alloc+free pairs on 2 threads: 2.69 M/s -> 3.97 M/s.
 */
static void
init_short_lock (pthread_mutex_t *lock)
{
  pthread_mutexattr_t attr;

  pthread_mutexattr_init (&attr);
  pthread_mutexattr_settype (&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
  pthread_mutex_init (lock, &attr);
  pthread_mutexattr_destroy (&attr);
}

/* What a config makes of the pool's address space. */
struct pool_layout {
  unsigned max_pages_per_zspage;
  unsigned class_count;
  uint64_t reserve_limit_pages;
  uint32_t capacity_zspages;
  size_t zspage_stride_bytes;
  size_t zspage_area_bytes;
};

/* Fills LAYOUT from CONFIG; false for a bad config. */
static bool
pool_layout (const struct zs_pool_config *config, struct pool_layout *layout)
{
  uint64_t capacity;

  layout->max_pages_per_zspage = config->max_pages_per_zspage
    ? config->max_pages_per_zspage : ZS_DEFAULT_PAGES_PER_ZSPAGE;
  if (layout->max_pages_per_zspage > ZS_MAX_PAGES_PER_ZSPAGE
      || config->max_objects == 0 || config->max_objects > ZS_MAX_ZSPAGE_ID)
    return false;
  layout->class_count = size_class_count (layout->max_pages_per_zspage);
  layout->reserve_limit_pages = config->reserve_bytes / CSWAP_PAGE_SIZE;
  /* The reserve holds ids too: at most one per page it may hold. */
  capacity = config->max_objects + layout->class_count + ZS_SPARE_ZSPAGES
    + layout->reserve_limit_pages;
  if (capacity > ZS_MAX_ZSPAGE_ID)
    return false;
  layout->capacity_zspages = capacity;
  layout->zspage_stride_bytes
    = (size_t) layout->max_pages_per_zspage * CSWAP_PAGE_SIZE;
  /* + 1: id 0 is never used. */
  layout->zspage_area_bytes = (capacity + 1) * layout->zspage_stride_bytes;
  return true;
}

size_t
zs_pool_area_bytes (const struct zs_pool_config *config)
{
  struct pool_layout layout;

  return pool_layout (config, &layout) ? layout.zspage_area_bytes : 0;
}

struct zs_pool *
zs_pool_create (const struct zs_pool_config *config)
{
  struct pool_layout layout;
  struct zs_pool *pool;

  if (!pool_layout (config, &layout)) {
    errno = EINVAL;
    return NULL;
  }

  pool = aligned_alloc (_Alignof (struct zs_pool), sizeof *pool);
  if (pool == NULL)
    return NULL;
  memset (pool, 0, sizeof *pool);
  pool->max_pages_per_zspage = layout.max_pages_per_zspage;
  pool->owner_ops = config->owner_ops;
  pool->owner = config->owner;
  size_classes_init (pool);

  pool->reserve_limit_pages = layout.reserve_limit_pages;
  pool->refill_thread_init = config->refill_thread_init;
  pool->capacity_zspages = layout.capacity_zspages;
  pool->zspage_stride_bytes = layout.zspage_stride_bytes;
  pool->zspage_area_bytes = layout.zspage_area_bytes;
  pool->zspages_bytes = (layout.capacity_zspages + 1) * sizeof (struct zspage);
  pool->zspage_area_shared = config->shared_area != NULL;
  pool->zspage_area = pool->zspage_area_shared ? config->shared_area
    : map_uncommitted (NULL, pool->zspage_area_bytes);
  pool->zspages = map_uncommitted (NULL, pool->zspages_bytes);
  if (pool->zspage_area == NULL || pool->zspages == NULL
      || madvise (pool->zspage_area, pool->zspage_area_bytes,
                  MADV_DONTDUMP) == -1) {
    int saved_errno = errno;

    if (pool->zspage_area && !pool->zspage_area_shared)
      munmap (pool->zspage_area, pool->zspage_area_bytes);
    if (pool->zspages)
      munmap (pool->zspages, pool->zspages_bytes);
    free (pool);
    errno = saved_errno;
    return NULL;
  }

  init_short_lock (&pool->lock);
  pthread_cond_init (&pool->reserve_wanted_cond, NULL);
  monotonic_cond_init (&pool->reserve_stocked_cond);
  for (unsigned i = 0; i < pool->class_count; i++)
    init_short_lock (&pool->classes[i].lock);
  return pool;
}

void
zs_pool_destroy (struct zs_pool *pool)
{
  if (pool == NULL)
    return;
  for (unsigned i = 0; i < pool->class_count; i++)
    pthread_mutex_destroy (&pool->classes[i].lock);
  pthread_cond_destroy (&pool->reserve_wanted_cond);
  pthread_cond_destroy (&pool->reserve_stocked_cond);
  pthread_mutex_destroy (&pool->lock);
  if (!pool->zspage_area_shared)
    munmap (pool->zspage_area, pool->zspage_area_bytes);
  munmap (pool->zspages, pool->zspages_bytes);
  free (pool);
}

/* Returns a free zspage id, or 0 when the reservation is exhausted.
 * Pool lock held.
 */
uint32_t
zspage_id_alloc_locked (struct zs_pool *pool)
{
  uint32_t id = pool->free_id_head;
  uint32_t high_water_id;

  if (id)
    pool->free_id_head = zspage_desc (pool, id)->link.next_id;
  else {
    high_water_id = atomic_load_explicit (&pool->high_water_id,
                                          memory_order_relaxed);
    if (high_water_id == pool->capacity_zspages)
      return 0;
    id = high_water_id + 1;
    atomic_store_explicit (&pool->high_water_id, id, memory_order_relaxed);
  }
  pool->ids_in_use++;
  return id;
}

/* Gives back the PAGES pages and then the id of a zspage that its class
 * has already forgotten (zspage_detach_empty).  No lock held: the pages
 * must be gone before the id can be handed out again.
 */
void
zspage_id_free (struct zs_pool *pool, uint32_t id, unsigned pages)
{
  release_pages (pool, id, pages);

  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&pool->lock);
  zspage_desc (pool, id)->link.next_id = pool->free_id_head;
  pool->free_id_head = id;
  pool->ids_in_use--;
}
