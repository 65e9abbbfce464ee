/* cswap allocator: compaction.
 *
 * The kernel's 2023 algorithm ("fine-grained fullness and new compaction
 * algorithm"): while the class could free at least one zspage, move the
 * objects of the emptiest zspage (source) into the fullest non-full one
 * (destination) and stop as soon as the source is empty.  The destination
 * stays isolated across sources until it is full or no source is left, so
 * an object is never moved into a zspage that a later step empties again.
 *
 * Moving one object follows the owner protocol of zs_owner_ops: the owner
 * lock for the object's cookie comes before the class lock, so the cookie
 * is read under the class lock, the class lock dropped, the owner lock
 * taken and the object re-checked.  The class lock is dropped between
 * objects and around the copy and the owner's retarget, so no thread waits
 * on it for more than one bookkeeping step.
 *
 * Only one compaction runs per pool: a flag, not a queue on a lock, so that
 * a second caller returns EBUSY at once instead of waiting to find nothing
 * left to do.
 *
 * Lock order: common/lock-order.h.
 */
#include <errno.h>
#include <string.h>

#include "zs-internal.h"

/* Moves object OBJ_INDEX of SRC into DST if it is still allocated, with
 * the class lock held on entry and on return.  Returns true if it moved.
 */
static bool
migrate_object (struct zs_pool *pool, struct size_class *class,
                uint32_t src, unsigned obj_index, uint32_t dst)
{
  const struct zs_owner_ops *ops = pool->owner_ops;
  uint32_t cookie, cookie_now;
  unsigned header_bytes = class_header_bytes (class);
  unsigned dst_index;
  bool moved = false;

  if (!obj_cookie (pool, class, src, obj_index, &cookie))
    return false;
  pthread_mutex_unlock (&class->lock);
  ops->lock (pool->owner, cookie);
  pthread_mutex_lock (&class->lock);
  /* The owner may have freed it meanwhile; nothing can reuse the slot
   * with the same cookie, since zs_malloc never picks an isolated zspage.
   */
  if (obj_cookie (pool, class, src, obj_index, &cookie_now)
      && cookie_now == cookie) {
    dst_index = obj_alloc_slot (pool, class, dst, cookie);
    class->objects_being_moved++;
    pthread_mutex_unlock (&class->lock);

    /* The owner lock keeps the bytes still; the slot in DST is ours. */
    memcpy (obj_slot (pool, class, dst, dst_index) + header_bytes,
            obj_slot (pool, class, src, obj_index) + header_bytes,
            class->size_bytes - header_bytes);
    moved = ops->retarget (pool->owner, cookie,
                           handle_make (src, obj_index),
                           handle_make (dst, dst_index));

    pthread_mutex_lock (&class->lock);
    if (moved)
      obj_free_slot (pool, class, src, obj_index);
    else
      obj_free_slot (pool, class, dst, dst_index);
    class->objects_being_moved--;
  }
  pthread_mutex_unlock (&class->lock);
  ops->unlock (pool->owner, cookie);
  pthread_mutex_lock (&class->lock);
  return moved;
}

/* Moves objects from SRC to DST until SRC is empty or DST full.  Class
 * lock held; both zspages isolated.
 */
static uint64_t
migrate_zspage (struct zs_pool *pool, struct size_class *class,
                uint32_t src, uint32_t dst)
{
  const struct zspage *src_zspage = zspage_desc (pool, src);
  const struct zspage *dst_zspage = zspage_desc (pool, dst);
  uint64_t objects_moved = 0;

  for (unsigned i = 0; i < src_zspage->fresh_index
         && src_zspage->inuse && dst_zspage->inuse < class->objs_per_zspage;
       i++)
    objects_moved += migrate_object (pool, class, src, i, dst);
  return objects_moved;
}

/* Puts an isolated zspage back, freeing it if it became empty.  Class
 * lock held on entry and on return.  Returns the pages freed.
 */
static unsigned
putback_or_free (struct zs_pool *pool, struct size_class *class, uint32_t id)
{
  if (!zspage_putback (pool, class, id))
    return 0;
  pthread_mutex_unlock (&class->lock);
  zspage_give_back (pool, id, class->pages_per_zspage);
  pthread_mutex_lock (&class->lock);
  return class->pages_per_zspage;
}

static void
compact_class (struct zs_pool *pool, struct size_class *class,
               struct zs_compact_result *result)
{
  uint32_t src, dst = 0;
  unsigned src_freed_pages;

  pthread_mutex_lock (&class->lock);
  while (class_pages_freeable (class) > 0) {
    if (dst == 0) {
      dst = zspage_isolate (pool, class, ZS_GROUP_FULL - 1, ZS_GROUP_EMPTY + 1);
      if (dst == 0)
        break;
    }
    src = zspage_isolate (pool, class, ZS_GROUP_EMPTY + 1, ZS_GROUP_FULL - 1);
    if (src == 0)
      break;
    result->objects_moved += migrate_zspage (pool, class, src, dst);
    src_freed_pages = putback_or_free (pool, class, src);
    result->pages_freed += src_freed_pages;
    if (zspage_desc (pool, dst)->inuse == class->objs_per_zspage) {
      result->pages_freed += putback_or_free (pool, class, dst);
      dst = 0;
    }
    else if (src_freed_pages == 0)
      break;            /* the owner refused a move: retrying would spin */
  }
  if (dst)
    result->pages_freed += putback_or_free (pool, class, dst);
  pthread_mutex_unlock (&class->lock);
}

/* Compacts classes FIRST..LAST under the single-flight flag and adds the
 * work done to the pool's counters.
 */
static int
compact_classes (struct zs_pool *pool, unsigned first, unsigned last,
                 struct zs_compact_result *result)
{
  struct zs_compact_result done = { 0 };

  if (pool->owner_ops == NULL || first >= pool->class_count) {
    errno = EINVAL;
    return -1;
  }
  if (atomic_exchange (&pool->compacting, true)) {
    errno = EBUSY;
    return -1;
  }
  for (unsigned i = first; i <= last; i++)
    compact_class (pool, &pool->classes[i], &done);
  atomic_store (&pool->compacting, false);

  atomic_fetch_add_explicit (&pool->pages_compacted, done.pages_freed,
                             memory_order_relaxed);
  atomic_fetch_add_explicit (&pool->objects_moved, done.objects_moved,
                             memory_order_relaxed);
  if (result)
    *result = done;
  return 0;
}

int
zs_compact (struct zs_pool *pool, struct zs_compact_result *result)
{
  return compact_classes (pool, 0, pool->class_count - 1, result);
}

int
zs_compact_class (struct zs_pool *pool, unsigned class_index,
                  struct zs_compact_result *result)
{
  return compact_classes (pool, class_index, class_index, result);
}
