/* cswap allocator tests: the tiny owner (see test-owner.h). */
#include <inttypes.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pagefile.h"
#include "test-owner.h"

static pthread_mutex_t *
stripe (struct test_owner *owner, uint32_t cookie)
{
  return &owner->stripes[cookie % TEST_OWNER_STRIPES];
}

static void
owner_lock (void *opaque, uint32_t cookie)
{
  struct test_owner *owner = opaque;

  if (owner->before_lock)
    owner->before_lock (owner, cookie);
  test_owner_lock (owner, cookie);
}

static void
owner_unlock (void *opaque, uint32_t cookie)
{
  test_owner_unlock (opaque, cookie);
}

static bool
owner_retarget (void *opaque, uint32_t cookie, zs_handle from, zs_handle to)
{
  struct test_owner *owner = opaque;

  if (owner->before_retarget)
    owner->before_retarget (owner, cookie, from, to);
  if (owner->handles[cookie] != from)
    return false;
  owner->handles[cookie] = to;
  owner->retargets++;
  return true;
}

static const struct zs_owner_ops test_owner_ops = {
  .lock = owner_lock, .unlock = owner_unlock, .retarget = owner_retarget,
};

/* Makes the owner's tables; CONFIG.owner and owner_ops are filled in. */
static void
owner_init (struct test_owner *owner, uint32_t cookies,
            struct zs_pool_config config)
{
  memset (owner, 0, sizeof *owner);
  owner->cookies = cookies;
  owner->handles = calloc (cookies, sizeof *owner->handles);
  owner->sizes_bytes = calloc (cookies, sizeof *owner->sizes_bytes);
  owner->seeds = calloc (cookies, sizeof *owner->seeds);
  if (!owner->handles || !owner->sizes_bytes || !owner->seeds) {
    perror ("calloc");
    exit (1);
  }
  for (unsigned i = 0; i < TEST_OWNER_STRIPES; i++)
    pthread_mutex_init (&owner->stripes[i], NULL);
  owner->config = config;
  owner->config.owner_ops = &test_owner_ops;
  owner->config.owner = owner;
  owner->pool = zs_pool_create (&owner->config);
  if (owner->pool == NULL) {
    perror ("zs_pool_create");
    exit (1);
  }
}

void
test_owner_init (struct test_owner *owner, uint32_t cookies,
                 unsigned max_pages_per_zspage, uint64_t reserve_bytes)
{
  owner_init (owner, cookies, (struct zs_pool_config) {
      .max_pages_per_zspage = max_pages_per_zspage, .max_objects = cookies,
      .reserve_bytes = reserve_bytes,
    });
}

void
test_owner_init_shared (struct test_owner *owner, uint32_t cookies,
                        uint64_t max_objects, unsigned max_pages_per_zspage,
                        uint64_t reserve_bytes)
{
  struct zs_pool_config config = {
    .max_pages_per_zspage = max_pages_per_zspage, .max_objects = max_objects,
    .reserve_bytes = reserve_bytes,
  };
  size_t area_bytes = zs_pool_area_bytes (&config);

  config.shared_area = mmap (NULL, area_bytes, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE,
                             -1, 0);
  if (area_bytes == 0 || config.shared_area == MAP_FAILED) {
    perror ("mmap");
    exit (1);
  }
  owner_init (owner, cookies, config);
}

void
test_owner_fini (struct test_owner *owner)
{
  zs_pool_destroy (owner->pool);
  if (owner->config.shared_area)
    munmap (owner->config.shared_area,
            zs_pool_area_bytes (&owner->config));
  for (unsigned i = 0; i < TEST_OWNER_STRIPES; i++)
    pthread_mutex_destroy (&owner->stripes[i]);
  free (owner->handles);
  free (owner->sizes_bytes);
  free (owner->seeds);
}

void
test_owner_lock (struct test_owner *owner, uint32_t cookie)
{
  pthread_mutex_lock (stripe (owner, cookie));
}

void
test_owner_unlock (struct test_owner *owner, uint32_t cookie)
{
  pthread_mutex_unlock (stripe (owner, cookie));
}

/* The pattern: a generator seeded by SEED, so a check needs no copy. */
static void
fill_pattern (unsigned char *p, uint32_t size_bytes, uint64_t seed)
{
  uint64_t state = seed | 1;

  for (uint32_t i = 0; i < size_bytes; i += 8) {
    uint64_t word = test_rand (&state);

    memcpy (p + i, &word, size_bytes - i < 8 ? size_bytes - i : 8);
  }
}

static bool
check_pattern (const unsigned char *p, uint32_t size_bytes, uint64_t seed)
{
  uint64_t state = seed | 1;

  for (uint32_t i = 0; i < size_bytes; i += 8) {
    uint64_t word = test_rand (&state);

    if (memcmp (p + i, &word, size_bytes - i < 8 ? size_bytes - i : 8))
      return false;
  }
  return true;
}

bool
test_owner_store (struct test_owner *owner, uint32_t cookie,
                  uint32_t size_bytes, uint64_t seed)
{
  zs_handle handle = zs_malloc (owner->pool, size_bytes, cookie);

  if (handle == ZS_HANDLE_NONE)
    return false;
  test_owner_drop (owner, cookie);
  owner->handles[cookie] = handle;
  owner->sizes_bytes[cookie] = size_bytes;
  test_owner_rewrite (owner, cookie, seed);
  return true;
}

void
test_owner_rewrite (struct test_owner *owner, uint32_t cookie, uint64_t seed)
{
  owner->seeds[cookie] = seed;
  fill_pattern (zs_object (owner->pool, owner->handles[cookie]),
                owner->sizes_bytes[cookie], seed);
}

bool
test_owner_verify (struct test_owner *owner, uint32_t cookie)
{
  if (owner->handles[cookie] == ZS_HANDLE_NONE)
    return true;
  return check_pattern (zs_object (owner->pool, owner->handles[cookie]),
                        owner->sizes_bytes[cookie], owner->seeds[cookie]);
}

void
test_owner_drop (struct test_owner *owner, uint32_t cookie)
{
  if (owner->handles[cookie] == ZS_HANDLE_NONE)
    return;
  zs_free (owner->pool, owner->handles[cookie]);
  owner->handles[cookie] = ZS_HANDLE_NONE;
  owner->sizes_bytes[cookie] = 0;
}

bool
test_owner_verify_all (struct test_owner *owner)
{
  for (uint32_t cookie = 0; cookie < owner->cookies; cookie++)
    if (!test_owner_verify (owner, cookie)) {
      printf ("# cookie %u: contents differ\n", cookie);
      return false;
    }
  return true;
}

bool
test_classes_compacted (struct zs_pool *pool, unsigned first, unsigned last)
{
  for (unsigned i = first; i <= last; i++) {
    struct zs_class_stats class_stats;

    zs_class_stats (pool, i, &class_stats);
    if (class_stats.pages_freeable) {
      printf ("# class %u: %" PRIu64 " pages freeable after compaction\n",
              i, class_stats.pages_freeable);
      return false;
    }
  }
  return true;
}

double
test_scale (void)
{
  const char *s = getenv ("CSWAP_TEST_SCALE");
  double scale = s ? strtod (s, NULL) : 1.0;

  return scale > 0 ? scale : 1.0;
}

static bool
is_same_filled (const unsigned char *page)
{
  for (size_t i = 8; i < 4096; i += 8)
    if (memcmp (page, page + i, 8))
      return false;
  return true;
}

size_t
test_corpus_sizes (uint32_t **sizes_bytes)
{
  const char *path = getenv ("CSWAP_CORPUS");
  struct pagefile pf;
  char dst[4096];
  size_t n = 0;

  *sizes_bytes = NULL;
  if (path == NULL || access (path, R_OK) == -1 || pagefile_load (path, &pf) == -1)
    return 0;
  *sizes_bytes = malloc (pf.pages * sizeof **sizes_bytes);
  if (*sizes_bytes == NULL) {
    perror ("malloc");
    exit (1);
  }
  for (size_t i = 0; i < pf.pages; i++) {
    const unsigned char *page = pagefile_page (&pf, i);
    int len;

    if (is_same_filled (page))
      continue;
    len = LZ4_compress_default ((const char *) page, dst, 4096, sizeof dst);
    (*sizes_bytes)[n++] = len > 0 ? (uint32_t) len : 4096;
  }
  pagefile_free (&pf);
  return n;
}
