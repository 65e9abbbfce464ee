/* cswap allocator tests: a tiny owner of zsmalloc objects.
 *
 * What the page store will be, reduced to the bone: a table of handles
 * indexed by cookie, each entry guarded by one of a few striped mutexes,
 * and for each object the size and seed of the pattern written into it, so
 * that every read can be checked against what was written.
 */
#ifndef CSWAP_TEST_OWNER_H
#define CSWAP_TEST_OWNER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "zsmalloc.h"

#define TEST_OWNER_STRIPES 64

struct test_owner {
  struct zs_pool *pool;
  uint32_t cookies;
  zs_handle *handles;           /* by cookie; ZS_HANDLE_NONE: no object */
  uint32_t *sizes_bytes;
  uint64_t *seeds;
  pthread_mutex_t stripes[TEST_OWNER_STRIPES];
  /* Called by the lock callback before it locks: lets a test act in the
   * window where compaction has dropped the class lock.
   */
  void (*before_lock) (struct test_owner *owner, uint32_t cookie);
  /* Called by the retarget callback, with the cookie's lock held, before
   * it retargets: lets a test act in the middle of a move.
   */
  void (*before_retarget) (struct test_owner *owner, uint32_t cookie,
                           zs_handle from, zs_handle to);
  _Atomic uint64_t retargets;
  struct zs_pool_config config;  /* the pool's */
};

/* Makes the owner and its pool (with a reserve of RESERVE_BYTES of warm
 * zspages); exits on failure.
 */
extern void test_owner_init (struct test_owner *owner, uint32_t cookies,
                             unsigned max_pages_per_zspage,
                             uint64_t reserve_bytes);
/* The same over a shared zspage area of its own (config.shared_area,
 * MAP_SHARED | MAP_ANONYMOUS), for MAX_OBJECTS objects: a new pool made
 * from owner->config adopts what the last one left there.
 */
extern void test_owner_init_shared (struct test_owner *owner,
                                    uint32_t cookies, uint64_t max_objects,
                                    unsigned max_pages_per_zspage,
                                    uint64_t reserve_bytes);
extern void test_owner_fini (struct test_owner *owner);

extern void test_owner_lock (struct test_owner *owner, uint32_t cookie);
extern void test_owner_unlock (struct test_owner *owner, uint32_t cookie);

/* With the cookie's lock held.  test_owner_store allocates (or replaces)
 * the cookie's object and fills it with a pattern from SEED; returns false
 * with errno set if zs_malloc fails.  test_owner_verify checks the
 * pattern.  test_owner_drop frees the object if there is one.
 */
extern bool test_owner_store (struct test_owner *owner, uint32_t cookie,
                              uint32_t size_bytes, uint64_t seed);
extern bool test_owner_verify (struct test_owner *owner, uint32_t cookie);
extern void test_owner_rewrite (struct test_owner *owner, uint32_t cookie,
                                uint64_t seed);
extern void test_owner_drop (struct test_owner *owner, uint32_t cookie);

/* Whether classes FIRST..LAST of POOL hold no page that compaction
 * could free, as after a compaction with no other thread running;
 * prints the first that does.
 */
extern bool test_classes_compacted (struct zs_pool *pool, unsigned first,
                                    unsigned last);

/* Checks every object; no other thread may be running. */
extern bool test_owner_verify_all (struct test_owner *owner);

/* xorshift64*: a fast, reproducible generator; *STATE must not be 0. */
static inline uint64_t
test_rand (uint64_t *state)
{
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * UINT64_C (2685821657736338717);
}

/* The CSWAP_TEST_SCALE environment variable (default 1): sanitizer builds
 * set it below 1 to keep the random tests short.
 */
extern double test_scale (void);

/* Compressed sizes (1..4096; 4096 for pages that do not compress) of the
 * corpus pages in CSWAP_CORPUS under lz4, same-filled pages left out.
 * Returns how many, 0 if there is no corpus.
 */
extern size_t test_corpus_sizes (uint32_t **sizes_bytes);

#endif /* CSWAP_TEST_OWNER_H */
