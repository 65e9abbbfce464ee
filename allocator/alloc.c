/* cswap allocator: zs_malloc, zs_free, zs_object.
 *
 * zs_malloc takes a slot from the fullest non-full zspage of the class
 * (group 10 down to 1), which keeps the nearly-empty zspages draining so
 * that frees can empty them; only when no zspage has room does it take a
 * new one, outside the class lock, since that may fault its pages in.  zs_free frees a zspage as soon as it is
 * empty, unless compaction holds it isolated: compaction frees it then.
 *
 * Lock order: owner lock -> class lock -> pool lock.  No pool-wide lock on
 * this path: the pool lock is only taken to get or give back a zspage id.
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
  pthread_mutex_unlock (&class->lock);

  id = zspage_take (pool, class->pages_per_zspage);
  if (id == 0) {
    errno = ENOMEM;
    return ZS_HANDLE_NONE;
  }

  pthread_mutex_lock (&class->lock);
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
