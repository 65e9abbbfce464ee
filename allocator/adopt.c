/* cswap allocator: adoption, a new pool taking over the objects of a
 * pool whose process died, from a zspage area that outlived it
 * (config.shared_area: pool.c).
 *
 * Nothing in the zspage area is a pointer: a handle is the location
 * (zspage id, object index), so the area means the same wherever it is
 * mapped.  What the area does not say reliably is which slots are live:
 * the process may have died anywhere, leaving
 *
 *  - objects allocated and never published by the owner (orphans);
 *  - an object copied by compaction whose other copy was not yet freed;
 *  - zspages isolated by compaction, in the reserve, or detached empty
 *    and not yet given back;
 *  - a header or a free list half written.
 *
 * So adoption trusts nothing in the area but the bytes of the objects the
 * owner names, and rebuilds everything from the owner's handles alone:
 * zs_pool_adopt_object, once per object the owner refers to, records it
 * in the new pool's (private, zeroed) descriptor table; zs_pool_adopt_end
 * then makes every zspage with an adopted object live again and every
 * other id free.  Whatever the dead pool had in flight is covered by that
 * one rule: an orphan or the unnamed copy of a move is a slot nobody
 * names, so it is free; an isolated or reserve zspage with no named
 * object is a free id.
 *
 * While adoption runs, a zspage with an adopted object is attached
 * (zspage.c: live, its class set, counted in its class and pages_used)
 * but in no fullness group; its inuse counts the adopted objects,
 * fresh_index is one past the highest adopted index, and the headers
 * below it are this pool's own writes: allocated (with the cookie) for an
 * adopted slot, free for the others.  The class of a zspage is that of its
 * first adopted object; an object of another class in it is refused, as
 * is a slot adopted twice.  The huge class keeps its cookie in the
 * descriptor and has no header to write.
 *
 * zs_pool_adopt_end, from the highest adopted id down, threads each live
 * zspage's free list through its non-adopted slots below fresh_index
 * (lowest first, as a new zspage fills), files it in the group its inuse
 * says, and links every other id into the free-id list (lowest first)
 * up to the new high-water id, the highest id adopted.  The pages of
 * every id not live, above the high-water id to the capacity too, are
 * given back in one release_area call per run of consecutive such ids:
 * at most one per live zspage plus one, however large the capacity.
 * Only whole strides of dead ids are released, not the untouched tail of
 * a live zspage's stride (beyond its pages_per_zspage pages): no pool
 * ever touches a tail, since a zspage id is only reused for another
 * length after release_pages has given back its pages, and adoption
 * releases the whole stride of every id it frees.
 *
 * Adopted pages were not faulted in by this pool: they count in neither
 * pages_faulted_in nor pages_given_back until they are given back.  The
 * reserve starts empty.
 *
 * Single-threaded, before any other call on the pool: no locks.
 */
#include <errno.h>

#include "zs-internal.h"

/* Marks slot OBJ_INDEX of zspage ID, attached to CLASS, adopted for
 * COOKIE.  Returns false if it already is.
 */
static bool
adopt_slot (struct zs_pool *pool, const struct size_class *class,
            uint32_t id, unsigned obj_index, uint32_t cookie)
{
  struct zspage *zspage = zspage_desc (pool, id);
  uint32_t *header;

  if (class->huge) {
    if (zspage->inuse)
      return false;
    zspage->huge_cookie = cookie;
    zspage->fresh_index = 1;
  }
  else {
    /* Slots first reached now are free until adopted; whatever the dead
     * pool left in their headers is overwritten.
     */
    for (; zspage->fresh_index <= obj_index; zspage->fresh_index++)
      *obj_header (pool, class, id, zspage->fresh_index)
        = obj_header_free (ZS_OBJ_NONE);
    header = obj_header (pool, class, id, obj_index);
    if (obj_header_is_allocated (*header))
      return false;
    *header = obj_header_allocated (cookie);
  }
  zspage->inuse++;
  return true;
}

int
zs_pool_adopt_object (struct zs_pool *pool, zs_handle handle, size_t size,
                      uint32_t cookie)
{
  uint32_t id = handle_zspage_id (handle);
  unsigned obj_index = handle_obj_index (handle);
  struct size_class *class;
  struct zspage *zspage;

  if (id == 0 || handle >> ZS_OBJ_INDEX_BITS > pool->capacity_zspages
      || size == 0 || size > ZS_MAX_OBJECT_SIZE
      || cookie > ZS_MAX_OWNER_COOKIE)
    goto invalid;
  class = size_class_for_request (pool, size);
  zspage = zspage_desc (pool, id);
  if (obj_index >= class->objs_per_zspage
      || (zspage_is_live (zspage) && zspage->class_index != class->index))
    goto invalid;
  if (!zspage_is_live (zspage)) {
    zspage_attach (pool, class, id);
    atomic_fetch_add_explicit (&pool->pages_used, class->pages_per_zspage,
                               memory_order_relaxed);
    if (id > atomic_load_explicit (&pool->high_water_id,
                                   memory_order_relaxed))
      atomic_store_explicit (&pool->high_water_id, id, memory_order_relaxed);
  }
  if (!adopt_slot (pool, class, id, obj_index, cookie))
    goto invalid;
  class->objects_used++;
  return 0;

 invalid:
  errno = EINVAL;
  return -1;
}

/* Threads the free list of a live multi-object zspage through the slots
 * below its fresh index that were not adopted, lowest index first.
 */
static void
thread_free_slots (struct zs_pool *pool, const struct size_class *class,
                   uint32_t id)
{
  struct zspage *zspage = zspage_desc (pool, id);
  unsigned free_head = ZS_OBJ_NONE;

  for (unsigned i = zspage->fresh_index; i-- > 0;) {
    uint32_t *header = obj_header (pool, class, id, i);

    if (!obj_header_is_allocated (*header)) {
      *header = obj_header_free (free_head);
      free_head = i;
    }
  }
  zspage->free_head = free_head;
}

/* Gives back the pages of ids FIRST..END-1, none of them live. */
static void
release_dead_ids (struct zs_pool *pool, uint32_t first, uint32_t end)
{
  if (first < end)
    release_area (pool, first,
                  (size_t) (end - first) * pool->zspage_stride_bytes);
}

void
zs_pool_adopt_end (struct zs_pool *pool)
{
  uint32_t high_water_id = atomic_load_explicit (&pool->high_water_id,
                                                 memory_order_relaxed);
  /* One past the run of dead ids gathered so far, walking down. */
  uint32_t dead_run_end = pool->capacity_zspages + 1;
  uint32_t free_id_head = 0, ids_in_use = 0;

  for (uint32_t id = high_water_id; id > 0; id--) {
    struct zspage *zspage = zspage_desc (pool, id);
    struct size_class *class;

    if (!zspage_is_live (zspage)) {
      zspage->link.next_id = free_id_head;
      free_id_head = id;
      continue;
    }
    class = &pool->classes[zspage->class_index];
    if (!class->huge)
      thread_free_slots (pool, class, id);
    zspage_insert (pool, class, id);
    ids_in_use++;
    release_dead_ids (pool, id + 1, dead_run_end);
    dead_run_end = id;
  }
  release_dead_ids (pool, 1, dead_run_end);
  pool->free_id_head = free_id_head;
  pool->ids_in_use = ids_in_use;
}
