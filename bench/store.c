/* cswap: bench/store — the page store in-process, no NBD: store every page
 * of a page file (SCALE times over, into distinct slots), load them all in
 * random order and verify, with 1 and 2 threads; next to the raw codec
 * speed measured in the same run on the same pages, and the memory the
 * store used against the codec's own ratio.
 *
 * Field meanings: store_mbps and load_mbps are original bytes per second,
 * the best of REPEAT fresh stores as the raw codec speeds are the best of
 * REPEAT passes; store_cpus is the CPU time of the whole process over the
 * wall time of that store pass: the reserve's refill thread faults pool
 * pages in on another core while the writer compresses (1.0 would be the
 * writer alone);
 * effective_ratio = original bytes / (pool bytes + metadata bytes);
 * codec_ratio = original bytes / the sum of the compressed lengths the
 * store kept (same-filled pages count 0, raw pages 4096), so the quotient
 * of the two is how well the allocator packs.
 *
 * BENCH_STORE_SEGMENT=1 puts each store in a System V segment, as
 * cswap-ublk's store is (store-segment.h: "segment":true in the lines).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "compress.h"
#include "page.h"
#include "store.h"

/* Passes of each measurement; the best counts (this VM is shared). */
#define REPEAT 3
/* The daemons' default (daemon/config/options.c). */
#define BENCH_RESERVE_BYTES (8u << 20)

struct run {
  struct store *store;
  const struct pagefile *pf;
  unsigned scale, threads;
  const uint32_t *order;        /* random permutation of all slots */
  uint64_t slots;
};

struct worker {
  struct run *run;
  unsigned index;
  uint64_t errors;
  uint64_t busy_ns;             /* in store calls only, not in checking */
};

static const unsigned char *
page_for_slot (const struct run *run, uint64_t slot)
{
  return pagefile_page (run->pf, slot % run->pf->pages);
}

static void *
store_worker (void *opaque)
{
  struct worker *w = opaque;
  struct run *run = w->run;

  for (uint64_t slot = w->index; slot < run->slots; slot += run->threads)
    if (store_write (run->store, page_for_slot (run, slot), CSWAP_PAGE_SIZE,
                     slot * CSWAP_PAGE_SIZE))
      w->errors++;
  return NULL;
}

static void *
load_worker (void *opaque)
{
  struct worker *w = opaque;
  struct run *run = w->run;
  unsigned char page[CSWAP_PAGE_SIZE];

  for (uint64_t i = w->index; i < run->slots; i += run->threads) {
    uint64_t slot = run->order[i];
    uint64_t start = monotonic_ns ();
    int r = store_read (run->store, page, CSWAP_PAGE_SIZE,
                        slot * CSWAP_PAGE_SIZE);
    w->busy_ns += monotonic_ns () - start;
    if (r || memcmp (page, page_for_slot (run, slot), CSWAP_PAGE_SIZE))
      w->errors++;
  }
  return NULL;
}

/* Runs FN on RUN->threads threads; returns the wall time in ns, or, when
 * the workers time their store calls themselves (busy_ns), the longest
 * worker's busy time: checking what was read is not loading.
 */
static uint64_t
run_threads (struct run *run, void *(*fn) (void *), uint64_t *errors)
{
  pthread_t tid[2];
  struct worker w[2];
  uint64_t start = monotonic_ns (), busy_ns = 0;

  for (unsigned t = 0; t < run->threads; t++) {
    w[t] = (struct worker) { .run = run, .index = t };
    pthread_create (&tid[t], NULL, fn, &w[t]);
  }
  for (unsigned t = 0; t < run->threads; t++) {
    pthread_join (tid[t], NULL);
    *errors += w[t].errors;
    if (w[t].busy_ns > busy_ns)
      busy_ns = w[t].busy_ns;
  }
  return busy_ns ? busy_ns : monotonic_ns () - start;
}

/* The codec alone over every page once: compress, then decompress. */
static void
raw_codec_speed (const struct codec_config *codec, const struct pagefile *pf,
                 double *compress_mbps, double *decompress_mbps)
{
  unsigned char *packed = malloc (pf->pages * CSWAP_PAGE_SIZE);
  size_t *len = malloc (pf->pages * sizeof *len);
  unsigned char out[CSWAP_PAGE_SIZE];
  uint64_t bytes = (uint64_t) pf->pages * CSWAP_PAGE_SIZE;

  /* Fault the output in first. */
  memset (packed, 0, pf->pages * CSWAP_PAGE_SIZE);
  *compress_mbps = *decompress_mbps = 0;
  for (int pass = 0; pass < REPEAT; pass++) {
    uint64_t start = monotonic_ns ();
    for (size_t i = 0; i < pf->pages; i++)
      len[i] = codec_compress_page (codec, pagefile_page (pf, i),
                                    packed + i * CSWAP_PAGE_SIZE, CSWAP_PAGE_SIZE);
    double mbps = bench_mbps (bytes, monotonic_ns () - start);
    if (mbps > *compress_mbps)
      *compress_mbps = mbps;
    start = monotonic_ns ();
    for (size_t i = 0; i < pf->pages; i++)
      if (len[i])
        codec_decompress_page (codec->id, packed + i * CSWAP_PAGE_SIZE, len[i], out);
    mbps = bench_mbps (bytes, monotonic_ns () - start);
    if (mbps > *decompress_mbps)
      *decompress_mbps = mbps;
  }
  free (packed);
  free (len);
}

static uint32_t *
random_order (uint64_t n)
{
  uint32_t *order = malloc (n * sizeof *order);
  uint64_t rng = 88172645463325252ull;

  for (uint64_t i = 0; i < n; i++)
    order[i] = i;
  for (uint64_t i = n - 1; i > 0; i--) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    uint64_t j = rng % (i + 1);
    uint32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  return order;
}

/* Makes a store, stores every page and loads them all back, REPEAT times;
 * prints the best store and load speeds (as the raw codec's are the best
 * of REPEAT) and the memory of the last repetition.
 */
static int
bench_one (const struct pagefile *pf, const struct codec_config *codec,
           unsigned scale, unsigned threads)
{
  struct run run = { .pf = pf, .scale = scale, .threads = threads,
                     .slots = (uint64_t) pf->pages * scale };
  bool segment = getenv ("BENCH_STORE_SEGMENT")
    && strcmp (getenv ("BENCH_STORE_SEGMENT"), "1") == 0;
  struct store_config config = {
    .size_bytes = run.slots * CSWAP_PAGE_SIZE, .codec = *codec,
    .reserve_bytes = BENCH_RESERVE_BYTES,
    .persistence = segment ? STORE_SEGMENT_NEW : STORE_PRIVATE,
    /* A device number of its own, clear of ublk's (below 2^20). */
    .segment_device = 0x80000000u | (uint32_t) getpid (),
  };
  uint64_t bytes = run.slots * CSWAP_PAGE_SIZE;
  struct store_stats s;
  double raw_c, raw_d, store_mbps = 0, store_cpus = 0, load_mbps = 0;
  uint64_t errors = 0, rss_before, rss_after = 0;

  raw_codec_speed (codec, pf, &raw_c, &raw_d);
  run.order = random_order (run.slots);
  rss_before = bench_rss_bytes ();
  for (int pass = 0; pass < REPEAT; pass++) {
    run.store = store_create (&config);
    if (run.store == NULL) {
      perror ("store_create");
      return -1;
    }
    /* As the daemons run it: with the reserve's refill thread. */
    if (store_start_background (run.store)) {
      perror ("store_start_background");
      return -1;
    }
    bench_warm_pages (pf);
    uint64_t cpu_ns = bench_process_cpu_ns ();
    uint64_t store_ns = run_threads (&run, store_worker, &errors);
    cpu_ns = bench_process_cpu_ns () - cpu_ns;
    if (bench_mbps (bytes, store_ns) > store_mbps) {
      store_mbps = bench_mbps (bytes, store_ns);
      store_cpus = (double) cpu_ns / store_ns;
    }
    bench_warm_pages (pf);
    double mbps = bench_mbps (bytes, run_threads (&run, load_worker, &errors));
    if (mbps > load_mbps)
      load_mbps = mbps;
    store_stats (run.store, &s);
    rss_after = bench_rss_bytes ();
    store_destroy (run.store);
  }

  printf ("{\"bench\":\"store\",\"segment\":%s,\"codec\":\"%s\",\"level\":%d,\"threads\":%u,"
          "\"scale\":%u,\"pages\":%llu,\"store_mbps\":%.1f,\"store_cpus\":%.2f,"
          "\"load_mbps\":%.1f,"
          "\"raw_compress_mbps\":%.1f,\"raw_decompress_mbps\":%.1f,"
          "\"effective_ratio\":%.3f,\"codec_ratio\":%.3f,"
          "\"metadata_bytes_per_page\":%.2f,\"pool_bytes\":%llu,"
          "\"metadata_bytes\":%llu,\"rss_before\":%llu,\"rss_after\":%llu,"
          "\"errors\":%llu}\n",
          segment ? "true" : "false", codec_name (codec->id), codec->level,
          threads, scale,
          (unsigned long long) run.slots, store_mbps, store_cpus, load_mbps,
          raw_c, raw_d,
          (double) s.original_bytes / (s.pool_bytes + s.metadata_bytes),
          (double) s.original_bytes / s.compressed_bytes,
          (double) s.metadata_bytes / s.pages_stored,
          (unsigned long long) s.pool_bytes,
          (unsigned long long) s.metadata_bytes,
          (unsigned long long) rss_before,
          (unsigned long long) rss_after,
          (unsigned long long) errors);
  fflush (stdout);
  free ((void *) run.order);
  return errors ? -1 : 0;
}

int
main (int argc, char **argv)
{
  static const struct codec_config codecs[] = { { CODEC_LZ4, 0 }, { CODEC_ZSTD, 1 } };
  static const unsigned scales[] = { 1, 8 };
  struct pagefile pf;
  int status = 0;

  bench_load_pages (argc, argv, &pf);
  for (size_t c = 0; c < 2; c++)
    for (size_t s = 0; s < 2; s++)
      for (unsigned threads = 1; threads <= 2; threads++)
        if (bench_one (&pf, &codecs[c], scales[s], threads) == -1)
          status = 1;
  pagefile_free (&pf);
  return status;
}
