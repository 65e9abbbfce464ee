/* cswap: swap-workload — a memory workload that proves swapped pages come
 * back intact, and measures how fast it can touch them.
 *
 * Run it in a memory cgroup whose limit is below --size, so that the
 * kernel must swap its pages out to the device under test and read them
 * back.  Every page holds known content that can be recomputed at any
 * time, so each touch verifies the whole page without a second copy of the
 * memory (a copy would itself be swapped, and would double the footprint):
 *
 *   dictionary   D real pages sampled from a page file (the corpus), kept
 *                hot; D is small (16 MiB by default) so it stays resident.
 *   page i       = D[hash(seed, i, gen[i]) % D], with its first 16 bytes
 *                overwritten by the stamp { i, gen[i] } (two uint64_t).
 *   gen[i]       a uint32_t per page (0.1% of the area): rewriting a page
 *                bumps it, so a stale page (a lost write) is caught, and a
 *                page returned at the wrong offset is caught by the stamp.
 *
 * A dictionary page that is same-filled (one 8-byte value repeated, zero
 * pages above all) is stored unstamped: a stamp would turn it into an
 * ordinary page, and the device would no longer see the corpus's share of
 * same-filled pages, which it stores for free.  The price: a same-filled
 * page confused with another same-filled page of the same value goes
 * unnoticed, which is harmless since their contents are equal.
 *
 * Phases: load the dictionary; join --cgroup if given (after loading: the
 * page file is decompressed whole, which must not count against the limit);
 * fill every page; touch random pages for --seconds or --touches, 80% of
 * touches on 20% of the pages by default (hot pages are scattered over the
 * area, not contiguous, so swap readahead does not find them for free),
 * rewriting --write-percent of touched pages; run --snapshot-cmd if given,
 * while the pages are still swapped out; verify every page once more.
 *
 * Output: one JSON line on stdout.  Exit 0 when every verification passed,
 * 1 on any mismatch, 2 on a usage or set-up error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "monotonic.h"
#include "page.h"
#include "pagefile.h"
#include "tool-option.h"

#define EXIT_MISMATCH 1

/* Mismatch details printed to stderr; the rest are only counted, since a
 * broken device can fail millions of verifications.
 */
#define MAX_MISMATCH_REPORTS 10

/* How many touches between two looks at the clock: often enough that
 * --seconds overshoots by microseconds, rare enough to cost nothing.
 */
#define TOUCHES_PER_CLOCK_CHECK 64

struct stamp {
  uint64_t page_index;
  uint64_t generation;
};
_Static_assert (sizeof (struct stamp) == 16, "the stamp is the first 16 bytes");

struct options {
  const char *page_path;
  uint64_t size_mib;
  double seconds;               /* 0: no time limit */
  uint64_t touches;             /* 0: no touch limit */
  unsigned hot_percent;         /* share of pages that are hot */
  unsigned hot_touch_percent;   /* share of touches that hit hot pages */
  unsigned write_percent;       /* share of touches that rewrite the page */
  uint64_t seed;
  uint64_t dict_pages;
  const char *cgroup;
  const char *snapshot_cmd;
};

struct dictionary {
  unsigned char *pages;         /* count pages back to back */
  bool *same_filled;            /* per page */
  size_t count;
};

struct workload {
  unsigned char *area;          /* the anonymous memory that gets swapped */
  size_t pages;
  uint32_t *generation;         /* per page */
  const struct dictionary *dict;
  uint64_t seed;
  /* Hot pages are v in [0, hot_pages) mapped through v -> v * stride mod
   * pages, a permutation because gcd (stride, pages) == 1.
   */
  size_t hot_pages;
  size_t stride;
  uint64_t mismatches;          /* failed verifications */
};

static void
usage (FILE *fp)
{
  fprintf (fp,
           "usage: swap-workload [OPTION]... [PAGE-FILE]\n"
           "Fill anonymous memory with real pages, touch it at random and\n"
           "verify every byte read back.  PAGE-FILE (raw or zstd) defaults\n"
           "to $CSWAP_CORPUS.\n"
           "\n"
           "  -m, --size MIB             memory to allocate (default 256)\n"
           "  -s, --seconds S            touch phase length (default 10 when\n"
           "                             --touches is not given)\n"
           "  -n, --touches N            touch phase length in touches\n"
           "                             (with both, the first reached)\n"
           "      --hot-percent P        share of pages that are hot (20)\n"
           "      --hot-touch-percent P  share of touches on hot pages (80)\n"
           "  -w, --write-percent P      share of touches that rewrite (20)\n"
           "      --seed N               PRNG seed (1)\n"
           "      --dict-pages N         dictionary size in pages (4096)\n"
           "      --cgroup DIR           join this cgroup (v1 or v2) after\n"
           "                             loading the dictionary\n"
           "      --snapshot-cmd CMD     run CMD through sh after the touch\n"
           "                             phase, while pages are swapped out\n"
           "  -h, --help                 this text\n"
           "\n"
           "Prints one JSON line.  Exit 0: no mismatch; 1: mismatches;\n"
           "2: usage or set-up error.\n");
}

static double
parse_seconds (const char *option, const char *arg)
{
  char *end;
  double v;

  errno = 0;
  v = strtod (arg, &end);
  if (end == arg || *end != '\0' || errno != 0 || !(v > 0 && v < 1e7)) {
    fprintf (stderr, "swap-workload: %s: '%s' is not a positive number of seconds\n",
             option, arg);
    exit (TOOL_EXIT_SETUP);
  }
  return v;
}

static void
parse_options (int argc, char **argv, struct options *o)
{
  enum { OPT_HOT = 256, OPT_HOT_TOUCH, OPT_SEED, OPT_DICT, OPT_CGROUP, OPT_SNAPSHOT };
  static const struct option long_options[] = {
    { "size", required_argument, NULL, 'm' },
    { "seconds", required_argument, NULL, 's' },
    { "touches", required_argument, NULL, 'n' },
    { "hot-percent", required_argument, NULL, OPT_HOT },
    { "hot-touch-percent", required_argument, NULL, OPT_HOT_TOUCH },
    { "write-percent", required_argument, NULL, 'w' },
    { "seed", required_argument, NULL, OPT_SEED },
    { "dict-pages", required_argument, NULL, OPT_DICT },
    { "cgroup", required_argument, NULL, OPT_CGROUP },
    { "snapshot-cmd", required_argument, NULL, OPT_SNAPSHOT },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;

  *o = (struct options) {
    .size_mib = 256, .hot_percent = 20, .hot_touch_percent = 80,
    .write_percent = 20, .seed = 1, .dict_pages = 4096,
  };
  while ((c = getopt_long (argc, argv, "m:s:n:w:h", long_options, NULL)) != -1) {
    switch (c) {
    case 'm':
      /* 1 TiB: far beyond any test, small enough that MiB -> bytes and
       * the per-page arrays cannot overflow.
       */
      o->size_mib = tool_option_uint64 ("--size", optarg, 1, UINT64_C (1) << 20);
      break;
    case 's':
      o->seconds = parse_seconds ("--seconds", optarg);
      break;
    case 'n':
      o->touches = tool_option_uint64 ("--touches", optarg, 1, UINT64_MAX);
      break;
    case OPT_HOT:
      o->hot_percent = tool_option_uint64 ("--hot-percent", optarg, 0, 100);
      break;
    case OPT_HOT_TOUCH:
      o->hot_touch_percent = tool_option_uint64 ("--hot-touch-percent", optarg, 0, 100);
      break;
    case 'w':
      o->write_percent = tool_option_uint64 ("--write-percent", optarg, 0, 100);
      break;
    case OPT_SEED:
      o->seed = tool_option_uint64 ("--seed", optarg, 0, UINT64_MAX);
      break;
    case OPT_DICT:
      o->dict_pages = tool_option_uint64 ("--dict-pages", optarg, 1, UINT64_C (1) << 24);
      break;
    case OPT_CGROUP:
      o->cgroup = optarg;
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
  if (argc - optind > 1) {
    fprintf (stderr, "swap-workload: at most one page file, got %d arguments\n",
             argc - optind);
    usage (stderr);
    exit (TOOL_EXIT_SETUP);
  }
  if (optind < argc)
    o->page_path = argv[optind];
  else if ((o->page_path = getenv ("CSWAP_CORPUS")) == NULL || o->page_path[0] == '\0') {
#ifdef CSWAP_DEFAULT_CORPUS
    o->page_path = CSWAP_DEFAULT_CORPUS;
#else
    fprintf (stderr, "swap-workload: no page file given and $CSWAP_CORPUS is not set\n");
    exit (TOOL_EXIT_SETUP);
#endif
  }
  if (o->seconds == 0 && o->touches == 0)
    o->seconds = 10;
}

/* splitmix64: the PRNG (a 64-bit counter through a bijective mixer) and,
 * applied to a key, the hash that picks each page's dictionary page.
 */
static uint64_t
mix64 (uint64_t x)
{
  x = (x ^ (x >> 30)) * UINT64_C (0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C (0x94d049bb133111eb);
  return x ^ (x >> 31);
}

static uint64_t
rng_next (uint64_t *state)
{
  *state += UINT64_C (0x9e3779b97f4a7c15);
  return mix64 (*state);
}

static double
now_seconds (void)
{
  return monotonic_ns () * 1e-9;
}

static bool
page_is_same_filled (const unsigned char *page)
{
  uint64_t first, word;

  memcpy (&first, page, sizeof first);
  for (size_t off = sizeof word; off < CSWAP_PAGE_SIZE; off += sizeof word) {
    memcpy (&word, page + off, sizeof word);
    if (word != first)
      return false;
  }
  return true;
}

static void
dictionary_free (struct dictionary *dict)
{
  free (dict->pages);
  free (dict->same_filled);
}

/* Keeps want pages of the page file, taken at an even stride over all of
 * it rather than from its start, so the dictionary has the whole corpus's
 * mix of compressibility.
 */
static int
dictionary_load (const char *path, size_t want, struct dictionary *dict)
{
  struct pagefile pf;

  if (pagefile_load (path, &pf) == -1)
    return -1;
  dict->count = want < pf.pages ? want : pf.pages;
  dict->pages = malloc (dict->count * CSWAP_PAGE_SIZE);
  dict->same_filled = malloc (dict->count * sizeof *dict->same_filled);
  if (dict->pages == NULL || dict->same_filled == NULL) {
    fprintf (stderr, "swap-workload: malloc dictionary: %m\n");
    dictionary_free (dict);
    pagefile_free (&pf);
    return -1;
  }
  for (size_t d = 0; d < dict->count; d++) {
    unsigned char *page = dict->pages + d * CSWAP_PAGE_SIZE;

    memcpy (page, pagefile_page (&pf, d * pf.pages / dict->count), CSWAP_PAGE_SIZE);
    dict->same_filled[d] = page_is_same_filled (page);
  }
  pagefile_free (&pf);
  return 0;
}

/* Moves this process into a cgroup.  Memory is charged to the cgroup that
 * faults it in, so what was allocated before (the dictionary) stays
 * charged where it was: the limit applies to the workload area only.
 */
static int
join_cgroup (const char *dir)
{
  char path[4096];
  FILE *fp;
  int r;

  if ((size_t) snprintf (path, sizeof path, "%s/cgroup.procs", dir) >= sizeof path) {
    fprintf (stderr, "swap-workload: --cgroup: path too long\n");
    return -1;
  }
  fp = fopen (path, "w");
  if (fp == NULL) {
    fprintf (stderr, "swap-workload: %s: fopen: %m\n", path);
    return -1;
  }
  fprintf (fp, "%ld\n", (long) getpid ());
  r = fclose (fp);              /* the write happens here, and fails here */
  if (r == EOF) {
    fprintf (stderr, "swap-workload: %s: write: %m\n", path);
    return -1;
  }
  return 0;
}

/* VmSwap of this process in KiB, or 0 if it cannot be read: it shows that
 * the workload's own pages were swapped, whatever else the machine does.
 */
static uint64_t
vm_swap_kib (void)
{
  FILE *fp = fopen ("/proc/self/status", "r");
  char line[256];
  uint64_t kib = 0;

  if (fp == NULL)
    return 0;
  while (fgets (line, sizeof line, fp) != NULL)
    if (sscanf (line, "VmSwap: %" SCNu64, &kib) == 1)
      break;
  fclose (fp);
  return kib;
}

static size_t
gcd (size_t a, size_t b)
{
  while (b != 0) {
    size_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* A stride near pages / golden ratio spreads consecutive hot indexes
 * far apart; bumped until it is coprime with pages.
 */
static size_t
scatter_stride (size_t pages)
{
  size_t stride = (size_t) (pages * 0.6180339887) | 1;

  while (gcd (stride, pages) != 1)
    stride++;
  return stride;
}

static unsigned char *
page_address (const struct workload *w, size_t i)
{
  return w->area + i * CSWAP_PAGE_SIZE;
}

/* Writes into out what page i holds at its current generation. */
static void
expected_page (const struct workload *w, size_t i, unsigned char *out)
{
  uint32_t gen = w->generation[i];
  size_t d = mix64 (w->seed ^ mix64 (i) ^ ((uint64_t) gen << 40)) % w->dict->count;
  struct stamp stamp = { .page_index = i, .generation = gen };

  memcpy (out, w->dict->pages + d * CSWAP_PAGE_SIZE, CSWAP_PAGE_SIZE);
  if (!w->dict->same_filled[d])
    memcpy (out, &stamp, sizeof stamp);
}

/* Says what was found instead, so a failure report tells a lost write
 * (right page, older generation) from a misdirected one (other page).
 */
static void
report_mismatch (const struct workload *w, size_t i, const unsigned char *expected,
                 const char *when)
{
  const unsigned char *found = page_address (w, i);
  size_t first = CSWAP_PAGE_SIZE, differing = 0;
  struct stamp stamp;

  for (size_t off = 0; off < CSWAP_PAGE_SIZE; off++)
    if (found[off] != expected[off]) {
      if (first == CSWAP_PAGE_SIZE)
        first = off;
      differing++;
    }
  memcpy (&stamp, found, sizeof stamp);
  fprintf (stderr, "swap-workload: mismatch (%s): page %zu generation %" PRIu32
           ": %zu bytes differ, first at offset %zu (expected 0x%02x, found 0x%02x);"
           " found stamp: page %" PRIu64 " generation %" PRIu64 "%s\n",
           when, i, w->generation[i], differing, first,
           expected[first], found[first], stamp.page_index, stamp.generation,
           page_is_same_filled (found) ? " (found page is same-filled)" : "");
}

static bool
verify_page (struct workload *w, size_t i, const char *when)
{
  unsigned char expected[CSWAP_PAGE_SIZE];

  expected_page (w, i, expected);
  if (memcmp (page_address (w, i), expected, CSWAP_PAGE_SIZE) == 0)
    return true;
  if (w->mismatches < MAX_MISMATCH_REPORTS)
    report_mismatch (w, i, expected, when);
  w->mismatches++;
  return false;
}

static void
rewrite_page (struct workload *w, size_t i)
{
  w->generation[i]++;
  expected_page (w, i, page_address (w, i));
}

/* Draws the page of the next touch from the hot/cold distribution. */
static size_t
pick_page (const struct workload *w, const struct options *o, uint64_t *rng)
{
  size_t cold_pages = w->pages - w->hot_pages;
  size_t v;

  if (cold_pages == 0 || (w->hot_pages > 0 && rng_next (rng) % 100 < o->hot_touch_percent))
    v = rng_next (rng) % w->hot_pages;
  else
    v = w->hot_pages + rng_next (rng) % cold_pages;
  return (size_t) (((unsigned __int128) v * w->stride) % w->pages);
}

static int
workload_init (struct workload *w, const struct options *o, const struct dictionary *dict)
{
  size_t bytes = o->size_mib << 20;

  *w = (struct workload) {
    .pages = bytes / CSWAP_PAGE_SIZE, .dict = dict, .seed = o->seed,
  };
  w->hot_pages = w->pages * o->hot_percent / 100;
  if (w->hot_pages == 0 && o->hot_percent > 0)
    w->hot_pages = 1;
  w->stride = scatter_stride (w->pages);
  /* calloc would leave the array's pages untouched, to be faulted (and
   * charged to the cgroup) later; filling it now keeps it out.
   */
  w->generation = malloc (w->pages * sizeof *w->generation);
  if (w->generation == NULL) {
    fprintf (stderr, "swap-workload: malloc generations: %m\n");
    return -1;
  }
  memset (w->generation, 0, w->pages * sizeof *w->generation);
  w->area = mmap (NULL, bytes, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (w->area == MAP_FAILED) {
    fprintf (stderr, "swap-workload: mmap %" PRIu64 " MiB: %m\n", o->size_mib);
    free (w->generation);
    return -1;
  }
  /* Transparent huge pages would make the kernel swap (or split) 2 MiB
   * units; the device is meant to see the 4 KiB pages of real workloads.
   */
  if (madvise (w->area, bytes, MADV_NOHUGEPAGE) == -1)
    fprintf (stderr, "swap-workload: madvise MADV_NOHUGEPAGE: %m (continuing)\n");
  return 0;
}

static void
workload_free (struct workload *w)
{
  munmap (w->area, w->pages * CSWAP_PAGE_SIZE);
  free (w->generation);
}

int
main (int argc, char **argv)
{
  struct options o;
  struct dictionary dict;
  struct workload w;
  uint64_t rng, touches = 0, writes = 0, swap_kib_max;
  double t_start, t_touch, t_end, t_verified, next_swap_sample;

  parse_options (argc, argv, &o);
  if (dictionary_load (o.page_path, o.dict_pages, &dict) == -1)
    return TOOL_EXIT_SETUP;
  if (workload_init (&w, &o, &dict) == -1)
    return TOOL_EXIT_SETUP;
  if (o.cgroup != NULL && join_cgroup (o.cgroup) == -1)
    return TOOL_EXIT_SETUP;
  rng = o.seed;

  t_start = now_seconds ();
  for (size_t i = 0; i < w.pages; i++)
    expected_page (&w, i, page_address (&w, i));
  t_touch = now_seconds ();
  swap_kib_max = vm_swap_kib ();

  next_swap_sample = t_touch + 1;
  for (;;) {
    if (o.touches != 0 && touches >= o.touches)
      break;
    if (touches % TOUCHES_PER_CLOCK_CHECK == 0) {
      double t = now_seconds ();

      if (o.seconds != 0 && t - t_touch >= o.seconds)
        break;
      if (t >= next_swap_sample) {
        uint64_t kib = vm_swap_kib ();

        if (kib > swap_kib_max)
          swap_kib_max = kib;
        next_swap_sample = t + 1;
      }
    }
    size_t i = pick_page (&w, &o, &rng);
    /* A page that failed is rewritten, if at all, only by chance, like any
     * other: each later touch of it counts again.
     */
    verify_page (&w, i, "touch");
    if (rng_next (&rng) % 100 < o.write_percent) {
      rewrite_page (&w, i);
      writes++;
    }
    touches++;
  }
  t_end = now_seconds ();
  {
    uint64_t kib = vm_swap_kib ();

    if (kib > swap_kib_max)
      swap_kib_max = kib;
  }

  if (o.snapshot_cmd != NULL) {
    fflush (NULL);
    int status = system (o.snapshot_cmd);
    if (status != 0)
      fprintf (stderr, "swap-workload: --snapshot-cmd exited with status %d\n", status);
  }

  for (size_t i = 0; i < w.pages; i++)
    verify_page (&w, i, "final pass");
  t_verified = now_seconds ();

  printf ("{\"bench\":\"swap-workload\",\"size_mib\":%" PRIu64 ",\"pages\":%zu,"
          "\"dict_pages\":%zu,\"seed\":%" PRIu64 ",\"hot_percent\":%u,"
          "\"hot_touch_percent\":%u,\"write_percent\":%u,"
          "\"fill_seconds\":%.3f,\"touches\":%" PRIu64 ",\"writes\":%" PRIu64 ","
          "\"seconds\":%.3f,\"touches_per_sec\":%.1f,\"verify_seconds\":%.3f,"
          "\"vm_swap_kib_max\":%" PRIu64 ",\"mismatches\":%" PRIu64 "}\n",
          o.size_mib, w.pages, dict.count, o.seed, o.hot_percent,
          o.hot_touch_percent, o.write_percent,
          t_touch - t_start, touches, writes,
          t_end - t_touch, t_end > t_touch ? touches / (t_end - t_touch) : 0.0,
          t_verified - t_end, swap_kib_max, w.mismatches);

  workload_free (&w);
  dictionary_free (&dict);
  return w.mismatches == 0 ? EXIT_SUCCESS : EXIT_MISMATCH;
}
