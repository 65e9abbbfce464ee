/* cswap allocator: the size-class table.
 *
 * Raw classes are 32, 48, ..., 4096 bytes per slot, the 4-byte object
 * header included.  Each gets the zspage chain length (1..max pages) that
 * wastes the fewest bytes at the end of the zspage, ties going to the
 * shorter chain: the kernel's "make zspage chain size configurable" (2023)
 * rather than the first length reaching some used percentage.
 *
 * Raw classes whose (pages, objects) per zspage equal their larger
 * neighbour's would hold exactly the same objects per page, so they are
 * merged into it, walking from the largest down as the kernel does.  Raw
 * classes above the largest one that holds two or more objects per zspage
 * gain nothing from packing: their requests go to the huge class, one
 * object of up to 4096 bytes, header-less, per one-page zspage.
 *
 * Everything here runs once, in zs_pool_create (and size_class_count in
 * zs_pool_area_bytes); no locks.
 */
#include "zs-internal.h"

static unsigned
raw_class_size (unsigned raw)
{
  return ZS_MIN_CLASS_SIZE + raw * ZS_CLASS_DELTA;
}

static unsigned
chain_pages_least_waste (unsigned size_bytes, unsigned max_pages)
{
  unsigned best_pages = 1;
  unsigned best_waste_bytes = CSWAP_PAGE_SIZE % size_bytes;

  for (unsigned pages = 2; pages <= max_pages; pages++) {
    unsigned waste_bytes = pages * CSWAP_PAGE_SIZE % size_bytes;

    if (waste_bytes < best_waste_bytes) {
      best_waste_bytes = waste_bytes;
      best_pages = pages;
    }
  }
  return best_pages;
}

static unsigned
objs_per_zspage (unsigned size_bytes, unsigned pages)
{
  return pages * CSWAP_PAGE_SIZE / size_bytes;
}

struct built_class {
  unsigned size_bytes, pages_per_zspage, objs_per_zspage;
};

/* The merged multi-object classes for chains of at most MAX_PAGES pages,
 * largest first, and which of them each raw class up to *LARGEST_MULTI_RAW
 * maps to.  Returns how many.
 */
static unsigned
build_classes (unsigned max_pages, struct built_class built[ZS_MAX_CLASSES],
               uint8_t built_of_raw[ZS_RAW_CLASS_COUNT],
               int *largest_multi_raw)
{
  unsigned nr_built = 0;

  *largest_multi_raw = 0;
  for (int raw = ZS_RAW_CLASS_COUNT - 1; raw >= 0; raw--) {
    unsigned size = raw_class_size (raw);

    if (objs_per_zspage (size, chain_pages_least_waste (size, max_pages)) >= 2) {
      *largest_multi_raw = raw;
      break;
    }
  }

  for (int raw = *largest_multi_raw; raw >= 0; raw--) {
    unsigned size = raw_class_size (raw);
    unsigned pages = chain_pages_least_waste (size, max_pages);
    unsigned objs = objs_per_zspage (size, pages);

    if (nr_built == 0 || built[nr_built - 1].pages_per_zspage != pages
        || built[nr_built - 1].objs_per_zspage != objs) {
      built[nr_built].size_bytes = size;
      built[nr_built].pages_per_zspage = pages;
      built[nr_built].objs_per_zspage = objs;
      nr_built++;
    }
    built_of_raw[raw] = nr_built - 1;
  }
  return nr_built;
}

unsigned
size_class_count (unsigned max_pages_per_zspage)
{
  struct built_class built[ZS_MAX_CLASSES];
  uint8_t built_of_raw[ZS_RAW_CLASS_COUNT];
  int largest_multi_raw;

  return build_classes (max_pages_per_zspage, built, built_of_raw,
                        &largest_multi_raw) + 1;
}

void
size_classes_init (struct zs_pool *pool)
{
  /* Classes are built largest first, then renumbered in increasing size. */
  struct built_class built[ZS_MAX_CLASSES];
  uint8_t built_of_raw[ZS_RAW_CLASS_COUNT];
  int largest_multi_raw;
  unsigned nr_built = build_classes (pool->max_pages_per_zspage, built,
                                     built_of_raw, &largest_multi_raw);

  pool->class_count = nr_built + 1;
  for (unsigned i = 0; i < nr_built; i++) {
    struct size_class *class = &pool->classes[i];
    unsigned from = nr_built - 1 - i;

    class->size_bytes = built[from].size_bytes;
    class->pages_per_zspage = built[from].pages_per_zspage;
    class->objs_per_zspage = built[from].objs_per_zspage;
    class->index = i;
  }
  for (int raw = 0; raw <= largest_multi_raw; raw++)
    pool->class_of_raw[raw] = nr_built - 1 - built_of_raw[raw];

  struct size_class *huge = &pool->classes[nr_built];
  huge->size_bytes = ZS_MAX_OBJECT_SIZE;
  huge->pages_per_zspage = 1;
  huge->objs_per_zspage = 1;
  huge->index = nr_built;
  huge->huge = true;
  for (int raw = largest_multi_raw + 1; raw < ZS_RAW_CLASS_COUNT; raw++)
    pool->class_of_raw[raw] = nr_built;

  /* A request of N bytes needs N + header; it is huge from the first N
   * whose slot would exceed the largest multi-object class.
   */
  pool->huge_min_request_bytes = raw_class_size (largest_multi_raw)
    - ZS_OBJ_HEADER_BYTES + 1;
}

struct size_class *
size_class_for_request (struct zs_pool *pool, size_t size_bytes)
{
  size_t slot_bytes = size_bytes + ZS_OBJ_HEADER_BYTES;
  unsigned raw;

  if (size_bytes >= pool->huge_min_request_bytes)
    return &pool->classes[pool->class_count - 1];
  raw = slot_bytes <= ZS_MIN_CLASS_SIZE ? 0
    : (slot_bytes - ZS_MIN_CLASS_SIZE + ZS_CLASS_DELTA - 1) / ZS_CLASS_DELTA;
  return &pool->classes[pool->class_of_raw[raw]];
}

unsigned
zs_class_count (struct zs_pool *pool)
{
  return pool->class_count;
}

size_t
zs_huge_class_size (struct zs_pool *pool)
{
  return pool->huge_min_request_bytes;
}
