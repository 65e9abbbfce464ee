/* cswap allocator: compaction.
 *
 * Fill every regular class, free most objects at random, compact: the
 * pages compaction says it could free must be freed, the objects must be
 * intact, nothing must be left to free.  Then again while the owner
 * callbacks interfere the way other threads would: a second zs_compact
 * (EBUSY at once), frees of the very object being moved and of others in
 * isolated zspages.  And zs_compact needs owner callbacks (EINVAL).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "tap.h"
#include "test-owner.h"

#define ZSPAGES_PER_CLASS 8
#define COOKIES 200000

static struct test_owner owner;
static uint64_t rng = 0x853c49e6748fea9b;
static unsigned lock_calls;
static int nested_result = 1, nested_errno;
static unsigned dropped_in_window;

static uint32_t
fill_and_fragment (unsigned keep_percent)
{
  unsigned count = zs_class_count (owner.pool);
  uint32_t cookie = 0;

  for (unsigned i = 0; i + 1 < count; i++) {
    struct zs_class_stats stats;

    zs_class_stats (owner.pool, i, &stats);
    for (unsigned j = 0; j < ZSPAGES_PER_CLASS * stats.objects_per_zspage
           && cookie < COOKIES; j++, cookie++)
      if (!test_owner_store (&owner, cookie, stats.size - 4, cookie + 1))
        tap_bail_out ("zs_malloc: %m");
  }
  for (uint32_t c = 0; c < cookie; c++)
    if (test_rand (&rng) % 100 >= keep_percent)
      test_owner_drop (&owner, c);
  return cookie;
}

static uint64_t
pages_freeable (void)
{
  uint64_t pages = 0;

  for (unsigned i = 0; i < zs_class_count (owner.pool); i++) {
    struct zs_class_stats stats;

    zs_class_stats (owner.pool, i, &stats);
    pages += stats.pages_freeable;
  }
  return pages;
}

static void
drop_all (uint32_t cookies)
{
  for (uint32_t c = 0; c < cookies; c++)
    test_owner_drop (&owner, c);
}

static void
test_plain (void)
{
  struct zs_pool_stats before, after;
  struct zs_compact_result result;
  uint32_t cookies = fill_and_fragment (30);
  uint64_t freeable = pages_freeable ();
  uint64_t retargets = owner.retargets;

  zs_pool_stats (owner.pool, &before);
  ok (freeable > 0, "fragmented: %" PRIu64 " pages freeable", freeable);
  ok (zs_compact (owner.pool, &result) == 0, "zs_compact");
  zs_pool_stats (owner.pool, &after);
  diag ("moved %" PRIu64 " objects, freed %" PRIu64 " pages",
        result.objects_moved, result.pages_freed);
  ok (result.pages_freed == freeable, "freed all %" PRIu64 " freeable pages",
      freeable);
  ok (before.pages_used - after.pages_used == result.pages_freed,
      "pages_used dropped by as much");
  ok (owner.retargets - retargets == result.objects_moved,
      "every move retargeted once");
  ok (pages_freeable () == 0, "nothing left to free");
  ok (test_owner_verify_all (&owner), "objects intact");
  ok (zs_pool_check (owner.pool) == 0, "zs_pool_check passes");
  drop_all (cookies);
}

/* Acts in the window where compaction holds no lock but has isolated its
 * source and destination.
 */
static void
interfere (struct test_owner *o, uint32_t cookie)
{
  uint32_t other = test_rand (&rng) % o->cookies;

  if (lock_calls++ == 0) {
    nested_result = zs_compact (o->pool, NULL);
    nested_errno = errno;
  }
  if (lock_calls % 7 == 0) {
    test_owner_drop (o, cookie);
    dropped_in_window++;
  }
  if (lock_calls % 11 == 0 && o->handles[other] != ZS_HANDLE_NONE) {
    test_owner_drop (o, other);
    dropped_in_window++;
  }
}

static void
test_interference (void)
{
  struct zs_pool_stats before, after;
  struct zs_compact_result result;
  uint32_t cookies = fill_and_fragment (40);

  zs_pool_stats (owner.pool, &before);
  owner.before_lock = interfere;
  ok (zs_compact (owner.pool, &result) == 0, "zs_compact with interference");
  owner.before_lock = NULL;
  zs_pool_stats (owner.pool, &after);
  ok (nested_result == -1 && nested_errno == EBUSY,
      "a second zs_compact meanwhile: EBUSY");
  diag ("%u frees in the window; moved %" PRIu64 ", freed %" PRIu64 " pages",
        dropped_in_window, result.objects_moved, result.pages_freed);
  ok (dropped_in_window > 0, "objects freed while isolated");
  ok (before.pages_used - after.pages_used == result.pages_freed,
      "pages_used dropped by the pages freed");
  ok (pages_freeable () == 0, "nothing left to free");
  ok (test_owner_verify_all (&owner), "objects intact");
  ok (zs_pool_check (owner.pool) == 0, "zs_pool_check passes");
  ok (zs_compact (owner.pool, NULL) == 0, "flag cleared: compacts again");
  drop_all (cookies);
}

static void
test_no_owner (void)
{
  struct zs_pool_config config = { .max_objects = 16 };
  struct zs_pool *pool = zs_pool_create (&config);

  errno = 0;
  ok (zs_compact (pool, NULL) == -1 && errno == EINVAL,
      "no owner callbacks: EINVAL");
  errno = 0;
  ok (zs_compact_class (pool, zs_class_count (pool), NULL) == -1
      && errno == EINVAL, "class out of range: EINVAL");
  zs_pool_destroy (pool);
}

int
main (void)
{
  test_owner_init (&owner, COOKIES, 0, 0);
  test_plain ();
  test_interference ();
  test_owner_fini (&owner);
  test_no_owner ();
  return tap_done ();
}
