/* cswap benchmark: the allocator (bench "alloc").
 *
 * overhead: compress every corpus page (same-filled pages left out, as the
 *   store keeps them without allocation) with lz4 and with zstd level 1,
 *   allocate objects of those sizes, the whole set replicated SCALE times,
 *   free a random half, compact; report the pool's bytes (pages and
 *   metadata) against the live bytes asked for.  Goal at scale 32: at most
 *   1.03.
 * compaction: fill every regular class, free most objects at random,
 *   compact class by class; compare the objects moved and pages freed
 *   with the optimum for that exact state, computed offline: empty the
 *   emptiest zspages into the free slots of the others for as long as one
 *   more can be emptied.  Goals: at least 98% of the pages, at most 1.10
 *   times the moves.
 * speed: alloc+free pairs per second on a shared pool, 1 and 2 threads.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "compress.h"
#include "page.h"
#include "zsmalloc.h"

#define OVERHEAD_SCALE 32
#define COMPACTION_ZSPAGES_PER_CLASS 256
#define COMPACTION_KEEP_PERCENT 30
#define SPEED_WORKING_SET 65536
#define SPEED_PAIRS 4000000
#define SPEED_MAX_THREADS 2
#define SPEED_RESERVE_BYTES (8u << 20)  /* the daemons' default */

/* The owner: handles by cookie.  Only one thread uses objects while
 * compaction runs, so the lock callbacks have nothing to do.
 */
struct owner {
  zs_handle *handles;
};

static void
owner_nolock (void *owner, uint32_t cookie)
{
  (void) owner;
  (void) cookie;
}

static bool
owner_retarget (void *opaque, uint32_t cookie, zs_handle from, zs_handle to)
{
  struct owner *owner = opaque;

  if (owner->handles[cookie] != from)
    return false;
  owner->handles[cookie] = to;
  return true;
}

static const struct zs_owner_ops owner_ops = {
  .lock = owner_nolock, .unlock = owner_nolock, .retarget = owner_retarget,
};

static uint64_t
xorshift (uint64_t *state)
{
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * UINT64_C (2685821657736338717);
}

static void *
xcalloc (size_t n, size_t size)
{
  void *p = calloc (n, size);

  if (p == NULL) {
    perror ("calloc");
    exit (1);
  }
  return p;
}

static struct zs_pool *
pool_create (struct owner *owner, uint64_t max_objects, uint64_t reserve_bytes)
{
  struct zs_pool_config config = {
    .max_objects = max_objects, .owner_ops = &owner_ops, .owner = owner,
    .reserve_bytes = reserve_bytes,
  };
  struct zs_pool *pool = zs_pool_create (&config);

  if (pool == NULL) {
    perror ("zs_pool_create");
    exit (1);
  }
  return pool;
}

static zs_handle
xmalloc_object (struct zs_pool *pool, size_t size, uint32_t cookie)
{
  zs_handle handle = zs_malloc (pool, size, cookie);

  if (handle == ZS_HANDLE_NONE) {
    perror ("zs_malloc");
    exit (1);
  }
  return handle;
}

static uint64_t
pool_bytes (const struct zs_pool_stats *stats)
{
  return stats->pages_used * CSWAP_PAGE_SIZE + stats->metadata_bytes;
}

/* Sizes of the non-same-filled pages under CODEC; 4096 for the pages it
 * does not shrink below a page.
 */
static size_t
compressed_sizes (const struct pagefile *pf, const struct codec_config *codec,
                  uint32_t *sizes_bytes)
{
  unsigned char dst[4096];
  size_t n = 0;

  for (size_t i = 0; i < pf->pages; i++) {
    const unsigned char *page = pagefile_page (pf, i);
    uint64_t value;
    size_t len;

    if (page_is_same_filled (page, &value))
      continue;
    len = codec_compress_page (codec, page, dst, sizeof dst);
    sizes_bytes[n++] = len ? len : 4096;
  }
  return n;
}

static void
bench_overhead (const char *codec_name, const uint32_t *sizes_bytes,
                size_t n, unsigned scale)
{
  uint64_t objects = (uint64_t) n * scale, live_bytes = 0, start_ns;
  struct owner owner = { xcalloc (objects, sizeof (zs_handle)) };
  uint32_t *order = xcalloc (objects, sizeof *order);
  struct zs_pool *pool = pool_create (&owner, objects, 0);
  struct zs_pool_stats before, after;
  struct zs_compact_result result;
  uint64_t rng = 0x9e3779b97f4a7c15;

  for (uint64_t i = 0; i < objects; i++) {
    owner.handles[i] = xmalloc_object (pool, sizes_bytes[i % n], i);
    live_bytes += sizes_bytes[i % n];
    order[i] = i;
  }
  /* Free a random half: the first half of a shuffle. */
  for (uint64_t i = 0; i < objects / 2; i++) {
    uint64_t j = i + xorshift (&rng) % (objects - i);
    uint32_t cookie = order[j];

    order[j] = order[i];
    zs_free (pool, owner.handles[cookie]);
    owner.handles[cookie] = ZS_HANDLE_NONE;
    live_bytes -= sizes_bytes[cookie % n];
  }
  zs_pool_stats (pool, &before);
  start_ns = monotonic_ns ();
  zs_compact (pool, &result);
  zs_pool_stats (pool, &after);

  printf ("{\"bench\":\"alloc\",\"test\":\"overhead\",\"codec\":\"%s\","
          "\"scale\":%u,\"live_objects\":%" PRIu64 ",\"live_bytes\":%" PRIu64
          ",\"pool_bytes_before_compaction\":%" PRIu64
          ",\"pool_bytes_after_compaction\":%" PRIu64
          ",\"metadata_bytes\":%" PRIu64 ",\"overhead_before_compaction\":%.4f"
          ",\"overhead\":%.4f,\"objects_moved\":%" PRIu64
          ",\"pages_freed\":%" PRIu64 ",\"compact_ms\":%.1f,\"huge_from_bytes\":%zu}\n",
          codec_name, scale, after.objects_used, live_bytes,
          pool_bytes (&before), pool_bytes (&after), after.metadata_bytes,
          (double) pool_bytes (&before) / live_bytes,
          (double) pool_bytes (&after) / live_bytes, result.objects_moved,
          result.pages_freed, (monotonic_ns () - start_ns) / 1e6,
          zs_huge_class_size (pool));
  fflush (stdout);
  zs_pool_destroy (pool);
  free (order);
  free (owner.handles);
}

static int
compare_u32 (const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

  return x < y ? -1 : x > y;
}

/* The fewest moves that free the most zspages of one class whose zspages
 * hold INUSE[0..N-1] objects of OBJS: empty the emptiest K, where K is as
 * large as the free slots allow.  Sorts INUSE.
 */
static void
optimal_compaction (uint32_t *inuse, size_t n, unsigned objs,
                    uint64_t *zspages_freed, uint64_t *objs_moved)
{
  uint64_t used = 0, k;

  for (size_t i = 0; i < n; i++)
    used += inuse[i];
  k = (n * objs - used) / objs;
  qsort (inuse, n, sizeof *inuse, compare_u32);
  *zspages_freed = k;
  *objs_moved = 0;
  for (uint64_t i = 0; i < k; i++)
    *objs_moved += inuse[i];
}

static void
bench_compaction (void)
{
  struct zs_pool_config probe_config = { .max_objects = 1 };
  struct zs_pool *probe = zs_pool_create (&probe_config);
  unsigned classes = zs_class_count (probe) - 1;  /* the huge one aside */
  struct zs_class_stats *class_stats = xcalloc (classes, sizeof *class_stats);
  uint64_t objects = 0, cookie = 0, rng = 0x853c49e6748fea9b;
  uint64_t opt_pages = 0, opt_moved = 0, start_ns;
  struct zs_compact_result total = { 0 };
  struct owner owner;
  struct zs_pool *pool;
  uint32_t *inuse_by_zspage, *inuse;

  for (unsigned c = 0; c < classes; c++) {
    zs_class_stats (probe, c, &class_stats[c]);
    objects += (uint64_t) class_stats[c].objects_per_zspage
      * COMPACTION_ZSPAGES_PER_CLASS;
  }
  zs_pool_destroy (probe);
  owner.handles = xcalloc (objects, sizeof (zs_handle));
  pool = pool_create (&owner, objects, 0);
  inuse_by_zspage = xcalloc (objects + 1024, sizeof *inuse_by_zspage);
  inuse = xcalloc (COMPACTION_ZSPAGES_PER_CLASS, sizeof *inuse);

  for (unsigned c = 0; c < classes; c++) {
    uint64_t first = cookie, nr_inuse = 0;

    for (uint64_t j = 0; j < (uint64_t) class_stats[c].objects_per_zspage
           * COMPACTION_ZSPAGES_PER_CLASS; j++, cookie++)
      owner.handles[cookie] = xmalloc_object (pool, class_stats[c].size - 4,
                                              cookie);
    for (uint64_t i = first; i < cookie; i++) {
      if (xorshift (&rng) % 100 >= COMPACTION_KEEP_PERCENT) {
        zs_free (pool, owner.handles[i]);
        owner.handles[i] = ZS_HANDLE_NONE;
      }
      else
        inuse_by_zspage[zs_handle_zspage (owner.handles[i])]++;
    }
    /* The snapshot: the zspages this class's live objects are in. */
    for (uint64_t i = first; i < cookie; i++) {
      uint32_t *count;

      if (owner.handles[i] == ZS_HANDLE_NONE)
        continue;
      count = &inuse_by_zspage[zs_handle_zspage (owner.handles[i])];
      if (*count) {
        inuse[nr_inuse++] = *count;
        *count = 0;
      }
    }
    {
      uint64_t freed, moved;

      optimal_compaction (inuse, nr_inuse, class_stats[c].objects_per_zspage,
                          &freed, &moved);
      opt_pages += freed * class_stats[c].pages_per_zspage;
      opt_moved += moved;
    }
  }

  start_ns = monotonic_ns ();
  for (unsigned c = 0; c < classes; c++) {
    struct zs_compact_result result;

    zs_compact_class (pool, c, &result);
    total.pages_freed += result.pages_freed;
    total.objects_moved += result.objects_moved;
  }
  printf ("{\"bench\":\"alloc\",\"test\":\"compaction\",\"classes\":%u,"
          "\"objects\":%" PRIu64 ",\"keep_percent\":%d,"
          "\"objs_moved\":%" PRIu64 ",\"optimal_objs_moved\":%" PRIu64
          ",\"pages_freed\":%" PRIu64 ",\"optimal_pages_freed\":%" PRIu64
          ",\"moved_vs_optimal\":%.4f,\"freed_vs_optimal\":%.4f"
          ",\"compact_ms\":%.1f}\n",
          classes, objects, COMPACTION_KEEP_PERCENT, total.objects_moved,
          opt_moved, total.pages_freed, opt_pages,
          (double) total.objects_moved / opt_moved,
          (double) total.pages_freed / opt_pages,
          (monotonic_ns () - start_ns) / 1e6);
  fflush (stdout);
  zs_pool_destroy (pool);
  free (inuse);
  free (inuse_by_zspage);
  free (owner.handles);
  free (class_stats);
}

struct speed_thread {
  pthread_t thread;
  struct zs_pool *pool;
  const uint32_t *sizes_bytes;
  size_t n;
  uint32_t first_cookie;
  uint64_t pairs;
};

/* Keeps a working set of its own cookies and replaces random members. */
static void *
speed_worker (void *arg)
{
  struct speed_thread *t = arg;
  zs_handle *set = xcalloc (SPEED_WORKING_SET, sizeof *set);
  uint64_t rng = 0x2545f4914f6cdd1d + t->first_cookie;

  for (uint32_t i = 0; i < SPEED_WORKING_SET; i++)
    set[i] = xmalloc_object (t->pool, t->sizes_bytes[xorshift (&rng) % t->n],
                             t->first_cookie + i);
  for (uint64_t i = 0; i < t->pairs; i++) {
    uint32_t slot = xorshift (&rng) % SPEED_WORKING_SET;

    zs_free (t->pool, set[slot]);
    set[slot] = xmalloc_object (t->pool,
                                t->sizes_bytes[xorshift (&rng) % t->n],
                                t->first_cookie + slot);
  }
  for (uint32_t i = 0; i < SPEED_WORKING_SET; i++)
    zs_free (t->pool, set[i]);
  free (set);
  return NULL;
}

/* Alloc+free pairs on NR_THREADS threads, with a reserve of RESERVE_BYTES
 * (0: every empty zspage goes back to the kernel at once) and no refill
 * thread: the churn keeps the reserve fed.
 */
static void
bench_speed (const uint32_t *sizes_bytes, size_t n, unsigned nr_threads,
             uint64_t reserve_bytes)
{
  struct owner owner = { NULL };
  struct zs_pool *pool = pool_create (&owner,
                                      SPEED_WORKING_SET * SPEED_MAX_THREADS,
                                      reserve_bytes);
  struct speed_thread threads[SPEED_MAX_THREADS];
  uint64_t start_ns = monotonic_ns (), elapsed_ns;

  for (unsigned i = 0; i < nr_threads; i++) {
    threads[i] = (struct speed_thread) {
      .pool = pool, .sizes_bytes = sizes_bytes, .n = n,
      .first_cookie = i * SPEED_WORKING_SET, .pairs = SPEED_PAIRS,
    };
    pthread_create (&threads[i].thread, NULL, speed_worker, &threads[i]);
  }
  for (unsigned i = 0; i < nr_threads; i++)
    pthread_join (threads[i].thread, NULL);
  elapsed_ns = monotonic_ns () - start_ns;
  printf ("{\"bench\":\"alloc\",\"test\":\"speed\",\"threads\":%u,"
          "\"reserve_bytes\":%" PRIu64 ",\"pairs\":%" PRIu64
          ",\"pairs_per_sec\":%.0f,\"working_set\":%d}\n",
          nr_threads, reserve_bytes, (uint64_t) SPEED_PAIRS * nr_threads,
          (double) SPEED_PAIRS * nr_threads * 1e9 / elapsed_ns,
          SPEED_WORKING_SET);
  fflush (stdout);
  zs_pool_destroy (pool);
}

int
main (int argc, char **argv)
{
  static const struct {
    const char *name;
    struct codec_config config;
  } codecs[] = {
    { "lz4", { CODEC_LZ4, 0 } },
    { "zstd-1", { CODEC_ZSTD, 1 } },
  };
  struct pagefile pf;
  uint32_t *sizes_bytes, *lz4_sizes_bytes;
  size_t n, lz4_n = 0;

  bench_load_pages (argc, argv, &pf);
  sizes_bytes = xcalloc (pf.pages, sizeof *sizes_bytes);
  lz4_sizes_bytes = xcalloc (pf.pages, sizeof *lz4_sizes_bytes);
  for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
    n = compressed_sizes (&pf, &codecs[c].config, sizes_bytes);
    if (c == 0) {
      memcpy (lz4_sizes_bytes, sizes_bytes, n * sizeof *sizes_bytes);
      lz4_n = n;
    }
    bench_overhead (codecs[c].name, sizes_bytes, n, 1);
    bench_overhead (codecs[c].name, sizes_bytes, n, OVERHEAD_SCALE);
  }
  pagefile_free (&pf);
  free (sizes_bytes);

  bench_compaction ();
  for (uint64_t reserve = 0; reserve <= SPEED_RESERVE_BYTES;
       reserve += SPEED_RESERVE_BYTES)
    for (unsigned threads = 1; threads <= SPEED_MAX_THREADS; threads++)
      bench_speed (lz4_sizes_bytes, lz4_n, threads, reserve);
  free (lz4_sizes_bytes);
  return 0;
}
