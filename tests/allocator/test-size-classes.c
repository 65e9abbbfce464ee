/* cswap allocator: the size-class table.
 *
 * For several chain limits: every class's chain length is the brute-force
 * least-waste one, merged classes obey the merge rule, every request size
 * lands in the smallest class that fits it, and zs_huge_class_size is the
 * first size that lands in the huge class.
 */
#include <stdio.h>

#include "tap.h"
#include "zsmalloc.h"

#define HEADER_BYTES 4

struct shape {
  unsigned pages, objs;
};

/* Least waste by brute force, ties to the shorter chain. */
static struct shape
least_waste (unsigned size, unsigned max_pages)
{
  struct shape best = { 0, 0 };
  unsigned best_waste = ~0u;

  for (unsigned pages = 1; pages <= max_pages; pages++)
    if (pages * 4096 % size < best_waste) {
      best_waste = pages * 4096 % size;
      best = (struct shape) { pages, pages * 4096 / size };
    }
  return best;
}

static bool
same_shape (struct shape a, struct shape b)
{
  return a.pages == b.pages && a.objs == b.objs;
}

/* Which class a request of SIZE bytes went to, by the counters. */
static unsigned
class_of_request (struct zs_pool *pool, size_t size)
{
  zs_handle handle = zs_malloc (pool, size, 0);
  unsigned found = ~0u;

  for (unsigned i = 0; i < zs_class_count (pool); i++) {
    struct zs_class_stats stats;

    zs_class_stats (pool, i, &stats);
    if (stats.objects_used)
      found = i;
  }
  zs_free (pool, handle);
  return found;
}

static void
test_chain_limit (unsigned max_pages)
{
  struct zs_pool_config config = {
    .max_pages_per_zspage = max_pages, .max_objects = 16,
  };
  struct zs_pool *pool = zs_pool_create (&config);
  unsigned count = zs_class_count (pool);
  struct zs_class_stats stats[256], huge;
  bool chains_ok = true, merge_ok = true, lookup_ok = true;
  unsigned largest_regular;

  for (unsigned i = 0; i < count; i++)
    zs_class_stats (pool, i, &stats[i]);
  huge = stats[count - 1];
  largest_regular = stats[count - 2].size;

  for (unsigned i = 0; i + 1 < count; i++) {
    struct shape want = least_waste (stats[i].size, max_pages);
    unsigned smaller = i ? stats[i - 1].size : 16;

    if (stats[i].huge || stats[i].objects_per_zspage < 2
        || !same_shape (want, (struct shape) { stats[i].pages_per_zspage,
                                               stats[i].objects_per_zspage })) {
      diag ("class %u (%u bytes): %u pages %u objects, want %u %u", i,
            stats[i].size, stats[i].pages_per_zspage,
            stats[i].objects_per_zspage, want.pages, want.objs);
      chains_ok = false;
    }
    /* Every raw size merged into this class has its shape; the raw size
     * just below (the next class) does not, or it would be merged too.
     */
    for (unsigned raw = smaller + 16; raw < stats[i].size; raw += 16)
      if (!same_shape (least_waste (raw, max_pages), want))
        merge_ok = false;
    if (i && same_shape (least_waste (smaller, max_pages), want))
      merge_ok = false;
  }
  for (unsigned raw = largest_regular + 16; raw <= 4096; raw += 16)
    if (least_waste (raw, max_pages).objs >= 2)
      merge_ok = false;

  ok (huge.huge && huge.size == 4096 && huge.pages_per_zspage == 1
      && huge.objects_per_zspage == 1, "max %u pages: huge class last",
      max_pages);
  ok (chains_ok, "max %u pages: %u classes, chains by least waste",
      max_pages, count);
  ok (merge_ok, "max %u pages: classes merged exactly when same shape",
      max_pages);
  ok (zs_huge_class_size (pool) == largest_regular - HEADER_BYTES + 1,
      "max %u pages: huge from %zu bytes", max_pages,
      zs_huge_class_size (pool));

  for (size_t size = 1; size <= 4096; size++) {
    unsigned want = count - 1;

    if (size < zs_huge_class_size (pool))
      for (want = 0; stats[want].size < size + HEADER_BYTES; want++)
        ;
    if (class_of_request (pool, size) != want) {
      diag ("%zu bytes: class %u, want %u", size,
            class_of_request (pool, size), want);
      lookup_ok = false;
      break;
    }
  }
  ok (lookup_ok, "max %u pages: each size in the smallest class fitting it",
      max_pages);
  zs_pool_destroy (pool);
}

int
main (void)
{
  static const unsigned limits[] = { 1, 2, 4, 8, 16 };
  struct zs_pool_config config = { .max_pages_per_zspage = 17,
                                   .max_objects = 1 };

  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
    test_chain_limit (limits[i]);
  ok (zs_pool_create (&config) == NULL, "max 17 pages refused");
  return tap_done ();
}
