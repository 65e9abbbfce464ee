/* cswap: store/ — model-based random tests against a reference image,
 * from several threads with compaction running, the corpus, the pool
 * limit (and a writer at it that must not wait for compaction: its
 * backing file goes under $CSWAP_TIER_DIR or /var/tmp), codec changes
 * and bad input.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <time.h>
#include <unistd.h>

#include "compress.h"
#include "page.h"
#include "pagefile.h"
#include "store.h"
#include "tap.h"
#include "zsmalloc.h"

static struct pagefile corpus;
static unsigned scale = 1;      /* CSWAP_TEST_SCALE divides the op counts */

static uint64_t
rand64 (uint64_t *state)
{
  /* xorshift64*: a fast PRNG with a per-thread state, so runs repeat. */
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 2685821657736338717ull;
}

/* Fills LEN bytes with data of a kind a swap device sees: corpus bytes,
 * a same-filled value, zeros, or incompressible noise.
 */
static void
fill_random (uint64_t *rng, unsigned char *buf, size_t len)
{
  switch (rand64 (rng) % 4) {
  case 0: {
    uint64_t value = rand64 (rng) % 3 == 0 ? 0 : rand64 (rng);
    for (size_t i = 0; i < len; i++)
      buf[i] = value >> (8 * (i % 8));
    break;
  }
  case 1:
    for (size_t i = 0; i < len; i++)
      buf[i] = rand64 (rng);
    break;
  default:
    for (size_t done = 0; done < len;) {
      size_t page = rand64 (rng) % corpus.pages;
      size_t n = len - done < CSWAP_PAGE_SIZE ? len - done : CSWAP_PAGE_SIZE;
      memcpy (buf + done, pagefile_page (&corpus, page), n);
      done += n;
    }
  }
}

static void
fill_random_noise (uint64_t *rng, unsigned char *page)
{
  for (size_t i = 0; i < CSWAP_PAGE_SIZE; i += 8) {
    uint64_t v = rand64 (rng);
    memcpy (page + i, &v, 8);
  }
}

static struct store *
make_store (uint64_t size_bytes, enum codec_id codec, uint64_t pool_limit)
{
  struct store_config config = {
    .size_bytes = size_bytes,
    .codec = { codec, codec_default_level (codec) },
    .pool_limit_bytes = pool_limit,
  };
  struct store *store = store_create (&config);
  if (store == NULL)
    tap_bail_out ("store_create: %s", strerror (errno));
  return store;
}

/* One thread's share of the device: random operations on [BASE, BASE+LEN)
 * checked against its own reference copy.
 */
struct region_worker {
  struct store *store;
  uint64_t base, len;
  unsigned long ops;
  uint64_t seed;
  unsigned char *reference;
  unsigned long mismatches, errors;
};

static void *
random_ops (void *opaque)
{
  struct region_worker *w = opaque;
  uint64_t rng = w->seed;
  size_t max_io = 3 * CSWAP_PAGE_SIZE;
  unsigned char *buf = malloc (max_io);

  for (unsigned long op = 0; op < w->ops; op++) {
    /* Half the requests are page-aligned whole pages, as swap sends them;
     * the rest any offset and length, down to one byte.
     */
    uint64_t off, len;
    if (rand64 (&rng) % 2) {
      off = rand64 (&rng) % (w->len / CSWAP_PAGE_SIZE) * CSWAP_PAGE_SIZE;
      len = CSWAP_PAGE_SIZE;
    }
    else {
      off = rand64 (&rng) % w->len;
      len = 1 + rand64 (&rng) % max_io;
      if (len > w->len - off)
        len = w->len - off;
    }
    switch (rand64 (&rng) % 5) {
    case 0: case 1:
      fill_random (&rng, buf, len);
      if (store_write (w->store, buf, len, w->base + off) == 0)
        memcpy (w->reference + off, buf, len);
      else
        w->errors++;
      break;
    case 2:
      if (store_zero (w->store, len, w->base + off) == 0)
        memset (w->reference + off, 0, len);
      else
        w->errors++;
      break;
    default:
      if (store_read (w->store, buf, len, w->base + off) != 0)
        w->errors++;
      else if (memcmp (buf, w->reference + off, len) != 0)
        w->mismatches++;
    }
  }
  free (buf);
  return NULL;
}

static unsigned long
verify_region (struct region_worker *w)
{
  unsigned char *image = malloc (w->len);
  unsigned long bad = 0;

  if (store_read (w->store, image, w->len, w->base) != 0)
    bad++;
  else
    for (uint64_t p = 0; p < w->len; p += CSWAP_PAGE_SIZE)
      if (memcmp (image + p, w->reference + p, CSWAP_PAGE_SIZE) != 0)
        bad++;
  free (image);
  return bad;
}

static atomic_bool stop_compacting, stop_recompressing;

#define MAX_THREADS 4

static void *
compact_loop (void *opaque)
{
  struct store *store = opaque;
  struct zs_compact_result r;

  while (!atomic_load (&stop_compacting))
    store_compact (store, &r);
  return NULL;
}

/* zs_pool_check holds every class lock: more than ThreadSanitizer's
 * deadlock detector can track (64), so it is left out there.
 */
static bool
pool_check_possible (void)
{
  const char *sanitize = getenv ("CSWAP_SANITIZE");

  return sanitize == NULL || strstr (sanitize, "thread") == NULL;
}

/* Recompression passes one after another (store/recompress.c), beside
 * the sweeper thread's own.
 */
static void *
recompress_loop (void *opaque)
{
  struct store *store = opaque;
  uint64_t pages;

  while (!atomic_load (&stop_recompressing))
    store_recompress_now (store, &pages);
  return NULL;
}

/* BACKGROUND: with the store's background threads, so that whole-page
 * writes are stored raw and compressed later by the compressor thread
 * (store/deferred.c) while the workers read, rewrite and trim them.
 * RECOMPRESSING: zstd as the cold codec, and passes run back to back, so
 * that pages are compressed again under the workers too.
 */
static void
test_model (unsigned threads, bool compacting, bool background,
            bool recompressing, enum codec_id codec)
{
  const uint64_t region = 256 * CSWAP_PAGE_SIZE;
  struct store *store = make_store (threads * region, codec, 0);
  struct region_worker w[MAX_THREADS];
  pthread_t tid[MAX_THREADS], compactor, recompressor;
  unsigned long mismatches = 0, errors = 0, final_bad = 0;
  struct store_recompress cold = { true, { CODEC_ZSTD, 1 }, 1 };

  atomic_store (&stop_compacting, false);
  atomic_store (&stop_recompressing, false);
  if (recompressing && store_set_recompress (store, &cold) != 0)
    tap_bail_out ("store_set_recompress failed");
  if (background && store_start_background (store) != 0)
    tap_bail_out ("store_start_background failed");
  if (compacting)
    pthread_create (&compactor, NULL, compact_loop, store);
  if (recompressing)
    pthread_create (&recompressor, NULL, recompress_loop, store);
  for (unsigned t = 0; t < threads; t++) {
    w[t] = (struct region_worker) {
      .store = store, .base = t * region, .len = region,
      .ops = 200000 / threads / scale, .seed = 0x9e3779b97f4a7c15ull * (t + 1),
      .reference = calloc (1, region),
    };
    pthread_create (&tid[t], NULL, random_ops, &w[t]);
  }
  for (unsigned t = 0; t < threads; t++) {
    pthread_join (tid[t], NULL);
    mismatches += w[t].mismatches;
    errors += w[t].errors;
  }
  atomic_store (&stop_compacting, true);
  atomic_store (&stop_recompressing, true);
  if (compacting)
    pthread_join (compactor, NULL);
  if (recompressing) {
    struct store_stats s;
    pthread_join (recompressor, NULL);
    store_stats (store, &s);
    diag ("%llu pages recompressed in %llu passes",
          (unsigned long long) s.recompressed_pages,
          (unsigned long long) s.recompress_passes);
  }
  if (background) {
    /* Compresses what is still queued: the final check reads it back. */
    struct store_stats s;
    store_stop_background (store);
    store_stats (store, &s);
    ok (s.deferred_pages == 0, "stopping the background threads leaves no "
        "page deferred (%llu)", (unsigned long long) s.deferred_pages);
  }
  for (unsigned t = 0; t < threads; t++) {
    final_bad += verify_region (&w[t]);
    free (w[t].reference);
  }
  ok (errors == 0 && mismatches == 0 && final_bad == 0,
      "%s, %u thread(s)%s%s%s: random reads/writes/zeroes of any offset and "
      "length match the reference (%lu mismatches, %lu errors, %lu bad pages "
      "at the end)", codec_name (codec), threads,
      compacting ? " with compaction running" : "",
      background ? " and deferred compression" : "",
      recompressing ? " and recompression" : "", mismatches, errors,
      final_bad);

  if (pool_check_possible ())
    ok (zs_pool_check (store_pool (store)) == 0,
        "allocator invariants hold afterwards");
  store_destroy (store);
}

/* Every corpus page through a device, then read back; at least 144 MiB of
 * them (the large corpus's size: the sample the repository carries is
 * written about 11 times over), since the metadata checked per page has a
 * fixed part (the pool's and the store's structures) that fewer pages would
 * not amortize.
 */
enum { CORPUS_TEST_PAGES = 144 << 8 };

static void
test_corpus (enum codec_id codec)
{
  uint64_t pages = corpus.pages > CORPUS_TEST_PAGES
    ? corpus.pages : CORPUS_TEST_PAGES;
  struct store *store = make_store (pages * CSWAP_PAGE_SIZE, codec, 0);
  struct store_stats s;
  unsigned char page[CSWAP_PAGE_SIZE];
  size_t same = 0, bad = 0, errors = 0;
  uint64_t value;

  for (uint64_t i = 0; i < pages; i++) {
    const unsigned char *data = pagefile_page (&corpus, i % corpus.pages);

    if (page_is_same_filled (data, &value))
      same++;
    if (store_write (store, data, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE))
      errors++;
  }
  for (uint64_t i = 0; i < pages; i++) {
    if (store_read (store, page, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE))
      errors++;
    else if (memcmp (page, pagefile_page (&corpus, i % corpus.pages),
                     CSWAP_PAGE_SIZE))
      bad++;
  }
  store_stats (store, &s);
  ok (errors == 0 && bad == 0, "%s: every corpus page reads back exact",
      codec_name (codec));
  ok (s.pages_stored == pages && s.same_filled_pages == same,
      "%s: counters: %llu pages stored, %llu same-filled, %llu huge",
      codec_name (codec), (unsigned long long) s.pages_stored,
      (unsigned long long) s.same_filled_pages,
      (unsigned long long) s.huge_pages);
  double per_page = (double) s.metadata_bytes / s.pages_stored;
  ok (per_page <= 16.0, "%s: metadata %.2f bytes per stored page (<= 16), "
      "effective ratio %.3f", codec_name (codec), per_page,
      (double) s.original_bytes / (s.pool_bytes + s.metadata_bytes));

  /* Zeroing everything gives every byte of pool memory back. */
  ok (store_zero (store, pages * CSWAP_PAGE_SIZE, 0) == 0, "zero the device");
  store_stats (store, &s);
  ok (s.pages_stored == 0 && s.pool_bytes == 0 && s.compressed_bytes == 0,
      "%s: after zeroing the whole device nothing is stored (%llu pages, "
      "%llu pool bytes)", codec_name (codec),
      (unsigned long long) s.pages_stored, (unsigned long long) s.pool_bytes);
  store_destroy (store);
}

/* Whole pages written with the background threads running wait in lz4
 * (raw when lz4 does not shrink them) and are compressed again with zstd
 * by the compressor thread: reads see the same bytes before and after,
 * and the pool ends up no larger than without it (a page zstd does not
 * shrink below lz4 stays in lz4).
 */
static void
test_deferred (void)
{
  const uint64_t pages = corpus.pages < 4096 ? corpus.pages : 4096;
  struct store *inline_store = make_store (pages * CSWAP_PAGE_SIZE, CODEC_ZSTD, 0);
  struct store *store = make_store (pages * CSWAP_PAGE_SIZE, CODEC_ZSTD, 0);
  /* Inline lz4: its raw pages are those lz4 cannot shrink, the only ones
   * that may wait raw.
   */
  struct store *lz4_store = make_store (pages * CSWAP_PAGE_SIZE, CODEC_LZ4, 0);
  struct store_stats with, without, lz4;
  unsigned char page[CSWAP_PAGE_SIZE];
  uint64_t bad = 0, queued_seen = 0, raw_queued_seen = 0;

  if (store_start_background (store) != 0)
    tap_bail_out ("store_start_background failed");
  for (uint64_t i = 0; i < pages; i++) {
    const void *data = pagefile_page (&corpus, i);
    store_write (inline_store, data, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE);
    store_write (store, data, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE);
    if (i % 64 == 0) {
      /* Raw pages beyond the inline store's are queued ones left raw. */
      store_stats (store, &with);
      store_stats (inline_store, &without);
      queued_seen = MAX (queued_seen, with.deferred_pages);
      if (with.huge_pages > without.huge_pages)
        raw_queued_seen = MAX (raw_queued_seen,
                               with.huge_pages - without.huge_pages);
    }
    /* Read back at once, most likely while it is still queued. */
    if (store_read (store, page, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE)
        || memcmp (page, data, CSWAP_PAGE_SIZE))
      bad++;
  }
  store_stop_background (store);
  for (uint64_t i = 0; i < pages; i++)
    if (store_read (store, page, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE)
        || memcmp (page, pagefile_page (&corpus, i), CSWAP_PAGE_SIZE))
      bad++;
  store_stats (store, &with);
  store_stats (inline_store, &without);
  diag ("deferred: at most %llu pages seen waiting", (unsigned long long) queued_seen);
  /* After the loop, so that it does not slow the writes the queue takes. */
  for (uint64_t i = 0; i < pages; i++)
    store_write (lz4_store, pagefile_page (&corpus, i), CSWAP_PAGE_SIZE,
                 i * CSWAP_PAGE_SIZE);
  store_stats (lz4_store, &lz4);
  ok (raw_queued_seen <= lz4.huge_pages, "deferred: pages wait in lz4, "
      "raw only where lz4 does not shrink them (at most %llu of %llu "
      "waiting raw; %llu pages lz4 does not shrink)",
      (unsigned long long) raw_queued_seen, (unsigned long long) queued_seen,
      (unsigned long long) lz4.huge_pages);
  ok (bad == 0, "deferred: %llu pages read back right while queued and after "
      "compression (%llu wrong)", (unsigned long long) pages,
      (unsigned long long) bad);
  ok (with.deferred_pages == 0 && with.huge_pages <= without.huge_pages
      && with.compressed_bytes <= without.compressed_bytes
      && with.compressed_bytes > without.compressed_bytes * 99 / 100,
      "deferred: once drained, the pages take no more than inline, and "
      "about as much (%llu/%llu raw, %llu/%llu bytes)",
      (unsigned long long) with.huge_pages,
      (unsigned long long) without.huge_pages,
      (unsigned long long) with.compressed_bytes,
      (unsigned long long) without.compressed_bytes);
  store_destroy (store);
  store_destroy (inline_store);
  store_destroy (lz4_store);
}

/* Pages written with lz4 and zstd as the cold codec: a pass recompresses
 * exactly the pages untouched since the pass before, each reads back
 * exact, and the bytes saved are what the store shrank by.  Passes run
 * here (store_recompress_now), the sweeper thread not started: the test
 * says when a pass is.
 */
static uint64_t
compressed_bytes (struct store *store)
{
  struct store_stats s;

  store_stats (store, &s);
  return s.compressed_bytes;
}

static uint64_t
read_pages_back (struct store *store, uint64_t first, uint64_t count)
{
  unsigned char page[CSWAP_PAGE_SIZE];
  uint64_t bad = 0;

  for (uint64_t i = first; i < first + count; i++)
    if (store_read (store, page, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE)
        || memcmp (page, pagefile_page (&corpus, i), CSWAP_PAGE_SIZE))
      bad++;
  return bad;
}

static void
test_recompress (void)
{
  const uint64_t pages = corpus.pages < 2048 ? corpus.pages : 2048;
  const uint64_t hot = pages / 4;
  struct store *store = make_store (pages * CSWAP_PAGE_SIZE, CODEC_LZ4, 0);
  struct store_recompress cold = { true, { CODEC_ZSTD, 1 }, 3600 }, bad, got;
  struct store_stats s;
  uint64_t done, first, second, before, stored_hot = 0, stored_cold = 0;

  ok (store_recompress_now (store, &done) == -EINVAL,
      "recompress: no pass without a cold codec");
  bad = cold;
  bad.after_s = 0;
  ok (store_set_recompress (store, &bad) == -EINVAL,
      "recompress: cold-after 0 is refused");
  bad = (struct store_recompress) { true, { CODEC_ZSTD, 99 }, 60 };
  ok (store_set_recompress (store, &bad) == -EINVAL,
      "recompress: a level zstd lacks is refused");
  store_get_recompress (store, &got);
  ok (!got.enabled, "recompress: refused settings change nothing");
  if (store_set_recompress (store, &cold) != 0)
    tap_bail_out ("store_set_recompress failed");

  for (uint64_t i = 0; i < pages; i++) {
    uint64_t value;
    store_write (store, pagefile_page (&corpus, i), CSWAP_PAGE_SIZE,
                 i * CSWAP_PAGE_SIZE);
    if (!page_is_same_filled (pagefile_page (&corpus, i), &value))
      *(i < hot ? &stored_hot : &stored_cold) += 1;
  }
  before = compressed_bytes (store);
  store_recompress_now (store, &first);
  ok (first == 0, "recompress: a pass right after the writes recompresses "
      "nothing (%llu)", (unsigned long long) first);
  ok (read_pages_back (store, 0, hot) == 0, "recompress: the hot quarter "
      "is read");
  store_recompress_now (store, &second);
  ok (second > 0 && second <= stored_cold,
      "recompress: the next pass recompresses only pages untouched since "
      "(%llu of %llu cold, %llu hot left)", (unsigned long long) second,
      (unsigned long long) stored_cold, (unsigned long long) stored_hot);
  store_stats (store, &s);
  ok (s.recompressed_pages == second
      && s.recompressed_saved_bytes == before - s.compressed_bytes
      && s.compressed_bytes < before,
      "recompress: counted, and the bytes saved are what the store shrank "
      "by (%llu -> %llu bytes)", (unsigned long long) before,
      (unsigned long long) s.compressed_bytes);
  ok (read_pages_back (store, 0, pages) == 0,
      "recompress: every page reads back exact, recompressed or not");
  /* That read touched every page: one pass ages them, the next takes
   * the hot quarter, still lz4.
   */
  store_recompress_now (store, &first);
  store_recompress_now (store, &second);
  ok (first == 0 && second > 0 && second <= stored_hot,
      "recompress: the hot pages, once left alone for a pass, follow "
      "(%llu then %llu)", (unsigned long long) first,
      (unsigned long long) second);
  ok (read_pages_back (store, 0, pages) == 0,
      "recompress: all pages read back after the second round");
  if (pool_check_possible ())
    ok (zs_pool_check (store_pool (store)) == 0,
        "recompress: the allocator's invariants hold");
  store_destroy (store);
}

/* A pool left fragmented by trims is compacted by the background policy,
 * with no store_compact() call; with compact=off it is not.
 */
static uint64_t
fragment_pool (struct store *store, uint64_t pages)
{
  struct store_stats s;

  for (uint64_t i = 0; i < pages; i++)
    store_write (store, pagefile_page (&corpus, i % corpus.pages),
                 CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE);
  for (uint64_t i = 0; i < pages; i++)
    if (i % 4)                  /* three pages in four go */
      store_zero (store, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE);
  store_stats (store, &s);
  return s.pool_bytes;
}

static void
test_auto_compact (void)
{
  const uint64_t pages = 8192;
  struct store_config config = {
    .size_bytes = pages * CSWAP_PAGE_SIZE,
    .codec = { CODEC_ZSTD, codec_default_level (CODEC_ZSTD) },
  };
  struct store *store = store_create (&config);
  struct store_stats s;
  unsigned char page[CSWAP_PAGE_SIZE];
  uint64_t before = fragment_pool (store, pages), bad = 0;

  store_start_background (store);
  /* A hang guard, not a threshold: the compressor and the once-a-second
   * check take well under it even on a loaded machine (5 s was not).
   * Under memory pressure the PSI trigger may compact first, leaving the
   * timer nothing to do: either run counts.
   */
  for (int tenth = 0; tenth < 600; tenth++) {
    store_stats (store, &s);
    if (s.auto_compactions + s.pressure_compactions > 0
        && s.deferred_pages == 0)
      break;
    usleep (100000);
  }
  store_stats (store, &s);
  ok (s.auto_compactions + s.pressure_compactions > 0
      && s.pool_bytes * 2 < before,
      "a fragmented pool is compacted with no command: %llu -> %llu bytes "
      "for %llu compressed (%llu runs, %llu under pressure)",
      (unsigned long long) before, (unsigned long long) s.pool_bytes,
      (unsigned long long) s.compressed_bytes,
      (unsigned long long) s.auto_compactions,
      (unsigned long long) s.pressure_compactions);
  for (uint64_t i = 0; i < pages; i += 4)
    if (store_read (store, page, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE)
        || memcmp (page, pagefile_page (&corpus, i % corpus.pages), CSWAP_PAGE_SIZE))
      bad++;
  ok (bad == 0, "and every page left reads back (%llu wrong)",
      (unsigned long long) bad);
  if (access ("/proc/pressure/memory", W_OK) == 0)
    ok (s.psi_trigger == 1, "memory-pressure events are watched through PSI");
  else
    diag ("no writable /proc/pressure/memory: the PSI trigger is not tested");
  store_destroy (store);

  config.manual_compaction = true;
  store = store_create (&config);
  before = fragment_pool (store, pages);
  store_start_background (store);
  sleep (2);
  store_stats (store, &s);
  ok (s.auto_compactions == 0 && s.pool_bytes == before,
      "compact=off: the pool is left as it is (%llu bytes)",
      (unsigned long long) s.pool_bytes);
  store_destroy (store);
}

/* Writes PAGE to page I of STORE; on success keeps it in REFERENCE. */
static int
write_kept (struct store *store, unsigned char *reference, uint64_t i,
            const void *page)
{
  int r = store_write (store, page, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE);
  if (r == 0)
    memcpy (reference + i * CSWAP_PAGE_SIZE, page, CSWAP_PAGE_SIZE);
  return r;
}

static uint64_t
count_mismatches (struct store *store, const unsigned char *reference,
                  uint64_t pages)
{
  unsigned char page[CSWAP_PAGE_SIZE];
  uint64_t bad = 0;

  for (uint64_t i = 0; i < pages; i++)
    if (store_read (store, page, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE) != 0
        || memcmp (page, reference + i * CSWAP_PAGE_SIZE, CSWAP_PAGE_SIZE))
      bad++;
  return bad;
}

static void
test_pool_limit (void)
{
  const uint64_t limit = 1 << 20, pages = 4096;
  struct store *store = make_store (pages * CSWAP_PAGE_SIZE, CODEC_LZ4, limit);
  unsigned char *reference = calloc (pages, CSWAP_PAGE_SIZE);
  struct store_stats s;
  unsigned char noise[CSWAP_PAGE_SIZE];
  uint64_t first_refused = pages, rng = 42;

  for (uint64_t i = 0; i < pages; i++) {
    int r = write_kept (store, reference, i,
                        pagefile_page (&corpus, i % corpus.pages));
    if (r == -ENOSPC && first_refused == pages)
      first_refused = i;
  }
  store_stats (store, &s);
  ok (first_refused < pages && s.failed_writes > 0 && s.pool_limit_hits > 0,
      "writes past the pool limit fail with ENOSPC (first at page %llu, "
      "%llu refused)", (unsigned long long) first_refused,
      (unsigned long long) s.failed_writes);

  /* Raw pages take one-page zspages: they fill whatever room the longer
   * zspages of compressed pages could not use, up to the limit exactly
   * (less the slot table's chunks, which it counts too) and never past
   * it.
   */
  for (uint64_t i = 0; i < pages; i++) {
    fill_random_noise (&rng, noise);
    if (write_kept (store, reference, (first_refused + i) % pages, noise))
      break;
  }
  store_stats (store, &s);
  uint64_t used = s.pool_bytes + s.slot_chunk_bytes;
  ok (used <= limit && limit - used < 2 * CSWAP_PAGE_SIZE
      && s.slot_chunk_bytes > 0 && s.pool_peak_bytes == s.pool_bytes,
      "raw pages fill the pool to the limit and no further: %llu bytes "
      "and %llu of slot chunks, peak %llu, for a %llu-byte limit",
      (unsigned long long) s.pool_bytes,
      (unsigned long long) s.slot_chunk_bytes,
      (unsigned long long) s.pool_peak_bytes, (unsigned long long) limit);
  ok (count_mismatches (store, reference, pages) == 0,
      "every page written reads back, every refused one as zeros");

  /* Refused overwrites keep the old data. */
  fill_random_noise (&rng, noise);
  ok (write_kept (store, reference, 0, noise) == -ENOSPC
      && count_mismatches (store, reference, 1) == 0,
      "a refused overwrite leaves the old page in place");

  /* Freeing room lets writes through again. */
  store_zero (store, first_refused / 2 * CSWAP_PAGE_SIZE, 0);
  memset (reference, 0, first_refused / 2 * CSWAP_PAGE_SIZE);
  ok (write_kept (store, reference, 0, noise) == 0
      && count_mismatches (store, reference, pages) == 0,
      "after a trim, writes succeed again");
  free (reference);
  store_destroy (store);
}

/* Writers on every thread meet the limit at once: each one may need a new
 * zspage of up to 8 pages at the same moment, and the pool must still
 * never pass the limit (the swap-fuse-tier test once saw 106 KiB over).
 */
struct limit_writer {
  struct store *store;
  uint64_t first_page, pages, seed;
  unsigned long refused;
};

static void *
write_until_full (void *opaque)
{
  struct limit_writer *w = opaque;
  uint64_t rng = w->seed;

  for (int round = 0; round < 4; round++)
    for (uint64_t i = 0; i < w->pages; i++) {
      uint64_t page = w->first_page + i;
      if (store_write (w->store, pagefile_page (&corpus, rand64 (&rng) % corpus.pages),
                       CSWAP_PAGE_SIZE, page * CSWAP_PAGE_SIZE))
        w->refused++;
      if (rand64 (&rng) % 8 == 0)   /* frees make room to race for */
        store_zero (w->store, CSWAP_PAGE_SIZE,
                    (w->first_page + rand64 (&rng) % w->pages) * CSWAP_PAGE_SIZE);
    }
  return NULL;
}

static void
test_pool_limit_concurrent (void)
{
  enum { THREADS = 4 };
  /* Not a multiple of any zspage length, so the last zspages do not fit. */
  const uint64_t limit = (1 << 20) + 3 * CSWAP_PAGE_SIZE, pages = 8192;
  struct store *store = make_store (pages * CSWAP_PAGE_SIZE, CODEC_ZSTD, limit);
  struct limit_writer writers[THREADS];
  pthread_t threads[THREADS];
  unsigned long refused = 0;
  struct store_stats s;

  for (unsigned t = 0; t < THREADS; t++) {
    writers[t] = (struct limit_writer) {
      .store = store, .first_page = t * (pages / THREADS),
      .pages = pages / THREADS, .seed = 1000 + t };
    pthread_create (&threads[t], NULL, write_until_full, &writers[t]);
  }
  for (unsigned t = 0; t < THREADS; t++) {
    pthread_join (threads[t], NULL);
    refused += writers[t].refused;
  }
  store_stats (store, &s);
  ok (refused > 0 && s.pool_peak_bytes <= limit,
      "%d writers at the limit: peak %llu bytes for a %llu-byte limit "
      "(%lu writes refused)", THREADS, (unsigned long long) s.pool_peak_bytes,
      (unsigned long long) limit, refused);
  store_destroy (store);
}

/* A writer that needs room waits for a writeback batch, never for a
 * compaction: once a compaction is held at a gate (zs_compact wrapped, below),
 * a writer fills the pool three times over, and must finish with the gate
 * still shut.  Pages are all of one size, so a batch frees holes that the
 * next writes fill with no compaction at all.
 *
 * The gate has a hang guard: the old writeback, which compacted on the
 * writer's path, would otherwise wait forever.  It is no timing threshold:
 * the writer is done long before it on any machine, and a writer still
 * stuck when it expires is one that waits for compaction.
 */
#define GATE_GUARD_S 60

struct compaction_gate {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  unsigned held;                /* compactions waiting at the gate */
  bool open, writer_done, guard_expired;
};

static bool
gate_wait (struct compaction_gate *g, const bool *until)
{
  struct timespec deadline;

  clock_gettime (CLOCK_REALTIME, &deadline);
  deadline.tv_sec += GATE_GUARD_S;
  while (!*until)
    if (pthread_cond_timedwait (&g->changed, &g->lock, &deadline) == ETIMEDOUT)
      return false;
  return true;
}

static void
hold_compaction (struct compaction_gate *g)
{
  pthread_mutex_lock (&g->lock);
  g->held++;
  pthread_cond_broadcast (&g->changed);
  if (!gate_wait (g, &g->open))
    g->guard_expired = true;
  g->held--;
  pthread_mutex_unlock (&g->lock);
}

/* The gate every compaction the store runs passes first, or NULL: the
 * test links with -Wl,--wrap=zs_compact (tests/store/meson.build), so the
 * store's calls of zs_compact come here, on the thread that compacts,
 * without a hook in the store.
 */
static struct compaction_gate *_Atomic compaction_gate;

extern int __real_zs_compact (struct zs_pool *pool,
                              struct zs_compact_result *result);
extern int __wrap_zs_compact (struct zs_pool *pool,
                              struct zs_compact_result *result);

int
__wrap_zs_compact (struct zs_pool *pool, struct zs_compact_result *result)
{
  struct compaction_gate *g = compaction_gate;

  if (g)
    hold_compaction (g);
  return __real_zs_compact (pool, result);
}

static unsigned
compactions_held (struct compaction_gate *g)
{
  pthread_mutex_lock (&g->lock);
  unsigned held = g->held;
  pthread_mutex_unlock (&g->lock);
  return held;
}

struct gated_writer {
  struct store *store;
  struct compaction_gate *gate;
  uint64_t device_pages, pool_pages;
  unsigned char *reference;
  uint64_t written_while_held;
  unsigned long refused;
};

/* Half noise, half zeros: every page compresses to one object size. */
static void
make_half_page (uint64_t *rng, unsigned char *page)
{
  fill_random_noise (rng, page);
  memset (page + CSWAP_PAGE_SIZE / 2, 0, CSWAP_PAGE_SIZE / 2);
}

/* Writes round the device until a compaction is held, then three pools'
 * worth more.
 */
static void *
write_through_the_gate (void *opaque)
{
  struct gated_writer *w = opaque;
  uint64_t rng = 7;
  unsigned char page[CSWAP_PAGE_SIZE];

  for (uint64_t i = 0; w->written_while_held < 3 * w->pool_pages
         && i < 4 * w->device_pages; i++) {
    uint64_t slot = i % w->device_pages;
    make_half_page (&rng, page);
    if (store_write (w->store, page, CSWAP_PAGE_SIZE, slot * CSWAP_PAGE_SIZE))
      w->refused++;
    else
      memcpy (w->reference + slot * CSWAP_PAGE_SIZE, page, CSWAP_PAGE_SIZE);
    if (w->written_while_held || compactions_held (w->gate))
      w->written_while_held++;
  }
  pthread_mutex_lock (&w->gate->lock);
  w->gate->writer_done = true;
  pthread_cond_broadcast (&w->gate->changed);
  pthread_mutex_unlock (&w->gate->lock);
  return NULL;
}

static void
test_writer_not_behind_compaction (void)
{
  const uint64_t limit = 1 << 20, pages = 2 * 3 * (limit / CSWAP_PAGE_SIZE);
  const char *dir = getenv ("CSWAP_TIER_DIR");
  char backing[256];
  struct compaction_gate gate = {
    .lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER };
  struct store_config config = {
    .size_bytes = pages * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, 0 },
    .pool_limit_bytes = limit,
    .backing_path = backing,
    .backing_size_bytes = 2 * pages * CSWAP_PAGE_SIZE,
    .writeback_batch_pages = 32,
  };
  struct gated_writer w = {
    .gate = &gate, .device_pages = pages, .pool_pages = limit / CSWAP_PAGE_SIZE,
    .reference = calloc (pages, CSWAP_PAGE_SIZE) };
  struct store_stats s;
  pthread_t writer;

  snprintf (backing, sizeof backing, "%s/cswap-test-store.%d",
            dir ? dir : "/var/tmp", (int) getpid ());
  compaction_gate = &gate;
  w.store = store_create (&config);
  if (w.store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  if (store_start_background (w.store) != 0)
    tap_bail_out ("store_start_background failed");
  pthread_create (&writer, NULL, write_through_the_gate, &w);
  pthread_mutex_lock (&gate.lock);
  bool done = gate_wait (&gate, &gate.writer_done);
  gate.open = true;
  pthread_cond_broadcast (&gate.changed);
  pthread_mutex_unlock (&gate.lock);
  pthread_join (writer, NULL);
  store_stats (w.store, &s);
  ok (done && !gate.guard_expired
      && w.written_while_held == 3 * w.pool_pages,
      "with a compaction held, a writer fills the pool 3 times over "
      "(%llu pages written while held, %llu writes waited for room)",
      (unsigned long long) w.written_while_held,
      (unsigned long long) s.writes_waited);
  ok (s.writes_waited > 0 && s.written_back_pages > 0 && w.refused == 0
      && count_mismatches (w.store, w.reference, pages) == 0,
      "every write made room by writeback (%llu pages written back, %lu "
      "refused) and reads back", (unsigned long long) s.written_back_pages,
      w.refused);
  ok (s.pool_peak_bytes <= limit, "the pool never passed its limit "
      "(peak %llu bytes)", (unsigned long long) s.pool_peak_bytes);
  store_destroy (w.store);
  compaction_gate = NULL;       /* no thread of the store's is left */
  unlink (backing);
  free (w.reference);
}

static void
test_codec_change (void)
{
  const uint64_t pages = 512;
  struct store *store = make_store (pages * CSWAP_PAGE_SIZE, CODEC_LZ4, 0);
  struct codec_config zstd = { CODEC_ZSTD, 3 }, bad_level = { CODEC_ZSTD, 99 }, got;
  unsigned char page[CSWAP_PAGE_SIZE];
  uint64_t bad = 0;

  for (uint64_t i = 0; i < pages; i++) {
    if (i == pages / 2)
      store_set_codec (store, &zstd);
    store_write (store, pagefile_page (&corpus, i), CSWAP_PAGE_SIZE,
                 i * CSWAP_PAGE_SIZE);
  }
  for (uint64_t i = 0; i < pages; i++) {
    store_read (store, page, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE);
    if (memcmp (page, pagefile_page (&corpus, i), CSWAP_PAGE_SIZE))
      bad++;
  }
  ok (bad == 0, "pages written before and after a codec change read back");
  ok (store_set_codec (store, &bad_level) == -EINVAL, "a bad level is refused");
  store_get_codec (store, &got);
  ok (got.id == CODEC_ZSTD && got.level == 3, "and the codec is unchanged");
  store_destroy (store);
}

static void
test_bad_input (void)
{
  const uint64_t size = 16 * CSWAP_PAGE_SIZE;
  struct store *store = make_store (size, CODEC_LZ4, 0);
  unsigned char buf[2 * CSWAP_PAGE_SIZE] = { 1 };
  struct store_stats s;

  ok (store_read (store, buf, 1, size) == -EINVAL, "read past the end: EINVAL");
  ok (store_write (store, buf, 2, size - 1) == -EINVAL,
      "write straddling the end: EINVAL");
  ok (store_zero (store, UINT64_MAX, 4096) == -EINVAL,
      "zero with an overflowing length: EINVAL");
  ok (store_write (store, buf, 0, size) == 0, "an empty write at the end is fine");
  store_stats (store, &s);
  ok (s.pages_stored == 0, "refused requests stored nothing");
  store_destroy (store);

  struct store_config bad[] = {
    { .size_bytes = 0, .codec = { CODEC_LZ4, 0 } },
    { .size_bytes = 4097, .codec = { CODEC_LZ4, 0 } },
    { .size_bytes = 4096, .codec = { CODEC_LZ4, 5 } },
    { .size_bytes = 4096, .codec = { CODEC_ZSTD, 1 }, .huge_threshold_bytes = 5000 },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    errno = 0;
    ok (store_create (&bad[i]) == NULL && errno == EINVAL,
        "bad configuration %zu is refused with EINVAL", i);
  }
}

/* Settings at their types' limits (issue 27, items 9 and 10).  An
 * idle-writeback of 2^32 - 1 made the age period (idle + 2) / 3 wrap to
 * 0, and the next writeback divided by it (SIGFPE); a pool limit under
 * one page is "no limit" to the allocator but "always full" to the store.
 * Both are refused, and a refused setting changes nothing.
 */
static void
test_setting_limits (void)
{
  const uint64_t pages = 64;
  const char *dir = getenv ("CSWAP_TIER_DIR");
  char backing[256];
  struct store_config config = {
    .size_bytes = pages * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, 0 },
    .backing_path = backing,
    .backing_size_bytes = 4 << 20,
    .idle_writeback_seconds = UINT32_MAX,
  };
  struct store_writeback_result result = { 0 };
  struct store_stats s;
  struct store *store;

  snprintf (backing, sizeof backing, "%s/cswap-test-store-limits.%d",
            dir ? dir : "/var/tmp", (int) getpid ());
  errno = 0;
  store = store_create (&config);
  ok (store == NULL && errno == EINVAL,
      "idle-writeback of 2^32 - 1 seconds is refused with EINVAL");
  if (store) {
    /* Before the fix: SIGFPE here. */
    store_writeback (store, 60, 0, false, &result);
    store_destroy (store);
  }
  unlink (backing);

  config.idle_writeback_seconds = 60;
  store = store_create (&config);
  if (store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  store_set_idle_writeback (store, UINT32_MAX);
  ok (store_get_idle_writeback (store) == 60,
      "setting idle-writeback to 2^32 - 1 changes nothing");
  store_set_idle_writeback (store, STORE_MAX_IDLE_WRITEBACK_S);
  ok (store_get_idle_writeback (store) == STORE_MAX_IDLE_WRITEBACK_S,
      "its largest value, %u seconds, is taken",
      (unsigned) STORE_MAX_IDLE_WRITEBACK_S);
  ok (store_writeback (store, UINT32_MAX, 0, false, &result) == -EINVAL
      && store_writeback (store, STORE_MAX_IDLE_WRITEBACK_S + 1, 0, false,
                          &result) == -EINVAL,
      "writeback idle= past it is refused with EINVAL");
  ok (store_writeback (store, STORE_MAX_IDLE_WRITEBACK_S, 0, false, &result)
      == 0, "writeback idle= at it runs");
  store_destroy (store);
  unlink (backing);

  const uint64_t small_limits[] = { 1, 4095 };
  for (size_t i = 0; i < 2; i++) {
    struct store_config small = {
      .size_bytes = pages * CSWAP_PAGE_SIZE, .codec = { CODEC_LZ4, 0 },
      .pool_limit_bytes = small_limits[i],
    };
    errno = 0;
    store = store_create (&small);
    ok (store == NULL && errno == EINVAL,
        "a pool limit of %llu bytes is refused with EINVAL",
        (unsigned long long) small_limits[i]);
    if (store)
      store_destroy (store);
  }
  store = make_store (pages * CSWAP_PAGE_SIZE, CODEC_LZ4, 1 << 20);
  store_set_pool_limit (store, 4095);
  store_stats (store, &s);
  ok (s.pool_limit_bytes == 1 << 20,
      "setting a pool limit of 4095 bytes changes nothing");
  store_set_pool_limit (store, STORE_MIN_POOL_LIMIT_BYTES);
  store_stats (store, &s);
  ok (s.pool_limit_bytes == STORE_MIN_POOL_LIMIT_BYTES,
      "the smallest, %u bytes, is taken", (unsigned) STORE_MIN_POOL_LIMIT_BYTES);
  store_set_pool_limit (store, 0);
  store_stats (store, &s);
  ok (s.pool_limit_bytes == 0, "and so is 0, no limit");
  store_destroy (store);
}

/* store_extent against a reference: random writes (any offset, length
 * and kind of data, zeros among them) and trims over a device that spans
 * several slot chunks, then runs walked from random offsets.  Each run
 * must agree with every page it covers (zero exactly when the reference
 * page is all zeros), be as long as it can, and end on a page boundary or
 * at the end of the range asked for.
 */
static void
test_extents (void)
{
  const uint64_t pages = 3 * 512 + 17, size = pages * CSWAP_PAGE_SIZE;
  struct store *store = make_store (size, CODEC_LZ4, 0);
  unsigned char *reference = calloc (1, size), *buf = malloc (4 * CSWAP_PAGE_SIZE);
  bool *zero_page = malloc (pages * sizeof *zero_page);
  static const unsigned char zeros[CSWAP_PAGE_SIZE];
  uint64_t rng = 0x51ed27d4b1f6c3a5ull;
  unsigned long bad_runs = 0, runs = 0;

  for (int op = 0; op < 3000 / (int) scale; op++) {
    /* Clustered in the first chunk and a half, so that runs alternate. */
    uint64_t len = 1 + rand64 (&rng) % (4 * CSWAP_PAGE_SIZE);
    uint64_t off = rand64 (&rng) % (768 * CSWAP_PAGE_SIZE);
    if (rand64 (&rng) % 4 == 0) {
      store_zero (store, len, off);
      memset (reference + off, 0, len);
    }
    else {
      fill_random (&rng, buf, len);
      store_write (store, buf, len, off);
      memcpy (reference + off, buf, len);
    }
  }
  for (uint64_t p = 0; p < pages; p++)
    zero_page[p] = memcmp (reference + p * CSWAP_PAGE_SIZE, zeros,
                           CSWAP_PAGE_SIZE) == 0;

  for (int walk = 0; walk < 200; walk++) {
    uint64_t offset = rand64 (&rng) % size;
    uint64_t end = offset + 1 + rand64 (&rng) % (size - offset);
    while (offset < end) {
      bool zero;
      uint64_t length;
      if (store_extent (store, offset, end - offset, &zero, &length) != 0
          || length == 0 || length > end - offset) {
        bad_runs++;
        break;
      }
      uint64_t run_end = offset + length;
      for (uint64_t p = offset / CSWAP_PAGE_SIZE;
           p * CSWAP_PAGE_SIZE < run_end; p++)
        if (zero_page[p] != zero)
          bad_runs++;
      if (run_end != end && (run_end % CSWAP_PAGE_SIZE
                             || zero_page[run_end / CSWAP_PAGE_SIZE] == zero))
        bad_runs++;             /* cut short, or not at a page boundary */
      offset = run_end;
      runs++;
    }
  }
  ok (bad_runs == 0, "store_extent: %lu runs agree with the reference "
      "(%lu wrong)", runs, bad_runs);
  bool zero;
  uint64_t length;
  ok (store_extent (store, size, 1, &zero, &length) == -EINVAL
      && store_extent (store, 0, 0, &zero, &length) == -EINVAL,
      "store_extent: past the end or empty is EINVAL");
  store_destroy (store);
  free (reference);
  free (buf);
  free (zero_page);
}

int
main (void)
{
  const char *path = getenv ("CSWAP_CORPUS");
  const char *scale_env = getenv ("CSWAP_TEST_SCALE");

  if (scale_env && atoi (scale_env) > 0)
    scale = atoi (scale_env);
  if (path == NULL || pagefile_load (path, &corpus) == -1)
    tap_skip_all ("no corpus (set CSWAP_CORPUS)");
  test_bad_input ();
  test_model (1, false, false, false, CODEC_LZ4);
  test_model (1, true, false, false, CODEC_ZSTD);
  test_model (4, true, false, false, CODEC_LZ4);
  test_model (4, true, true, false, CODEC_ZSTD);
  test_model (4, true, true, true, CODEC_LZ4);
  test_deferred ();
  test_recompress ();
  test_auto_compact ();
  test_corpus (CODEC_LZ4);
  test_corpus (CODEC_ZSTD);
  test_pool_limit ();
  test_pool_limit_concurrent ();
  test_writer_not_behind_compaction ();
  test_codec_change ();
  test_setting_limits ();
  test_extents ();
  pagefile_free (&corpus);
  return tap_done ();
}
