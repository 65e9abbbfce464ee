/* cswap allocator internals, shared by the allocator/ sources and nothing else.
 *
 * Memory layout.  A pool reserves one large virtual range (MAP_NORESERVE)
 * and carves it at a fixed stride of max_pages_per_zspage pages: zspage id
 * I lives at zspage_area + I * stride, and only its first pages_per_zspage
 * pages are ever touched.  A second reservation holds the descriptor table,
 * one 16-byte struct zspage per id.  Ids start at 1 so that handle 0 is
 * never valid.  Nothing is mapped per zspage (vm.max_map_count is 65530).
 *
 *   zspage_area:  [ id 0 unused ][ id 1: pages .. | untouched ][ id 2 ... ]
 *   zspages:      [ desc 0 unused ][ desc 1 ][ desc 2 ] ...
 *
 * A handle is zspage_id << ZS_OBJ_INDEX_BITS | object index.  Each object
 * slot of a multi-object class starts with a 4-byte header: an allocated
 * slot holds (cookie << 1) | 1, a freed slot (next free index << 1) | 0, so
 * the free list is threaded through the freed slots and costs no
 * descriptor space; slots never used yet lie beyond the descriptor's
 * fresh_index and have no header.  The huge class (one object in a one-page zspage) has no header:
 * its owner cookie lives in the descriptor, in a union with the list links,
 * which a huge zspage never uses because it is always full.
 *
 * Fullness lists: only groups 1..10 (partly used) are linked; empty zspages
 * are freed at once and full ones are never looked up (zs_malloc and
 * compaction both skip them), so groups 0 and 11 only have counters.
 *
 * Lock order: common/lock-order.h.
 */
#ifndef CSWAP_ZS_INTERNAL_H
#define CSWAP_ZS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "page.h"
#include "zsmalloc.h"

#define ZS_MIN_CLASS_SIZE 32
#define ZS_CLASS_DELTA 16
/* Size classes before merging: 32, 48, ..., 4096. */
#define ZS_RAW_CLASS_COUNT \
  ((ZS_MAX_OBJECT_SIZE - ZS_MIN_CLASS_SIZE) / ZS_CLASS_DELTA + 1)
/* Merged classes plus the huge class never exceed the raw count: the raw
 * class 4096 always has one object per zspage and so is never a regular
 * class.
 */
#define ZS_MAX_CLASSES ZS_RAW_CLASS_COUNT
#define ZS_OBJ_HEADER_BYTES 4
#define ZS_OBJ_INDEX_BITS 12
#define ZS_MAX_OBJS_PER_ZSPAGE \
  (ZS_MAX_PAGES_PER_ZSPAGE * CSWAP_PAGE_SIZE / ZS_MIN_CLASS_SIZE)
#define ZS_MAX_ZSPAGE_ID \
  ((UINT64_C (1) << (ZS_HANDLE_BITS - ZS_OBJ_INDEX_BITS)) - 1)
/* End of a free list, in the descriptor and in a free slot's header. */
#define ZS_OBJ_NONE 0xffffu

#define ZS_GROUP_EMPTY 0
#define ZS_GROUP_FULL (ZS_FULLNESS_GROUPS - 1)

_Static_assert (ZS_MAX_OBJS_PER_ZSPAGE <= (1u << ZS_OBJ_INDEX_BITS),
                "object index must fit its handle bits");
_Static_assert (ZS_MAX_OBJS_PER_ZSPAGE < ZS_OBJ_NONE,
                "ZS_OBJ_NONE must not be a valid object index");
_Static_assert (ZS_MAX_CLASSES <= 256, "class index must fit a byte");
_Static_assert (ZS_MAX_ZSPAGE_ID <= UINT32_MAX, "zspage ids are 32 bits");

/* The descriptor of one zspage.  Protected by its class's lock from
 * zspage_attach to zspage_detach_empty, except that class_index, written
 * before the zspage's first handle is handed out and not changed while
 * any object in it is live, is read by zs_object() without a lock.  A
 * free descriptor is protected by the pool lock and links the free-id
 * list through link.next_id.  Between zspage_take and zspage_attach,
 * and between zspage_detach_empty and zspage_give_back, an id is in
 * flight: neither live nor on the free list nor in the reserve.
 */
struct zspage {
  union {
    struct {
      uint32_t prev_id, next_id;
    } link;
    uint32_t huge_cookie;
  };
  uint16_t inuse;               /* allocated objects */
  uint16_t free_head;           /* first free object index, or ZS_OBJ_NONE */
  uint8_t class_index;
  uint8_t state;                /* ZSPAGE_STATE_* bits: use the accessors */
  /* Slots from here on were never used: free, but their headers are not
   * written yet, so a new zspage touches a page only when an object is
   * first put in it (the kernel threads the free list through every slot
   * at once, faulting in the whole zspage).
   */
  uint16_t fresh_index;
};
_Static_assert (sizeof (struct zspage) == 16, "descriptor must stay small");

#define ZSPAGE_STATE_GROUP_MASK 0x0f
#define ZSPAGE_STATE_ISOLATED 0x10
#define ZSPAGE_STATE_LIVE 0x20

static inline unsigned
zspage_group (const struct zspage *zspage)
{
  return zspage->state & ZSPAGE_STATE_GROUP_MASK;
}

static inline void
zspage_set_group (struct zspage *zspage, unsigned group)
{
  zspage->state = (zspage->state & ~ZSPAGE_STATE_GROUP_MASK) | group;
}

static inline bool
zspage_is_isolated (const struct zspage *zspage)
{
  return zspage->state & ZSPAGE_STATE_ISOLATED;
}

static inline void
zspage_set_isolated (struct zspage *zspage, bool isolated)
{
  if (isolated)
    zspage->state |= ZSPAGE_STATE_ISOLATED;
  else
    zspage->state &= ~ZSPAGE_STATE_ISOLATED;
}

static inline bool
zspage_is_live (const struct zspage *zspage)
{
  return zspage->state & ZSPAGE_STATE_LIVE;
}

/* The kernel's get_fullness_group(): the +1 keeps group 0 for empty
 * zspages, so a zspage with a single object out of many is in group 1
 * ("below 10%") rather than looking empty.
 */
static inline unsigned
fullness_group (unsigned inuse, unsigned objs_per_zspage)
{
  if (inuse == 0)
    return ZS_GROUP_EMPTY;
  if (inuse == objs_per_zspage)
    return ZS_GROUP_FULL;
  return 100 * inuse / objs_per_zspage / 10 + 1;
}

static inline bool
fullness_group_is_linked (unsigned group)
{
  return group != ZS_GROUP_EMPTY && group != ZS_GROUP_FULL;
}

/* Handles. */
static inline zs_handle
handle_make (uint32_t zspage_id, unsigned obj_index)
{
  return (zs_handle) zspage_id << ZS_OBJ_INDEX_BITS | obj_index;
}

static inline uint32_t
handle_zspage_id (zs_handle handle)
{
  return handle >> ZS_OBJ_INDEX_BITS;
}

static inline unsigned
handle_obj_index (zs_handle handle)
{
  return handle & ((1u << ZS_OBJ_INDEX_BITS) - 1);
}

/* In-object headers. */
static inline uint32_t
obj_header_allocated (uint32_t cookie)
{
  return cookie << 1 | 1;
}

static inline uint32_t
obj_header_free (unsigned next_free_index)
{
  return (uint32_t) next_free_index << 1;
}

static inline bool
obj_header_is_allocated (uint32_t header)
{
  return header & 1;
}

/* The cookie of an allocated slot, the next free index of a free one. */
static inline uint32_t
obj_header_value (uint32_t header)
{
  return header >> 1;
}

struct size_class {
  pthread_mutex_t lock;
  /* Protected by lock. */
  uint32_t list_head[ZS_FULLNESS_GROUPS];       /* zspage ids, 0: empty */
  uint64_t zspages_in_group[ZS_FULLNESS_GROUPS]; /* isolated ones excluded */
  uint64_t zspages;             /* isolated ones included */
  uint64_t objects_used;
  /* Copies made by a move whose loser slot is not yet freed: counted in
   * the zspages' inuse, not in objects_used.
   */
  unsigned objects_being_moved;
  /* New zspages charged to pages_used but still being taken (alloc.c):
   * counted in pages_used, not yet in zspages.
   */
  unsigned zspages_being_taken;
  /* Constant after zs_pool_create. */
  unsigned size_bytes;          /* per slot, header included */
  unsigned pages_per_zspage;
  unsigned objs_per_zspage;
  unsigned index;
  bool huge;
} __attribute__ ((aligned (64)));  /* one cache line apart: no false sharing */

struct zs_pool {
  struct size_class classes[ZS_MAX_CLASSES];
  unsigned class_count;         /* the last one is the huge class */
  uint8_t class_of_raw[ZS_RAW_CLASS_COUNT]; /* raw class -> merged class */
  size_t huge_min_request_bytes;
  unsigned max_pages_per_zspage;

  const struct zs_owner_ops *owner_ops;
  void *owner;

  size_t zspage_stride_bytes;
  unsigned char *zspage_area;
  size_t zspage_area_bytes;
  bool zspage_area_shared;      /* the caller's (config.shared_area) */
  struct zspage *zspages;       /* descriptor table, indexed by id */
  size_t zspages_bytes;
  uint32_t capacity_zspages;

  pthread_mutex_t lock;
  /* Protected by lock. */
  uint32_t free_id_head;        /* free-id list through link.next_id */
  uint32_t ids_in_use;          /* handed out by zspage_id_alloc_locked */
  /* The reserve (reserve.c): warm zspage ids by page count, linked
   * through link.next_id, neither live nor on the free-id list.
   */
  uint32_t reserve_head[ZS_MAX_PAGES_PER_ZSPAGE + 1];
  uint32_t reserve_count[ZS_MAX_PAGES_PER_ZSPAGE + 1];
  uint64_t reserve_pages, reserve_limit_pages;
  uint32_t reserve_wanted;      /* bit k: k-page zspages have been taken */
  uint64_t reserve_misses;      /* zspages the reserve did not hold when taken */
  uint64_t reserve_timeouts;    /* takers the refill thread did not serve in time */
  /* Threads in zspage_take waiting for the refill thread, by length. */
  uint32_t reserve_waiters[ZS_MAX_PAGES_PER_ZSPAGE + 1];
  pthread_cond_t reserve_wanted_cond;
  pthread_cond_t reserve_stocked_cond;  /* a waited-for length was stocked */
  bool refill_running, refill_stop;
  bool refill_waiting;          /* the refill thread sleeps on the cond */
  pthread_t refill_thread;
  void (*refill_thread_init) (void);
  /* Written under lock; read without it by the statistics. */
  _Atomic uint32_t high_water_id;

  /* All classes' zspages (and zspages being taken) x their pages, kept
   * apart from the per-class counters for zs_pool_pages_used.  A new
   * zspage's pages are charged here under its class lock before it is
   * taken (alloc.c), within PAGE_LIMIT, and uncharged when it is detached
   * empty, also under its class lock.
   */
  _Atomic uint64_t pages_used;
  _Atomic uint64_t page_limit;          /* 0: none */

  atomic_bool compacting;
  _Atomic uint64_t pages_compacted;
  _Atomic uint64_t objects_moved;
  /* Pages faulted in for new zspages and given back from dead ones:
   * their difference is the pool's churn, each page of it a zeroed page
   * from the kernel and often a reclaim.
   */
  _Atomic uint64_t pages_faulted_in, pages_given_back;
};

static inline struct zspage *
zspage_desc (struct zs_pool *pool, uint32_t id)
{
  return &pool->zspages[id];
}

static inline unsigned char *
zspage_base (struct zs_pool *pool, uint32_t id)
{
  return pool->zspage_area + (size_t) id * pool->zspage_stride_bytes;
}

static inline unsigned
class_header_bytes (const struct size_class *class)
{
  return class->huge ? 0 : ZS_OBJ_HEADER_BYTES;
}

static inline unsigned char *
obj_slot (struct zs_pool *pool, const struct size_class *class,
          uint32_t id, unsigned obj_index)
{
  return zspage_base (pool, id) + (size_t) obj_index * class->size_bytes;
}

static inline uint32_t *
obj_header (struct zs_pool *pool, const struct size_class *class,
            uint32_t id, unsigned obj_index)
{
  return (uint32_t *) obj_slot (pool, class, id, obj_index);
}

/* Pages that compaction could free in CLASS: the kernel's
 * zs_can_compact().  Class lock held.
 */
static inline uint64_t
class_pages_freeable (const struct size_class *class)
{
  uint64_t wasted = class->zspages * class->objs_per_zspage
    - class->objects_used;

  return wasted / class->objs_per_zspage * class->pages_per_zspage;
}

/* size-class.c */
extern void size_classes_init (struct zs_pool *pool);
/* How many classes (the huge one included) size_classes_init makes. */
extern unsigned size_class_count (unsigned max_pages_per_zspage);
extern struct size_class *size_class_for_request (struct zs_pool *pool,
                                                  size_t size_bytes);

/* pool.c */
extern uint32_t zspage_id_alloc_locked (struct zs_pool *pool);
extern void populate_pages (struct zs_pool *pool, uint32_t id, unsigned pages);
extern void release_pages (struct zs_pool *pool, uint32_t id, unsigned pages);
/* release_pages without the count, over any BYTES from ID's base. */
extern void release_area (struct zs_pool *pool, uint32_t id, size_t bytes);
/* reserve.c.  zspage_take: a zspage of PAGES pages, warm from the
 * reserve, or made by the refill thread while the caller waits, or (with
 * no refill thread) faulted in on the spot; 0 with errno ETIMEDOUT (the
 * refill thread made none in time) or ENOMEM (out of ids).  No lock held.
 */
extern uint32_t zspage_take (struct zs_pool *pool, unsigned pages);
extern void zspage_give_back (struct zs_pool *pool, uint32_t id,
                              unsigned pages);

extern void zspage_id_free (struct zs_pool *pool, uint32_t id,
                            unsigned pages);

/* zspage.c: with the class lock held. */
extern void zspage_attach (struct zs_pool *pool, struct size_class *class,
                           uint32_t id);
extern void zspage_insert (struct zs_pool *pool, struct size_class *class,
                           uint32_t id);
extern void zspage_remove (struct zs_pool *pool, struct size_class *class,
                           uint32_t id);
extern void zspage_fix_fullness (struct zs_pool *pool,
                                 struct size_class *class, uint32_t id);
extern void zspage_detach_empty (struct zs_pool *pool,
                                 struct size_class *class, uint32_t id);
extern uint32_t zspage_first_in_groups (struct size_class *class,
                                        int first_group, int last_group);
extern uint32_t zspage_isolate (struct zs_pool *pool, struct size_class *class,
                                int first_group, int last_group);
extern bool zspage_putback (struct zs_pool *pool, struct size_class *class,
                            uint32_t id);
extern unsigned obj_alloc_slot (struct zs_pool *pool, struct size_class *class,
                                uint32_t id, uint32_t cookie);
extern void obj_free_slot (struct zs_pool *pool, struct size_class *class,
                           uint32_t id, unsigned obj_index);
extern bool obj_cookie (struct zs_pool *pool, const struct size_class *class,
                        uint32_t id, unsigned obj_index, uint32_t *cookie);

#endif /* CSWAP_ZS_INTERNAL_H */
