/* cswap: bench/blockio — real pages through a block device, every byte
 * read back verified, with per-operation latency.
 *
 * fio writes its own patterns, which compress nothing like real memory; a
 * compressed device must be measured with the pages it will hold.  So:
 *
 *   fill     the region [0, PAGES) of DEVICE is written one 4 KiB page per
 *            pwrite, O_DIRECT, in a random order (a random permutation of
 *            the page offsets); the page at offset p is page
 *            (start + p) mod count of the page file, so its content is
 *            known from its offset alone.
 *   snapshot --snapshot-cmd CMD runs through sh here, with every page
 *            written and none read yet: the moment to read the device's
 *            memory (zram mm_stat, the daemon's VmRSS).
 *   read     every page is read back with pread, O_DIRECT, in another
 *            random order, and compared with what was written (unless
 *            --no-verify: a device that keeps nothing, nbdkit null).
 *
 * With --threads T, T threads share the work (queue depth T); each op is
 * timed alone and all latencies are kept (8 bytes per op), so the
 * percentiles are exact, not bucketed.
 *
 * Output: one JSON line.  MB/s is 10^6 bytes per second of wall time.
 * Exit 0, 1 on any mismatch or I/O error, 2 on a usage or set-up error.
 *
 * Built by bench/run with cc (it is not in bench/meson.build).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "page.h"
#include "pagefile.h"
#include "tool-option.h"

#define EXIT_MISMATCH 1
#define MAX_THREADS 64
#define MAX_MISMATCH_REPORTS 10

struct options {
  const char *device;
  const char *page_path;
  const char *label;
  const char *snapshot_cmd;
  uint64_t pages;
  unsigned threads;
  uint64_t seed;
  bool verify;
};

/* What one phase shares between its threads. */
struct phase {
  const struct options *o;
  const struct pagefile *pf;
  int fd;
  bool write;
  const uint32_t *order;        /* page offsets, in the order of the ops */
  uint64_t *latency_ns;         /* per op */
  uint64_t start_page;          /* of the page file, for offset 0 */
  unsigned threads;
};

struct worker {
  struct phase *phase;
  unsigned index;
  uint64_t mismatches;
  uint64_t io_errors;
};

static uint64_t
splitmix64 (uint64_t *state)
{
  uint64_t z = (*state += UINT64_C (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* A random permutation of 0..n-1 (Fisher–Yates). */
static uint32_t *
random_order (uint64_t n, uint64_t *state)
{
  uint32_t *order = malloc (n * sizeof *order);

  if (order == NULL) {
    fprintf (stderr, "blockio: malloc order: %m\n");
    exit (TOOL_EXIT_SETUP);
  }
  for (uint64_t i = 0; i < n; i++)
    order[i] = i;
  for (uint64_t i = n - 1; i > 0; i--) {
    uint64_t j = splitmix64 (state) % (i + 1);
    uint32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  return order;
}

static const unsigned char *
expected_page (const struct phase *ph, uint64_t offset_pages)
{
  return pagefile_page (ph->pf, (ph->start_page + offset_pages) % ph->pf->pages);
}

static void *
worker_run (void *arg)
{
  struct worker *w = arg;
  struct phase *ph = w->phase;
  uint64_t ops = ph->o->pages;
  void *buf;

  if (posix_memalign (&buf, CSWAP_PAGE_SIZE, CSWAP_PAGE_SIZE) != 0) {
    fprintf (stderr, "blockio: posix_memalign: %m\n");
    w->io_errors++;
    return NULL;
  }
  for (uint64_t k = w->index; k < ops; k += ph->threads) {
    uint64_t p = ph->order[k];
    off_t offset = (off_t) (p << CSWAP_PAGE_SHIFT);
    const unsigned char *want = expected_page (ph, p);
    ssize_t r;
    uint64_t t0;

    if (ph->write) {
      memcpy (buf, want, CSWAP_PAGE_SIZE);
      t0 = monotonic_ns ();
      r = pwrite (ph->fd, buf, CSWAP_PAGE_SIZE, offset);
    }
    else {
      t0 = monotonic_ns ();
      r = pread (ph->fd, buf, CSWAP_PAGE_SIZE, offset);
    }
    ph->latency_ns[k] = monotonic_ns () - t0;
    if (r != (ssize_t) CSWAP_PAGE_SIZE) {
      if (w->io_errors++ < MAX_MISMATCH_REPORTS)
        fprintf (stderr, "blockio: %s page %" PRIu64 ": %s\n",
                 ph->write ? "pwrite" : "pread", p,
                 r < 0 ? strerror (errno) : "short transfer");
      continue;
    }
    if (!ph->write && ph->o->verify
        && memcmp (buf, want, CSWAP_PAGE_SIZE) != 0) {
      if (w->mismatches++ < MAX_MISMATCH_REPORTS)
        fprintf (stderr, "blockio: mismatch at page %" PRIu64 "\n", p);
    }
  }
  free (buf);
  return NULL;
}

struct phase_result {
  double mbps, p50_us, p99_us, p999_us, max_us;
  uint64_t mismatches, io_errors;
};

static int
compare_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of N sorted values. */
static double
percentile_us (const uint64_t *sorted, uint64_t n, double q)
{
  uint64_t rank = (uint64_t) (q * (double) n + 0.999999);
  if (rank < 1)
    rank = 1;
  if (rank > n)
    rank = n;
  return (double) sorted[rank - 1] / 1e3;
}

static struct phase_result
run_phase (struct phase *ph)
{
  struct worker workers[MAX_THREADS];
  pthread_t tids[MAX_THREADS];
  struct phase_result res = { 0 };
  uint64_t n = ph->o->pages, t0, elapsed;

  t0 = monotonic_ns ();
  for (unsigned i = 0; i < ph->threads; i++) {
    workers[i] = (struct worker) { .phase = ph, .index = i };
    int err = pthread_create (&tids[i], NULL, worker_run, &workers[i]);
    if (err != 0) {
      fprintf (stderr, "blockio: pthread_create: %s\n", strerror (err));
      exit (TOOL_EXIT_SETUP);
    }
  }
  for (unsigned i = 0; i < ph->threads; i++) {
    pthread_join (tids[i], NULL);
    res.mismatches += workers[i].mismatches;
    res.io_errors += workers[i].io_errors;
  }
  elapsed = monotonic_ns () - t0;

  qsort (ph->latency_ns, n, sizeof *ph->latency_ns, compare_u64);
  res.mbps = bench_mbps (n * CSWAP_PAGE_SIZE, elapsed);
  res.p50_us = percentile_us (ph->latency_ns, n, 0.50);
  res.p99_us = percentile_us (ph->latency_ns, n, 0.99);
  res.p999_us = percentile_us (ph->latency_ns, n, 0.999);
  res.max_us = (double) ph->latency_ns[n - 1] / 1e3;
  return res;
}

static void
usage (FILE *fp)
{
  fprintf (fp,
           "usage: blockio [OPTION]... DEVICE [PAGE-FILE]\n"
           "Write PAGES real pages (raw or zstd page file, default the corpus)\n"
           "to DEVICE at random page offsets with O_DIRECT, read them back in\n"
           "another random order verifying every byte; one JSON line.\n"
           "\n"
           "  -n, --pages N          pages, the region [0, N) of DEVICE (16384)\n"
           "  -t, --threads T        threads sharing the ops: queue depth (1)\n"
           "      --seed N           order and page-file start (1)\n"
           "      --label NAME       the \"device\" field (default DEVICE)\n"
           "      --no-verify        time reads without checking them\n"
           "      --snapshot-cmd CMD run CMD through sh between fill and read\n"
           "  -h, --help             this text\n");
}

static void
parse_options (int argc, char **argv, struct options *o)
{
  enum { OPT_SEED = 256, OPT_LABEL, OPT_NO_VERIFY, OPT_SNAPSHOT };
  static const struct option long_options[] = {
    { "pages", required_argument, NULL, 'n' },
    { "threads", required_argument, NULL, 't' },
    { "seed", required_argument, NULL, OPT_SEED },
    { "label", required_argument, NULL, OPT_LABEL },
    { "no-verify", no_argument, NULL, OPT_NO_VERIFY },
    { "snapshot-cmd", required_argument, NULL, OPT_SNAPSHOT },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;

  *o = (struct options) { .pages = 16384, .threads = 1, .seed = 1,
                          .verify = true,
                          .page_path = CSWAP_DEFAULT_CORPUS };
  while ((c = getopt_long (argc, argv, "n:t:h", long_options, NULL)) != -1) {
    switch (c) {
    case 'n':
      o->pages = tool_option_uint64 ("--pages", optarg, 1, UINT32_MAX);
      break;
    case 't':
      o->threads = tool_option_uint64 ("--threads", optarg, 1, MAX_THREADS);
      break;
    case OPT_SEED:
      o->seed = tool_option_uint64 ("--seed", optarg, 0, UINT64_MAX);
      break;
    case OPT_LABEL:
      o->label = optarg;
      break;
    case OPT_NO_VERIFY:
      o->verify = false;
      break;
    case OPT_SNAPSHOT:
      o->snapshot_cmd = optarg;
      break;
    case 'h':
      usage (stdout);
      exit (EXIT_SUCCESS);
    default:
      usage (stderr);
      exit (TOOL_EXIT_SETUP);
    }
  }
  if (optind >= argc || argc - optind > 2) {
    usage (stderr);
    exit (TOOL_EXIT_SETUP);
  }
  o->device = argv[optind];
  if (argc - optind == 2)
    o->page_path = argv[optind + 1];
  if (o->label == NULL)
    o->label = o->device;
}

/* The label goes into JSON: keep it to characters that need no escaping. */
static bool
label_is_plain (const char *s)
{
  for (; *s; s++)
    if (*s == '"' || *s == '\\' || (unsigned char) *s < 0x20)
      return false;
  return true;
}

int
main (int argc, char **argv)
{
  struct options o;
  struct pagefile pf;
  struct phase ph;
  struct phase_result wr, rd;
  uint64_t state, device_bytes;
  int fd;

  parse_options (argc, argv, &o);
  if (!label_is_plain (o.label)) {
    fprintf (stderr, "blockio: --label: no quotes, backslashes or control characters\n");
    return TOOL_EXIT_SETUP;
  }
  if (pagefile_load (o.page_path, &pf) == -1)
    return TOOL_EXIT_SETUP;
  if (pf.pages == 0) {
    fprintf (stderr, "blockio: %s: no pages\n", o.page_path);
    return TOOL_EXIT_SETUP;
  }

  fd = open (o.device, O_RDWR | O_DIRECT | O_CLOEXEC);
  if (fd == -1) {
    fprintf (stderr, "blockio: %s: open O_DIRECT: %m\n", o.device);
    return TOOL_EXIT_SETUP;
  }
  device_bytes = lseek (fd, 0, SEEK_END);
  if (device_bytes < o.pages * CSWAP_PAGE_SIZE) {
    fprintf (stderr, "blockio: %s: %" PRIu64 " bytes, too small for %" PRIu64
             " pages\n", o.device, device_bytes, o.pages);
    return TOOL_EXIT_SETUP;
  }

  state = o.seed;
  ph = (struct phase) { .o = &o, .pf = &pf, .fd = fd, .threads = o.threads,
                        .start_page = splitmix64 (&state) % pf.pages };
  ph.latency_ns = malloc (o.pages * sizeof *ph.latency_ns);
  if (ph.latency_ns == NULL) {
    fprintf (stderr, "blockio: malloc latencies: %m\n");
    return TOOL_EXIT_SETUP;
  }

  uint32_t *write_order = random_order (o.pages, &state);
  ph.write = true;
  ph.order = write_order;
  wr = run_phase (&ph);
  free (write_order);

  if (o.snapshot_cmd) {
    int status = system (o.snapshot_cmd);
    if (status != 0)
      fprintf (stderr, "blockio: --snapshot-cmd exited with status %d\n", status);
  }

  uint32_t *read_order = random_order (o.pages, &state);
  ph.write = false;
  ph.order = read_order;
  rd = run_phase (&ph);
  free (read_order);

  printf ("{\"bench\":\"blockio\",\"device\":\"%s\",\"pages\":%" PRIu64
          ",\"threads\":%u,\"seed\":%" PRIu64 ",\"verified\":%s,"
          "\"write_mbps\":%.1f,\"write_p50_us\":%.1f,\"write_p99_us\":%.1f,"
          "\"write_p999_us\":%.1f,\"write_max_us\":%.1f,"
          "\"read_mbps\":%.1f,\"read_p50_us\":%.1f,\"read_p99_us\":%.1f,"
          "\"read_p999_us\":%.1f,\"read_max_us\":%.1f,"
          "\"io_errors\":%" PRIu64 ",\"mismatches\":%" PRIu64 "}\n",
          o.label, o.pages, o.threads, o.seed, o.verify ? "true" : "false",
          wr.mbps, wr.p50_us, wr.p99_us, wr.p999_us, wr.max_us,
          rd.mbps, rd.p50_us, rd.p99_us, rd.p999_us, rd.max_us,
          wr.io_errors + rd.io_errors, rd.mismatches);

  free (ph.latency_ns);
  close (fd);
  pagefile_free (&pf);
  return wr.io_errors + rd.io_errors + rd.mismatches == 0 ? EXIT_SUCCESS : EXIT_MISMATCH;
}
