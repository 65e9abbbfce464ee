/* cswap: a zsmalloc-style slab allocator for compressed objects.
 *
 * A general object allocator for objects of 1..4096 bytes that packs them
 * densely and can compact itself.  It knows nothing of pages, swap or
 * codecs.  The design follows the kernel's mm/zsmalloc.c:
 *
 *  - size classes 16 bytes apart; each class keeps its objects in zspages,
 *    runs of 1..max_pages_per_zspage contiguous 4 KiB pages, the run length
 *    chosen per class for the least wasted bytes; classes whose (pages per
 *    zspage, objects per zspage) equal their larger neighbour's are merged;
 *  - objects too large for any multi-object class go to the huge class:
 *    one object in a one-page zspage;
 *  - each class sorts its zspages into 12 fullness groups (empty, <10%,
 *    10-19%, ..., 80-89%, 90-99%, full), allocation takes the fullest
 *    non-full zspage, compaction moves objects from the emptiest zspages
 *    into the fullest.
 *
 * Where cswap differs from the kernel is the handle.  The kernel hands out
 * an 8-byte handle that points at the object's location and puts an 8-byte
 * header holding the handle in front of every object: 16 bytes per object.
 * Here the handle *is* the location (zspage id and object index), which the
 * owner keeps in its own table, and each object carries a 4-byte owner
 * cookie (the owner's own index, e.g. a page-table slot number) so that
 * compaction can tell the owner where the object went.  That is 4 bytes per
 * object instead of 16, and no handle table at all.
 *
 * Moving an object and the owner's use of it are serialised by the owner's
 * own lock for that cookie (zs_owner_ops).  Therefore the owner must hold
 * that lock whenever it reads or writes an object through zs_object(),
 * from zs_malloc() until it has published the handle, and when it calls
 * zs_free().
 *
 * Lock order: common/lock-order.h (the owner lock, zs_owner_ops.lock, is
 * taken before the allocator's own).
 */
#ifndef CSWAP_ZSMALLOC_H
#define CSWAP_ZSMALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A handle names an allocated object.  0 is never a valid handle.  Every
 * handle fits in ZS_HANDLE_BITS bits, so owners may pack it with other
 * fields.
 */
typedef uint64_t zs_handle;
#define ZS_HANDLE_NONE ((zs_handle) 0)
#define ZS_HANDLE_BITS 44

#define ZS_MAX_OBJECT_SIZE 4096
#define ZS_MAX_OWNER_COOKIE ((uint32_t) INT32_MAX)
#define ZS_DEFAULT_PAGES_PER_ZSPAGE 8
#define ZS_MAX_PAGES_PER_ZSPAGE 16

/* Fullness groups, as the kernel's ZS_INUSE_RATIO_*: group 0 holds empty
 * zspages, group 1 those below 10% in use, group g (1..10) those with
 * (g-1)*10% <= in use < g*10%, group 11 the full ones.
 */
#define ZS_FULLNESS_GROUPS 12

/* How compaction reaches the owner of an object.  All three are called
 * from the compacting thread.  lock/unlock take and release the same lock
 * the owner holds while it uses the object with that cookie.  retarget is
 * called with that lock held after the object's bytes have been copied to
 * TO: if the owner still refers to FROM, it must switch to TO and return
 * true; otherwise (the owner freed or replaced the object meanwhile) it
 * must change nothing and return false.
 */
struct zs_owner_ops {
  void (*lock) (void *owner, uint32_t cookie);
  void (*unlock) (void *owner, uint32_t cookie);
  bool (*retarget) (void *owner, uint32_t cookie, zs_handle from, zs_handle to);
};

struct zs_pool_config {
  /* Longest zspage chain: 1..16; 0 means ZS_DEFAULT_PAGES_PER_ZSPAGE. */
  unsigned max_pages_per_zspage;
  /* The most objects that will ever be live at once.  Sizes the virtual
   * address space the pool reserves (nothing is resident until used).
   */
  uint64_t max_objects;
  const struct zs_owner_ops *owner_ops; /* required for compaction */
  void *owner;
  /* Warm memory kept for new zspages (see zs_pool_start_refill): empty
   * zspages are kept here rather than given back to the kernel until it
   * holds this much.  0: none, every empty zspage's pages are released.
   */
  uint64_t reserve_bytes;
  /* Called first on the refill thread, or NULL.  While that thread runs
   * it faults in every new zspage, for allocations that may be serving a
   * swap-out: a daemon readies it as it does its request threads.
   */
  void (*refill_thread_init) (void);
  /* NULL: the pool maps its zspage area itself, private.  Else the
   * caller's mapping of zs_pool_area_bytes (CONFIG) bytes, shared
   * (MAP_SHARED: a SysV segment, a memfd), that outlives the pool: the
   * pool neither maps nor unmaps it, gives its pages back with
   * MADV_REMOVE, which the kernel refuses on a locked mapping (munlock
   * it first: a segment locked with SHM_LOCK stays unswappable), and a
   * new pool with the same config over the same area can adopt the
   * objects of a pool that died (zs_pool_adopt_object).  The area is
   * address space for every object at once, larger than the machine's
   * memory: shmget it with SHM_NORESERVE (without, 64 GiB failed with
   * ENOMEM on a 23 GiB host).
   */
  void *shared_area;
};

struct zs_pool;

/* Returns NULL with errno set on failure (EINVAL for a bad config). */
extern struct zs_pool *zs_pool_create (const struct zs_pool_config *config);
extern void zs_pool_destroy (struct zs_pool *pool);

/* The bytes of the zspage area a pool of CONFIG needs (its shared_area
 * ignored), 0 for a bad config: the size of a shared area.  Address
 * space: only the pages of live zspages are ever resident.
 */
extern size_t zs_pool_area_bytes (const struct zs_pool_config *config);

/* Adoption (adopt.c): a pool over a shared area whose previous pool died
 * (its process killed) takes over the objects its owner still refers to.
 * Create the pool with the same config over the same area, then, before
 * any other call on it (no refill thread yet, one thread), name each
 * object the owner still refers to, and end.  Nothing in the area but
 * those objects' bytes is trusted: every other slot and zspage is free
 * after zs_pool_adopt_end, and the zspages left with no object are given
 * back to the kernel.
 *
 * zs_pool_adopt_object: HANDLE, allocated by zs_malloc (pool, SIZE,
 * COOKIE) (any SIZE of the same size class will do).  Returns 0, or -1
 * with errno EINVAL when it cannot be one: handle 0 or beyond the
 * capacity, SIZE 0 or above ZS_MAX_OBJECT_SIZE, COOKIE above
 * ZS_MAX_OWNER_COOKIE, the object index beyond its class's objects per
 * zspage, SIZE's class not that of objects already adopted in the same
 * zspage, the same handle twice; a refused object changes nothing, and
 * adoption goes on without it.  Adoption cannot tell a handle the dead
 * pool never gave out from one it did: the owner must name only handles
 * it published, with their lengths.
 */
extern int zs_pool_adopt_object (struct zs_pool *pool, zs_handle handle,
                                 size_t size, uint32_t cookie);
/* After the last zs_pool_adopt_object (or none): the pool is whole, its
 * reserve empty.
 */
extern void zs_pool_adopt_end (struct zs_pool *pool);

/* The reserve: a new zspage takes warm pages from it when it can, and
 * otherwise pays for the kernel to find, zero and map them on the spot.
 * zs_pool_start_refill starts a thread that keeps it filled ahead of
 * demand with pages already faulted in, so that an allocation, which may
 * be serving a swap-out, does not wait for the kernel to find free memory.
 * Start it after any fork (threads do not survive one); stop it before
 * zs_pool_destroy.  Returns 0, or -1 with errno set.
 */
extern int zs_pool_start_refill (struct zs_pool *pool);
extern void zs_pool_stop_refill (struct zs_pool *pool);

/* Allocates an object of SIZE bytes (1..ZS_MAX_OBJECT_SIZE) owned by
 * COOKIE (<= ZS_MAX_OWNER_COOKIE).  Returns ZS_HANDLE_NONE with errno set:
 * EINVAL for a bad size or cookie, ENOSPC when it needs a new zspage and
 * that would take the pool past its page limit, ENOMEM when the pool is
 * out of its reserved capacity, ETIMEDOUT when it needs a new zspage and
 * the refill thread (which then makes every new zspage) did not make one
 * in time, as when the machine has no free memory left.  Its contents are
 * undefined.
 */
extern zs_handle zs_malloc (struct zs_pool *pool, size_t size, uint32_t cookie);
extern void zs_free (struct zs_pool *pool, zs_handle handle);

/* The page limit: zs_pool_pages_used never exceeds PAGES (0: no limit),
 * however many threads allocate at once.  Objects still go into room in
 * existing zspages at the limit; only new zspages are refused.  Lowering
 * it below what is in use frees nothing: it stops growth.  The reserve's
 * warm pages are not counted.
 */
extern void zs_pool_set_page_limit (struct zs_pool *pool, uint64_t pages);
/* The pages a new zspage for an object of SIZE takes (0 for a bad size):
 * the room an allocation may need below the limit.
 */
extern unsigned zs_new_zspage_pages (struct zs_pool *pool, size_t size);

/* The object's memory: valid while the caller holds the owner lock. */
extern void *zs_object (struct zs_pool *pool, zs_handle handle);

/* Compaction.  Only one runs per pool at a time: a second caller returns
 * -1 with errno EBUSY at once.  Bounded critical sections: other threads'
 * allocations, frees and accesses proceed while it runs.
 */
struct zs_compact_result {
  uint64_t pages_freed;
  uint64_t objects_moved;
};
extern int zs_compact (struct zs_pool *pool, struct zs_compact_result *result);
extern int zs_compact_class (struct zs_pool *pool, unsigned class_index,
                             struct zs_compact_result *result);

struct zs_pool_stats {
  uint64_t objects_allocated;   /* object slots in all zspages */
  uint64_t objects_used;        /* live objects */
  uint64_t object_bytes;        /* live objects x their class size */
  uint64_t pages_used;          /* 4 KiB pages held by zspages */
  uint64_t zspages;
  uint64_t metadata_bytes;      /* every other byte the pool uses */
  uint64_t reserve_pages;       /* warm pages kept for new zspages */
  uint64_t reserve_misses;      /* new zspages the reserve did not hold */
  uint64_t reserve_timeouts;    /* allocations failed with ETIMEDOUT */
  uint64_t pages_compacted;     /* freed by compaction, since creation */
  uint64_t objects_moved;       /* by compaction, since creation */
  uint64_t pages_faulted_in;    /* for new zspages, since creation */
  uint64_t pages_given_back;    /* of dead zspages, since creation */
};
extern void zs_pool_stats (struct zs_pool *pool, struct zs_pool_stats *stats);

/* Pages held by zspages now: one atomic load, cheap enough to check on
 * every write against a memory limit (zs_pool_stats takes every class lock).
 */
extern uint64_t zs_pool_pages_used (struct zs_pool *pool);

/* Per-class table, as the kernel's zsmalloc "classes" debugfs file.
 * Classes are numbered 0..zs_class_count()-1 in increasing size, merged
 * classes counted once.
 */
struct zs_class_stats {
  unsigned size;                /* bytes per object slot, header included */
  unsigned pages_per_zspage;
  unsigned objects_per_zspage;
  bool huge;
  uint64_t zspages[ZS_FULLNESS_GROUPS];
  uint64_t objects_allocated;
  uint64_t objects_used;
  uint64_t pages_used;
  uint64_t pages_freeable;      /* what compaction could free now */
};
extern unsigned zs_class_count (struct zs_pool *pool);
extern void zs_class_stats (struct zs_pool *pool, unsigned class_index,
                            struct zs_class_stats *stats);

/* The smallest object size that goes to the huge class (one object per
 * page).  An owner that would store an object at least this big gains
 * nothing by compressing it: it may as well store the original page.
 */
extern size_t zs_huge_class_size (struct zs_pool *pool);

/* The zspage holding HANDLE's object, as a number that no other live
 * zspage of the pool has: for benchmarks and tests that study
 * fragmentation and compaction.
 */
extern uint64_t zs_handle_zspage (zs_handle handle);

/* Checks every internal invariant (fullness groups, counters, free
 * lists).  Returns 0, or -1 after printing what is wrong to stderr.  Slow:
 * for tests.
 */
extern int zs_pool_check (struct zs_pool *pool);

#endif /* CSWAP_ZSMALLOC_H */
