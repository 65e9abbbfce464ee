/* cswap allocator: zspage descriptors, fullness lists and free lists.
 *
 * A class keeps each of its non-isolated zspages counted in the fullness
 * group its inuse count says (zspages_in_group) and, for the partly used
 * groups 1..10, linked at the head of that group's list.  Every function
 * that changes inuse leaves the group to its caller, which calls
 * zspage_fix_fullness once it is done: compaction changes inuse of
 * isolated zspages, which are on no list, and regroups them at putback.
 *
 * Everything here runs with the class lock held.  Lock order:
 * common/lock-order.h.
 */
#include <assert.h>

#include "zs-internal.h"

/* Makes zspage ID, all its slots fresh, part of CLASS: the inverse of
 * zspage_detach_empty.  Its pages are already charged to pages_used
 * (alloc.c).  The caller allocates from it and inserts it.
 */
void
zspage_attach (struct zs_pool *pool, struct size_class *class, uint32_t id)
{
  *zspage_desc (pool, id) = (struct zspage) {
    .class_index = class->index, .state = ZSPAGE_STATE_LIVE,
    .free_head = ZS_OBJ_NONE, .fresh_index = 0,
  };
  class->zspages++;
}

static void
list_link (struct zs_pool *pool, struct size_class *class, uint32_t id,
           unsigned group)
{
  struct zspage *zspage = zspage_desc (pool, id);
  uint32_t head = class->list_head[group];

  zspage->link.prev_id = 0;
  zspage->link.next_id = head;
  if (head)
    zspage_desc (pool, head)->link.prev_id = id;
  class->list_head[group] = id;
}

static void
list_unlink (struct zs_pool *pool, struct size_class *class, uint32_t id,
             unsigned group)
{
  struct zspage *zspage = zspage_desc (pool, id);

  if (zspage->link.prev_id)
    zspage_desc (pool, zspage->link.prev_id)->link.next_id
      = zspage->link.next_id;
  else
    class->list_head[group] = zspage->link.next_id;
  if (zspage->link.next_id)
    zspage_desc (pool, zspage->link.next_id)->link.prev_id
      = zspage->link.prev_id;
}

/* Files a non-isolated zspage under the group its inuse count says. */
void
zspage_insert (struct zs_pool *pool, struct size_class *class, uint32_t id)
{
  struct zspage *zspage = zspage_desc (pool, id);
  unsigned group = fullness_group (zspage->inuse, class->objs_per_zspage);

  zspage_set_group (zspage, group);
  class->zspages_in_group[group]++;
  if (fullness_group_is_linked (group))
    list_link (pool, class, id, group);
}

/* The inverse of zspage_insert, by the group it was filed under. */
void
zspage_remove (struct zs_pool *pool, struct size_class *class, uint32_t id)
{
  struct zspage *zspage = zspage_desc (pool, id);
  unsigned group = zspage_group (zspage);

  class->zspages_in_group[group]--;
  if (fullness_group_is_linked (group))
    list_unlink (pool, class, id, group);
}

/* Refiles a non-isolated zspage whose inuse count changed. */
void
zspage_fix_fullness (struct zs_pool *pool, struct size_class *class,
                     uint32_t id)
{
  struct zspage *zspage = zspage_desc (pool, id);

  if (fullness_group (zspage->inuse, class->objs_per_zspage)
      == zspage_group (zspage))
    return;
  zspage_remove (pool, class, id);
  zspage_insert (pool, class, id);
}

/* Makes the class forget an empty zspage, which is already off the lists
 * (removed or isolated).  The caller then drops the class lock and calls
 * zspage_give_back.
 */
void
zspage_detach_empty (struct zs_pool *pool, struct size_class *class,
                     uint32_t id)
{
  struct zspage *zspage = zspage_desc (pool, id);

  assert (zspage->inuse == 0);
  zspage->state = 0;
  class->zspages--;
  atomic_fetch_sub_explicit (&pool->pages_used, class->pages_per_zspage,
                             memory_order_relaxed);
}

/* The first zspage on the lists of groups FIRST_GROUP to LAST_GROUP, in
 * that order (either direction), or 0.
 */
uint32_t
zspage_first_in_groups (struct size_class *class, int first_group,
                        int last_group)
{
  int step = first_group <= last_group ? 1 : -1;

  for (int group = first_group; group != last_group + step; group += step)
    if (class->list_head[group])
      return class->list_head[group];
  return 0;
}

/* Takes the first zspage of groups FIRST_GROUP to LAST_GROUP off the
 * lists for compaction: zs_malloc cannot pick it, zs_free still works.
 */
uint32_t
zspage_isolate (struct zs_pool *pool, struct size_class *class,
                int first_group, int last_group)
{
  uint32_t id = zspage_first_in_groups (class, first_group, last_group);

  if (id) {
    zspage_remove (pool, class, id);
    zspage_set_isolated (zspage_desc (pool, id), true);
  }
  return id;
}

/* The inverse of zspage_isolate.  Returns true if the zspage became empty
 * meanwhile: it is then detached and the caller frees it.
 */
bool
zspage_putback (struct zs_pool *pool, struct size_class *class, uint32_t id)
{
  struct zspage *zspage = zspage_desc (pool, id);

  zspage_set_isolated (zspage, false);
  if (zspage->inuse == 0) {
    zspage_detach_empty (pool, class, id);
    return true;
  }
  zspage_insert (pool, class, id);
  return false;
}

/* Pops a free slot of zspage ID, which must have one, for COOKIE. */
unsigned
obj_alloc_slot (struct zs_pool *pool, struct size_class *class, uint32_t id,
                uint32_t cookie)
{
  struct zspage *zspage = zspage_desc (pool, id);
  unsigned obj_index = zspage->free_head;

  /* A freed slot first, a fresh one only when there is none: fresh
   * slots may lie on pages not touched yet.
   */
  if (obj_index == ZS_OBJ_NONE) {
    assert (zspage->fresh_index < class->objs_per_zspage);
    obj_index = zspage->fresh_index++;
  }
  else
    zspage->free_head = class->huge ? ZS_OBJ_NONE
      : obj_header_value (*obj_header (pool, class, id, obj_index));
  if (class->huge)
    zspage->huge_cookie = cookie;
  else
    *obj_header (pool, class, id, obj_index) = obj_header_allocated (cookie);
  zspage->inuse++;
  return obj_index;
}

void
obj_free_slot (struct zs_pool *pool, struct size_class *class, uint32_t id,
               unsigned obj_index)
{
  struct zspage *zspage = zspage_desc (pool, id);

  if (!class->huge)
    *obj_header (pool, class, id, obj_index)
      = obj_header_free (zspage->free_head);
  zspage->free_head = obj_index;
  zspage->inuse--;
}

/* True if slot OBJ_INDEX of zspage ID is allocated; then *COOKIE is its
 * owner's cookie.
 */
bool
obj_cookie (struct zs_pool *pool, const struct size_class *class,
            uint32_t id, unsigned obj_index, uint32_t *cookie)
{
  uint32_t header;

  if (class->huge) {
    *cookie = zspage_desc (pool, id)->huge_cookie;
    return zspage_desc (pool, id)->inuse == 1;
  }
  if (obj_index >= zspage_desc (pool, id)->fresh_index)
    return false;               /* never used: no header yet */
  header = *obj_header (pool, class, id, obj_index);
  *cookie = obj_header_value (header);
  return obj_header_is_allocated (header);
}
