/* cswap allocator: model-based random test.
 *
 * Millions of random allocations, frees, rewrites, reads and compactions
 * against a model (the test owner's table of sizes and pattern seeds):
 * every read and every object at each checkpoint must hold exactly what
 * was written, zs_pool_check must pass, and the statistics must agree with
 * the model.  The first phase keeps few objects and checks after every
 * step, so that a broken invariant is caught at the step that broke it;
 * the second runs long with many objects.  Sizes are uniform in 1..4096
 * and, when the corpus is there, lz4 sizes of real pages.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "tap.h"
#include "test-owner.h"

#define COOKIES 20000
#define PHASE1_COOKIES 300
#define PHASE1_STEPS 20000
#define PHASE2_STEPS 2000000
#define PHASE2_CHECK_EVERY 20000

static struct test_owner owner;
static uint32_t *corpus_sizes;
static size_t corpus_count;
static uint64_t rng = 0x9e3779b97f4a7c15;
static uint64_t live_objects;

static uint32_t
random_size (void)
{
  if (corpus_count && test_rand (&rng) % 2)
    return corpus_sizes[test_rand (&rng) % corpus_count];
  return 1 + test_rand (&rng) % ZS_MAX_OBJECT_SIZE;
}

/* Single-threaded, compaction leaves nothing to free in the classes it
 * compacted, and the pages it says it freed are gone.
 */
static bool
compact_and_check (void)
{
  struct zs_compact_result result;
  struct zs_pool_stats before, after;
  unsigned classes = zs_class_count (owner.pool);
  unsigned first = 0, last = classes - 1;

  zs_pool_stats (owner.pool, &before);
  if (test_rand (&rng) % 4) {
    if (zs_compact (owner.pool, &result) == -1)
      return false;
  }
  else {
    first = last = test_rand (&rng) % classes;
    if (zs_compact_class (owner.pool, first, &result) == -1)
      return false;
  }
  zs_pool_stats (owner.pool, &after);
  if (before.pages_used - after.pages_used != result.pages_freed
      || after.pages_compacted - before.pages_compacted != result.pages_freed
      || after.objects_moved - before.objects_moved != result.objects_moved)
    return false;
  return test_classes_compacted (owner.pool, first, last);
}

/* One random step over cookies 0..RANGE-1.  Returns false on a mismatch. */
static bool
step (uint32_t range)
{
  uint32_t cookie = test_rand (&rng) % range;
  unsigned op = test_rand (&rng) % 1000;
  bool live = owner.handles[cookie] != ZS_HANDLE_NONE;

  if (op < 450) {
    if (!test_owner_store (&owner, cookie, random_size (), test_rand (&rng))) {
      diag ("zs_malloc: %m");
      return false;
    }
    live_objects += !live;
    return true;
  }
  if (op < 750) {
    if (!test_owner_verify (&owner, cookie))
      return false;
    test_owner_drop (&owner, cookie);
    live_objects -= live;
    return true;
  }
  if (op < 900)
    return test_owner_verify (&owner, cookie);
  if (op < 999) {
    if (live)
      test_owner_rewrite (&owner, cookie, test_rand (&rng));
    return true;
  }
  return compact_and_check ();
}

static bool
model_agrees (void)
{
  struct zs_pool_stats stats;

  zs_pool_stats (owner.pool, &stats);
  if (stats.objects_used != live_objects) {
    diag ("pool has %" PRIu64 " objects, model %" PRIu64,
          stats.objects_used, live_objects);
    return false;
  }
  if (stats.pages_used != zs_pool_pages_used (owner.pool)) {
    diag ("zs_pool_pages_used disagrees with zs_pool_stats");
    return false;
  }
  return zs_pool_check (owner.pool) == 0;
}

static void
test_phase (const char *name, uint32_t range, uint64_t steps,
            uint64_t check_every)
{
  uint64_t i;

  for (i = 0; i < steps; i++) {
    if (!step (range))
      break;
    if ((i + 1) % check_every == 0
        && !(model_agrees () && test_owner_verify_all (&owner)))
      break;
  }
  ok (i == steps, "%s: %" PRIu64 " of %" PRIu64 " steps", name, i, steps);
  ok (model_agrees () && test_owner_verify_all (&owner),
      "%s: pool agrees with the model", name);
}

static void
test_bad_arguments (void)
{
  errno = 0;
  ok (zs_malloc (owner.pool, 0, 1) == ZS_HANDLE_NONE && errno == EINVAL,
      "size 0: EINVAL");
  errno = 0;
  ok (zs_malloc (owner.pool, ZS_MAX_OBJECT_SIZE + 1, 1) == ZS_HANDLE_NONE
      && errno == EINVAL, "size 4097: EINVAL");
  errno = 0;
  ok (zs_malloc (owner.pool, 100, ZS_MAX_OWNER_COOKIE + 1u) == ZS_HANDLE_NONE
      && errno == EINVAL, "cookie too large: EINVAL");
}

int
main (void)
{
  double scale = test_scale ();

  corpus_count = test_corpus_sizes (&corpus_sizes);
  diag ("%zu corpus sizes, scale %g", corpus_count, scale);
  test_owner_init (&owner, COOKIES, 0, 0);

  test_bad_arguments ();
  test_phase ("phase 1, checked every step", PHASE1_COOKIES,
              PHASE1_STEPS * scale, 1);
  test_phase ("phase 2", COOKIES, PHASE2_STEPS * scale, PHASE2_CHECK_EVERY);
  for (uint32_t cookie = 0; cookie < COOKIES; cookie++)
    test_owner_drop (&owner, cookie);
  live_objects = 0;
  {
    struct zs_pool_stats stats;

    zs_pool_stats (owner.pool, &stats);
    ok (stats.pages_used == 0 && stats.zspages == 0 && model_agrees (),
        "all freed: no pages left");
  }

  test_owner_fini (&owner);
  free (corpus_sizes);
  return tap_done ();
}
