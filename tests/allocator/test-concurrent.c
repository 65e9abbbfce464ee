/* cswap allocator: concurrency.
 *
 * Workers allocate, free, rewrite and read objects of a shared table of
 * cookies, each under its owner lock as the page store will, and check
 * every read against the pattern they wrote, while one thread compacts the
 * pool in a loop and another reads the statistics and runs zs_pool_check.
 * Meant to run under -Db_sanitize=thread and address,undefined as well;
 * under ThreadSanitizer without zs_pool_check, which holds more locks at
 * once than its deadlock detector can track.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "test-owner.h"

#define COOKIES 8192
#define WORKERS 3
#define WORKER_STEPS 400000

static struct test_owner owner;
static uint32_t *corpus_sizes;
static size_t corpus_count;
static uint64_t worker_steps;
static atomic_bool stop;
static atomic_uint mismatches, failed_allocs, failed_checks;
static _Atomic uint64_t compactions, busy_compactions;
static bool run_checks;

static void *
worker (void *arg)
{
  uint64_t rng = 0x2545f4914f6cdd1d * ((uintptr_t) arg + 1);

  for (uint64_t i = 0; i < worker_steps; i++) {
    uint32_t cookie = test_rand (&rng) % COOKIES;
    unsigned op = test_rand (&rng) % 4;
    uint32_t size_bytes = corpus_count && test_rand (&rng) % 2
      ? corpus_sizes[test_rand (&rng) % corpus_count]
      : 1 + test_rand (&rng) % ZS_MAX_OBJECT_SIZE;

    test_owner_lock (&owner, cookie);
    if (!test_owner_verify (&owner, cookie))
      mismatches++;
    else if (op == 0 || op == 1) {
      if (!test_owner_store (&owner, cookie, size_bytes, test_rand (&rng)))
        failed_allocs++;
    }
    else if (op == 2)
      test_owner_drop (&owner, cookie);
    else if (owner.handles[cookie] != ZS_HANDLE_NONE)
      test_owner_rewrite (&owner, cookie, test_rand (&rng));
    test_owner_unlock (&owner, cookie);
  }
  return NULL;
}

static void *
compactor (void *arg)
{
  (void) arg;
  while (!stop) {
    if (zs_compact (owner.pool, NULL) == 0)
      compactions++;
    else
      busy_compactions++;
  }
  return NULL;
}

static void *
observer (void *arg)
{
  (void) arg;
  while (!stop) {
    struct zs_pool_stats stats;
    struct zs_class_stats class_stats;

    zs_pool_stats (owner.pool, &stats);
    for (unsigned i = 0; i < zs_class_count (owner.pool); i++)
      zs_class_stats (owner.pool, i, &class_stats);
    if (run_checks && zs_pool_check (owner.pool) == -1)
      failed_checks++;
    usleep (1000);              /* the check stops the world: not too often */
  }
  return NULL;
}

#define RESERVE_BYTES (1 << 20)

int
main (void)
{
  pthread_t workers[WORKERS], compactor_thread, observer_thread;
  struct zs_pool_stats stats;

  const char *sanitize = getenv ("CSWAP_SANITIZE");

  run_checks = sanitize == NULL || strstr (sanitize, "thread") == NULL;
  if (!run_checks)
    diag ("ThreadSanitizer: zs_pool_check left out");
  corpus_count = test_corpus_sizes (&corpus_sizes);
  worker_steps = WORKER_STEPS * test_scale ();
  /* With a reserve and its refill thread, so that they run against
   * allocation, free and compaction too (and under ThreadSanitizer).
   */
  test_owner_init (&owner, COOKIES, 0, RESERVE_BYTES);
  ok (zs_pool_start_refill (owner.pool) == 0, "the reserve's refill thread starts");

  pthread_create (&compactor_thread, NULL, compactor, NULL);
  pthread_create (&observer_thread, NULL, observer, NULL);
  for (uintptr_t i = 0; i < WORKERS; i++)
    pthread_create (&workers[i], NULL, worker, (void *) i);
  for (unsigned i = 0; i < WORKERS; i++)
    pthread_join (workers[i], NULL);
  stop = true;
  pthread_join (compactor_thread, NULL);
  pthread_join (observer_thread, NULL);
  zs_pool_stop_refill (owner.pool);

  zs_pool_stats (owner.pool, &stats);
  diag ("%" PRIu64 " compactions moved %" PRIu64 " objects, freed %" PRIu64
        " pages; %" PRIu64 " retargets", (uint64_t) compactions,
        stats.objects_moved, stats.pages_compacted, (uint64_t) owner.retargets);
  ok (mismatches == 0, "%u reads differed from what was written",
      (unsigned) mismatches);
  ok (failed_allocs == 0, "%u allocations failed", (unsigned) failed_allocs);
  ok (failed_checks == 0, "zs_pool_check passed while running");
  ok (busy_compactions == 0, "the only compactor was never busy");
  ok (compactions > 0 && stats.objects_moved > 0,
      "compaction ran and moved objects concurrently");
  ok (test_owner_verify_all (&owner), "every object intact at the end");
  ok (!run_checks || zs_pool_check (owner.pool) == 0,
      "zs_pool_check passes at the end");
  ok (stats.reserve_pages > 0 && stats.reserve_pages * 4096 <= RESERVE_BYTES,
      "the reserve holds %" PRIu64 " warm pages, within its limit",
      stats.reserve_pages);

  test_owner_fini (&owner);
  free (corpus_sizes);
  return tap_done ();
}
