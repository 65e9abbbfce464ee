/* cswap allocator: fullness groups, allocation order, capacity.
 *
 * Crafted patterns in the 32-byte class (128 objects in one page) must
 * land in the kernel's groups: 0 empty, 1 below 10%, g for (g-1)*10% and
 * up, 11 full; allocation must take the fullest non-full zspage; a pool
 * out of reserved capacity fails with ENOMEM and recovers after a free.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "tap.h"
#include "test-owner.h"

#define OBJ_BYTES 28            /* + 4-byte header: the 32-byte class */

static struct test_owner owner;

static unsigned
expected_group (unsigned inuse, unsigned objs)
{
  if (inuse == 0)
    return 0;
  if (inuse == objs)
    return ZS_FULLNESS_GROUPS - 1;
  return 100 * inuse / objs / 10 + 1;
}

/* True if class 0 holds exactly one zspage per group in WANT (0 to skip). */
static bool
groups_are (unsigned want_a, unsigned want_b)
{
  struct zs_class_stats stats;

  zs_class_stats (owner.pool, 0, &stats);
  for (unsigned g = 0; g < ZS_FULLNESS_GROUPS; g++) {
    uint64_t want = (want_a == g) + (want_b == g);

    if (stats.zspages[g] != want) {
      diag ("group %u holds %llu zspages, want %llu", g,
            (unsigned long long) stats.zspages[g], (unsigned long long) want);
      return false;
    }
  }
  return true;
}

static void
test_groups_one_zspage (unsigned objs)
{
  bool up_ok = true, down_ok = true;

  ok (groups_are (~0u, ~0u), "no zspage at first");
  for (unsigned k = 1; k <= objs; k++) {
    test_owner_store (&owner, k - 1, OBJ_BYTES, k);
    up_ok &= groups_are (expected_group (k, objs), ~0u);
  }
  ok (up_ok, "filling one zspage walks groups 1..11");
  /* The edges, spelled out. */
  for (unsigned k = objs; k > 0; k--) {
    test_owner_drop (&owner, k - 1);
    down_ok &= groups_are (k - 1 ? expected_group (k - 1, objs) : ~0u, ~0u);
    if (k - 1 == 127)
      ok (groups_are (10, ~0u), "127 of 128: group 10 (99%%)");
    if (k - 1 == 13)
      ok (groups_are (2, ~0u), "13 of 128: group 2 (10%%)");
    if (k - 1 == 12)
      ok (groups_are (1, ~0u), "12 of 128: group 1 (below 10%%)");
  }
  ok (down_ok, "emptying it walks them back; the empty zspage is freed");
  ok (zs_pool_check (owner.pool) == 0, "zs_pool_check passes");
}

static void
test_fullest_first (unsigned objs)
{
  uintptr_t page_a, page_new;

  for (unsigned i = 0; i < 2 * objs; i++)
    test_owner_store (&owner, i, OBJ_BYTES, i);
  ok (groups_are (11, 11), "two full zspages");
  /* Zspage A keeps 120 objects (group 10), B keeps 20 (group 2). */
  for (unsigned i = 120; i < objs; i++)
    test_owner_drop (&owner, i);
  for (unsigned i = objs + 20; i < 2 * objs; i++)
    test_owner_drop (&owner, i);
  ok (groups_are (10, 2), "one zspage at 93%%, one at 15%%");
  page_a = (uintptr_t) zs_object (owner.pool, owner.handles[0]) / 4096;
  test_owner_store (&owner, 2 * objs, OBJ_BYTES, 1);
  page_new = (uintptr_t) zs_object (owner.pool, owner.handles[2 * objs]) / 4096;
  ok (page_new == page_a, "zs_malloc took the fullest zspage");
  ok (test_owner_verify_all (&owner), "objects intact");
  for (unsigned i = 0; i <= 2 * objs; i++)
    test_owner_drop (&owner, i);
  ok (groups_are (~0u, ~0u) && zs_pool_check (owner.pool) == 0,
      "all freed");
}

static void
test_capacity (void)
{
  struct zs_pool_config config = { .max_objects = 4 };
  struct zs_pool *pool = zs_pool_create (&config);
  zs_handle handles[1024];
  unsigned n = 0;

  /* Huge objects take one zspage each: they exhaust the ids first. */
  while (n < 1024 && (handles[n] = zs_malloc (pool, 4096, n)) != ZS_HANDLE_NONE)
    n++;
  ok (n >= 4 && n < 1024 && errno == ENOMEM,
      "capacity: ENOMEM after %u huge objects", n);
  zs_free (pool, handles[0]);
  handles[0] = zs_malloc (pool, 4096, 0);
  ok (handles[0] != ZS_HANDLE_NONE, "capacity: a free makes room again");
  ok (zs_pool_check (pool) == 0, "capacity: zs_pool_check passes");
  for (unsigned i = 0; i < n; i++)
    zs_free (pool, handles[i]);
  zs_pool_destroy (pool);
}

int
main (void)
{
  struct zs_class_stats stats;

  test_owner_init (&owner, 1024, 0, 0);
  zs_class_stats (owner.pool, 0, &stats);
  if (!ok (stats.size == 32 && stats.objects_per_zspage == 128,
           "class 0: 32 bytes, 128 objects per zspage"))
    tap_bail_out ("unexpected class 0");
  test_groups_one_zspage (stats.objects_per_zspage);
  test_fullest_first (stats.objects_per_zspage);
  test_owner_fini (&owner);
  test_capacity ();
  return tap_done ();
}
