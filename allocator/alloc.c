/* cswap allocator: zs_malloc, zs_free, zs_object.
 *
 * zs_malloc takes a slot from the fullest non-full zspage of the class
 * (group 10 down to 1), which keeps the nearly-empty zspages draining so
 * that frees can empty them; only when no zspage has room does it take a
 * new one, outside the class lock, since that may fault its pages in.
 * zs_free frees a zspage as soon as it is empty, unless compaction holds
 * it isolated: compaction frees it then.
 *
 * The page limit is hard: a new zspage's pages are charged to pages_used
 * with one compare-and-swap that fails past the limit, before the zspage
 * is taken.  Checking first and charging later would let every thread
 * that checked at once take a zspage of up to 16 pages past the limit.
 *
 * No pool-wide lock on this path: the pool lock is only taken to get or
 * give back a zspage id.  Lock order: common/lock-order.h.
 */
#include <errno.h>

#include "zs-internal.h"

static zs_handle
alloc_from (struct zs_pool *pool, struct size_class *class, uint32_t id,
            uint32_t cookie)
{
  unsigned obj_index = obj_alloc_slot (pool, class, id, cookie);

  class->objects_used++;
  return handle_make (id, obj_index);
}

/* Charges a new zspage of CLASS to the pool, unless that would pass its
 * page limit.  Class lock held, so that zs_pool_check, holding every
 * class lock, sees pages_used and the classes' counts agree.
 */
static bool
zspage_charge (struct zs_pool *pool, struct size_class *class)
{
  unsigned pages = class->pages_per_zspage;
  uint64_t limit = atomic_load_explicit (&pool->page_limit,
                                         memory_order_relaxed);
  uint64_t used = atomic_load_explicit (&pool->pages_used,
                                        memory_order_relaxed);

  do {
    if (limit && used + pages > limit)
      return false;
  } while (!atomic_compare_exchange_weak_explicit (&pool->pages_used, &used,
                                                   used + pages,
                                                   memory_order_relaxed,
                                                   memory_order_relaxed));
  class->zspages_being_taken++;
  return true;
}

/* Undoes zspage_charge when the zspage could not be had.  Class lock held. */
static void
zspage_uncharge (struct zs_pool *pool, struct size_class *class)
{
  class->zspages_being_taken--;
  atomic_fetch_sub_explicit (&pool->pages_used, class->pages_per_zspage,
                             memory_order_relaxed);
}

zs_handle
zs_malloc (struct zs_pool *pool, size_t size, uint32_t cookie)
{
  struct size_class *class;
  zs_handle handle;
  uint32_t id;

  if (size == 0 || size > ZS_MAX_OBJECT_SIZE || cookie > ZS_MAX_OWNER_COOKIE) {
    errno = EINVAL;
    return ZS_HANDLE_NONE;
  }
  class = size_class_for_request (pool, size);

  pthread_mutex_lock (&class->lock);
  id = zspage_first_in_groups (class, ZS_GROUP_FULL - 1, ZS_GROUP_EMPTY + 1);
  if (id) {
    handle = alloc_from (pool, class, id, cookie);
    zspage_fix_fullness (pool, class, id);
    pthread_mutex_unlock (&class->lock);
    return handle;
  }
  if (!zspage_charge (pool, class)) {
    pthread_mutex_unlock (&class->lock);
    errno = ENOSPC;
    return ZS_HANDLE_NONE;
  }
  pthread_mutex_unlock (&class->lock);

  id = zspage_take (pool, class->pages_per_zspage);
  int take_errno = errno;
  pthread_mutex_lock (&class->lock);
  if (id == 0) {
    zspage_uncharge (pool, class);
    pthread_mutex_unlock (&class->lock);
    errno = take_errno;
    return ZS_HANDLE_NONE;
  }
  class->zspages_being_taken--;
  zspage_attach (pool, class, id);
  handle = alloc_from (pool, class, id, cookie);
  zspage_insert (pool, class, id);
  pthread_mutex_unlock (&class->lock);
  return handle;
}

void
zs_free (struct zs_pool *pool, zs_handle handle)
{
  uint32_t id = handle_zspage_id (handle);
  struct zspage *zspage = zspage_desc (pool, id);
  struct size_class *class;

  if (handle == ZS_HANDLE_NONE)  /* like free (NULL) */
    return;
  class = &pool->classes[zspage->class_index];
  pthread_mutex_lock (&class->lock);
  obj_free_slot (pool, class, id, handle_obj_index (handle));
  class->objects_used--;
  if (zspage_is_isolated (zspage)) {
    pthread_mutex_unlock (&class->lock);
    return;
  }
  if (zspage->inuse) {
    zspage_fix_fullness (pool, class, id);
    pthread_mutex_unlock (&class->lock);
    return;
  }
  zspage_remove (pool, class, id);
  zspage_detach_empty (pool, class, id);
  pthread_mutex_unlock (&class->lock);
  zspage_give_back (pool, id, class->pages_per_zspage);
}

void
zs_pool_set_page_limit (struct zs_pool *pool, uint64_t pages)
{
  atomic_store_explicit (&pool->page_limit, pages, memory_order_relaxed);
}

unsigned
zs_new_zspage_pages (struct zs_pool *pool, size_t size)
{
  if (size == 0 || size > ZS_MAX_OBJECT_SIZE)
    return 0;
  return size_class_for_request (pool, size)->pages_per_zspage;
}

void *
zs_object (struct zs_pool *pool, zs_handle handle)
{
  uint32_t id = handle_zspage_id (handle);
  const struct size_class *class
    = &pool->classes[zspage_desc (pool, id)->class_index];

  return obj_slot (pool, class, id, handle_obj_index (handle))
    + class_header_bytes (class);
}

uint64_t
zs_handle_zspage (zs_handle handle)
{
  return handle_zspage_id (handle);
}
