/* cswap: bench/tier — writeback to the backing file and reading back.
 *
 * Stores every page of a page file (lz4, no pool limit), then writes them
 * all back with store_writeback() and reads a random sample back, timing
 * each read: at the default batch with sealed records (backing-encrypt=
 * yes, the default) and in the clear, alternating, REPEATS times each, the
 * median run of each reported; then once sealed at writeback-batch=1; in
 * the same run on the same pages.  The backing file lives in
 * $CSWAP_BENCH_DIR or /var/tmp (a real disk: /tmp may be tmpfs, which has
 * no O_DIRECT).
 *
 * Fields: writeback_mbps in original bytes (4096 per page) per second,
 * disk_mbps in bytes written to the file; pages_per_submit = pages written
 * back per io_uring_enter; disk_bytes_per_page = file bytes written per
 * page (headers, alignment and batch padding included: the packing);
 * read_p50_us/read_p99_us for one page read back from disk; encrypt says
 * whether records were sealed.  The last two lines compare:
 * extra_submissions (batch 1 minus default) and batch_speedup (default
 * writeback_mbps / batch-1 writeback_mbps), both sealed; and
 * encrypted_share (sealed writeback_mbps / clear writeback_mbps) with
 * read_p50_delta_us (sealed minus clear).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "compress.h"
#include "page.h"
#include "store.h"

#define READ_SAMPLES 2000
#define REPEATS 5

struct result {
  unsigned batch;
  bool encrypt;
  uint64_t pages, submissions;
  double writeback_mbps, disk_mbps, pages_per_submit, disk_bytes_per_page;
  double read_p50_us, read_p99_us;
};

static int
compare_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

static int
compare_mbps (const void *a, const void *b)
{
  double x = ((const struct result *) a)->writeback_mbps;
  double y = ((const struct result *) b)->writeback_mbps;
  return x < y ? -1 : x > y;
}

static int
run (const struct pagefile *pf, uint64_t pages, unsigned batch, bool encrypt,
     const char *path, struct result *res)
{
  struct store_config config = {
    .size_bytes = pages * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, 0 },
    .backing_path = path,
    .backing_size_bytes = (pages * CSWAP_PAGE_SIZE + (64u << 20)) & ~((1u << 20) - 1),
    .writeback_batch_pages = batch,
    .backing_in_clear = !encrypt,
  };
  struct store *store = store_create (&config);
  struct store_writeback_result wb;
  struct store_stats before, after;
  static uint64_t latency_ns[READ_SAMPLES];
  unsigned char page[CSWAP_PAGE_SIZE];
  uint64_t rng = 88172645463325252ull;

  if (store == NULL) {
    fprintf (stderr, "bench/tier: %s\n", store_create_error ());
    return -1;
  }
  for (uint64_t p = 0; p < pages; p++)
    store_write (store, pagefile_page (pf, p % pf->pages), CSWAP_PAGE_SIZE,
                 p * CSWAP_PAGE_SIZE);
  store_stats (store, &before);
  uint64_t t0 = monotonic_ns ();
  store_writeback (store, 0, 0, true, &wb);
  uint64_t ns = monotonic_ns () - t0;
  store_stats (store, &after);

  uint64_t written = after.written_back_pages - before.written_back_pages;
  uint64_t disk_bytes = after.written_back_bytes - before.written_back_bytes;
  *res = (struct result) {
    .batch = batch, .encrypt = encrypt, .pages = written,
    .submissions = after.uring_submissions - before.uring_submissions,
    .writeback_mbps = bench_mbps (written * CSWAP_PAGE_SIZE, ns),
    .disk_mbps = bench_mbps (disk_bytes, ns),
  };
  res->pages_per_submit = res->submissions ? (double) written / res->submissions : 0;
  res->disk_bytes_per_page = written ? (double) disk_bytes / written : 0;

  unsigned samples = 0;
  for (unsigned n = 0; n < READ_SAMPLES * 4 && samples < READ_SAMPLES; n++) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    uint64_t p = rng % pages;
    uint64_t t = monotonic_ns ();
    uint64_t reads = after.written_back_reads;
    store_read (store, page, CSWAP_PAGE_SIZE, p * CSWAP_PAGE_SIZE);
    t = monotonic_ns () - t;
    store_stats (store, &after);
    if (after.written_back_reads > reads)       /* it came from disk */
      latency_ns[samples++] = t;
  }
  qsort (latency_ns, samples, sizeof *latency_ns, compare_u64);
  if (samples) {
    res->read_p50_us = latency_ns[samples / 2] / 1e3;
    res->read_p99_us = latency_ns[samples * 99 / 100] / 1e3;
  }
  store_destroy (store);
  unlink (path);
  return 0;
}

static void
print (const struct result *r)
{
  printf ("{\"bench\":\"tier\",\"codec\":\"lz4\",\"batch\":%u,"
          "\"encrypt\":%s,\"pages\":%llu,"
          "\"submissions\":%llu,\"writeback_mbps\":%.1f,\"disk_mbps\":%.1f,"
          "\"pages_per_submit\":%.1f,\"disk_bytes_per_page\":%.0f,"
          "\"read_p50_us\":%.1f,\"read_p99_us\":%.1f}\n",
          r->batch, r->encrypt ? "true" : "false",
          (unsigned long long) r->pages,
          (unsigned long long) r->submissions, r->writeback_mbps, r->disk_mbps,
          r->pages_per_submit, r->disk_bytes_per_page, r->read_p50_us,
          r->read_p99_us);
}

int
main (int argc, char **argv)
{
  struct pagefile pf;
  struct result sealed[REPEATS], clear[REPEATS], single;
  const char *dir = getenv ("CSWAP_BENCH_DIR");
  char path[256];

  bench_load_pages (argc, argv, &pf);
  uint64_t pages = pf.pages < 32768 ? pf.pages : 32768;   /* up to 128 MiB */
  snprintf (path, sizeof path, "%s/cswap-bench-tier.%d", dir ? dir : "/var/tmp",
            (int) getpid ());
  for (unsigned i = 0; i < REPEATS; i++)
    if (run (&pf, pages, 64, true, path, &sealed[i])
        || run (&pf, pages, 64, false, path, &clear[i]))
      return EXIT_FAILURE;
  if (run (&pf, pages, 1, true, path, &single))
    return EXIT_FAILURE;
  qsort (sealed, REPEATS, sizeof *sealed, compare_mbps);
  qsort (clear, REPEATS, sizeof *clear, compare_mbps);
  const struct result *batched = &sealed[REPEATS / 2], *plain = &clear[REPEATS / 2];
  print (batched);
  print (plain);
  print (&single);
  printf ("{\"bench\":\"tier\",\"compare\":\"batch64_vs_batch1\","
          "\"extra_submissions\":%lld,\"submission_ratio\":%.1f,"
          "\"batch_speedup\":%.1f}\n",
          (long long) (single.submissions - batched->submissions),
          batched->submissions
            ? (double) single.submissions / batched->submissions : 0,
          single.writeback_mbps ? batched->writeback_mbps / single.writeback_mbps : 0);
  printf ("{\"bench\":\"tier\",\"compare\":\"encrypted_vs_clear\","
          "\"encrypted_share\":%.2f,\"read_p50_delta_us\":%.1f}\n",
          plain->writeback_mbps ? batched->writeback_mbps / plain->writeback_mbps : 0,
          batched->read_p50_us - plain->read_p50_us);
  pagefile_free (&pf);
  return 0;
}
