/* cswap: a store with a backing file outlives its process, and so do its
 * pages on the file (issue 63, item 3; tier.h, tier_keep_state).
 *
 *  - Killed at random while it writes, zeroes, writes back (a sweep
 *    without a pause, and the writer at its pool limit) and cleans a
 *    small file: the next process adopts the store, and every page whose
 *    request was answered reads back as written, none lost, many of them
 *    from the file.  The generations alternate backing-encrypt: a store
 *    keeps the form it was made with.
 *  - No nonce is used twice under the key: the sealed records of two
 *    processes, one adopting the other's store, have counts that differ.
 *  - A file put in the backing file's place (a copy: the same bytes,
 *    another inode) is not the file the records were written to: its
 *    pages are lost (the lost map: the front end answers EIO), never
 *    read from it; the pages in memory are adopted.
 *  - A record changed on disk reads as an error, never as other bytes.
 *  - A configuration with another backing-size, or with none, is
 *    refused and the store kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "page.h"
#include "pagefile.h"
#include "store.h"
#include "store-segment.h"
#include "tap.h"

#define DEVICE_PAGES 4096       /* 16 MiB */
#define BACKING_BYTES (6u << 20) /* 6 segments: the cleaner has work */
#define WRITER_THREADS 2
#define MAX_PAGES_PER_WRITE 4
#define MAGIC_SEALED 0xc5abu    /* tier/record.c */

static struct pagefile corpus;
static uint32_t device;
static unsigned generations = 12;
static char backing_path[256], backing_moved[300];
/* A page's last answered contents: 0 zeros, else the seed they are made
 * from; UNKNOWN after a write refused (ENOSPC), which may have stored
 * some of its pages, as the kernel knows (it never reads such a slot).
 */
static uint64_t reference[DEVICE_PAGES];
#define UNKNOWN UINT64_MAX

enum step { STEP_BEGIN, STEP_DONE, STEP_REFUSED };
enum op { OP_WRITE, OP_ZERO };
struct report {
  uint8_t step, op, thread, pages;
  uint32_t first;
  uint64_t seed;
};

static uint64_t
next (uint64_t *state)
{
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 2685821657736338717ull;
}

/* Corpus pages mostly; some noise that does not compress (written back
 * only with "huge"), some same-filled (never written back).
 */
static void
page_contents (uint64_t seed, unsigned char *page)
{
  uint64_t state = seed * 0x9e3779b97f4a7c15ull | 1;
  unsigned kind = next (&state) % 8;

  if (kind == 0) {
    uint64_t value = next (&state);
    for (size_t i = 0; i < CSWAP_PAGE_SIZE; i += 8)
      memcpy (page + i, &value, 8);
  }
  else if (kind == 1)
    for (size_t i = 0; i < CSWAP_PAGE_SIZE; i += 8) {
      uint64_t v = next (&state);
      memcpy (page + i, &v, 8);
    }
  else
    memcpy (page, pagefile_page (&corpus, next (&state) % corpus.pages),
            CSWAP_PAGE_SIZE);
}

static struct store_config
config_for (enum store_persistence persistence, bool in_clear)
{
  return (struct store_config) {
    .size_bytes = (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, codec_default_level (CODEC_LZ4) },
    .persistence = persistence,
    .segment_device = device,
    .backing_path = backing_path,
    .backing_size_bytes = BACKING_BYTES,
    .backing_in_clear = in_clear,
    /* Writeback runs on its own too, at this limit. */
    .pool_limit_bytes = 3 << 20,
  };
}

static struct store *
open_store (enum store_persistence persistence, bool in_clear)
{
  struct store_config config = config_for (persistence, in_clear);

  return store_create (&config);
}

/* ------------------------------------------------------- the child -- */

struct writer {
  struct store *store;
  int report_fd;
  unsigned thread;
  uint64_t rng;
};

static void
tell (int fd, const struct report *r)
{
  if (write (fd, r, sizeof *r) != sizeof *r)
    _exit (3);
}

static void *
writer_thread (void *arg)
{
  struct writer *w = arg;
  static const unsigned blocks = DEVICE_PAGES / MAX_PAGES_PER_WRITE;
  unsigned char buf[MAX_PAGES_PER_WRITE * CSWAP_PAGE_SIZE];

  for (;;) {
    unsigned block = next (&w->rng) % (blocks / WRITER_THREADS)
      * WRITER_THREADS + w->thread;
    struct report r = {
      .step = STEP_BEGIN, .op = next (&w->rng) % 8 ? OP_WRITE : OP_ZERO,
      .thread = w->thread, .pages = 1 + next (&w->rng) % MAX_PAGES_PER_WRITE,
      .first = block * MAX_PAGES_PER_WRITE, .seed = next (&w->rng) | 1,
    };
    int e;

    tell (w->report_fd, &r);
    if (r.op == OP_WRITE) {
      for (unsigned i = 0; i < r.pages; i++)
        page_contents (r.seed + i, buf + (size_t) i * CSWAP_PAGE_SIZE);
      e = store_write (w->store, buf, (uint64_t) r.pages * CSWAP_PAGE_SIZE,
                       (uint64_t) r.first * CSWAP_PAGE_SIZE);
    }
    else
      e = store_zero (w->store, (uint64_t) r.pages * CSWAP_PAGE_SIZE,
                      (uint64_t) r.first * CSWAP_PAGE_SIZE);
    /* A full pool and file refuse a write (ENOSPC): not answered, and
     * the page keeps what it held; told as not done.
     */
    if (e && e != -ENOSPC)
      _exit (4);
    r.step = e ? STEP_REFUSED : STEP_DONE;
    tell (w->report_fd, &r);
  }
  return NULL;
}

/* A sweep without a pause: pages go to the file while they are written,
 * read and zeroed.
 */
static void *
sweep_thread (void *arg)
{
  struct store *store = arg;
  struct store_writeback_result result;

  for (;;)
    store_writeback (store, 0, 64, true, &result);
  return NULL;
}

static void __attribute__ ((noreturn))
child (int report_fd, enum store_persistence persistence, bool in_clear,
       uint64_t seed)
{
  struct store *store = open_store (persistence, in_clear);
  struct writer writers[WRITER_THREADS];
  pthread_t thread;

  if (store == NULL || store_start_background (store))
    _exit (2);
  for (unsigned t = 0; t < WRITER_THREADS; t++) {
    writers[t] = (struct writer) { .store = store, .report_fd = report_fd,
                                   .thread = t, .rng = seed + t };
    pthread_create (&thread, NULL, writer_thread, &writers[t]);
  }
  pthread_create (&thread, NULL, sweep_thread, store);
  for (;;)
    pause ();
}

/* ------------------------------------------------------ the parent -- */

static struct report pending[WRITER_THREADS];
static bool has_pending[WRITER_THREADS];

static void
take_report (const struct report *r)
{
  if (r->step == STEP_BEGIN) {
    pending[r->thread] = *r;
    has_pending[r->thread] = true;
    return;
  }
  has_pending[r->thread] = false;
  for (unsigned i = 0; i < r->pages; i++)
    reference[r->first + i] = r->step == STEP_REFUSED ? UNKNOWN
      : r->op == OP_WRITE ? r->seed + i : 0;
}

static uint64_t
now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
run_generation (enum store_persistence persistence, bool in_clear,
                uint64_t seed, unsigned run_ms)
{
  int fds[2];
  pid_t pid;
  struct report r;
  int status;

  if (pipe (fds))
    tap_bail_out ("pipe: %m");
  pid = fork ();
  if (pid == 0) {
    close (fds[0]);
    child (fds[1], persistence, in_clear, seed);
  }
  close (fds[1]);
  for (uint64_t end = now_ms () + run_ms; now_ms () < end;) {
    struct pollfd pfd = { .fd = fds[0], .events = POLLIN };

    if (poll (&pfd, 1, 10) == 1 && read (fds[0], &r, sizeof r) == sizeof r)
      take_report (&r);
  }
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  while (read (fds[0], &r, sizeof r) == sizeof r)
    take_report (&r);
  close (fds[0]);
  if (!WIFSIGNALED (status))
    tap_bail_out ("the generation ended by itself (status %#x): could not "
                  "make its store", status);
}

/* What the dead generation began and did not answer, sent again (ublk's
 * REISSUE), until the store takes it.
 */
static void
reissue (struct store *store)
{
  unsigned char buf[MAX_PAGES_PER_WRITE * CSWAP_PAGE_SIZE];

  for (unsigned t = 0; t < WRITER_THREADS; t++) {
    struct report *r = &pending[t];
    int e;

    if (!has_pending[t])
      continue;
    if (r->op == OP_WRITE) {
      for (unsigned i = 0; i < r->pages; i++)
        page_contents (r->seed + i, buf + (size_t) i * CSWAP_PAGE_SIZE);
      e = store_write (store, buf, (uint64_t) r->pages * CSWAP_PAGE_SIZE,
                       (uint64_t) r->first * CSWAP_PAGE_SIZE);
    }
    else
      e = store_zero (store, (uint64_t) r->pages * CSWAP_PAGE_SIZE,
                      (uint64_t) r->first * CSWAP_PAGE_SIZE);
    r->step = e ? STEP_REFUSED : STEP_DONE;
    take_report (r);
  }
}

static uint64_t
wrong_pages (struct store *store)
{
  unsigned char got[CSWAP_PAGE_SIZE], want[CSWAP_PAGE_SIZE];
  uint64_t wrong = 0;

  for (unsigned p = 0; p < DEVICE_PAGES; p++) {
    if (reference[p] == UNKNOWN)
      continue;
    if (reference[p])
      page_contents (reference[p], want);
    else
      memset (want, 0, sizeof want);
    int e = store_read (store, got, CSWAP_PAGE_SIZE,
                        (uint64_t) p * CSWAP_PAGE_SIZE);
    if (e != 0 || memcmp (got, want, CSWAP_PAGE_SIZE) != 0) {
      if (wrong < 5)
        diag ("page %u: %s (seed %#llx)", p, e ? strerror (-e)
              : "other bytes", (unsigned long long) reference[p]);
      wrong++;
    }
  }
  return wrong;
}

static void
adopt_and_check (unsigned generation, bool in_clear, bool keep)
{
  struct store *store = open_store (STORE_SEGMENT_ADOPT, in_clear);
  const struct store_adoption *adoption;
  struct store_stats stats;

  if (!ok (store != NULL, "generation %u: the store opens again (%s)",
           generation, store ? "" : store_create_error ()))
    tap_bail_out ("cannot go on");
  adoption = store_adoption (store);
  store_stats (store, &stats);
  ok (adoption && adoption->adopted && adoption->lost == 0
      && adoption->backing_adopted
      && adoption->backing_pages == stats.tiered_pages,
      "generation %u: adopted, %llu pages, %llu of them on the file, "
      "none lost (%s)", generation,
      adoption ? (unsigned long long) adoption->pages : 0,
      adoption ? (unsigned long long) adoption->backing_pages : 0,
      adoption && adoption->backing_why ? adoption->backing_why : "");
  reissue (store);
  uint64_t wrong = wrong_pages (store);
  ok (wrong == 0, "generation %u: every page reads as last answered "
      "(%llu wrong)", generation, (unsigned long long) wrong);
  if (keep)
    store_keep_on_destroy (store);
  store_destroy (store);
}

/* --------------------------------------------- the file's own checks -- */

/* The counts of the sealed records in the file, per run id: how many
 * records share a run id and count with another (0: no nonce used twice).
 */
static unsigned
nonces_used_twice (unsigned *records)
{
  int fd = open (backing_path, O_RDONLY);
  static unsigned char file[BACKING_BYTES];
  static uint64_t seen[1 << 16];
  unsigned seen_count = 0, twice = 0;

  *records = 0;
  if (fd == -1 || pread (fd, file, sizeof file, 0) != (ssize_t) sizeof file)
    tap_bail_out ("reading the backing file: %m");
  close (fd);
  for (size_t at = 0; at + 20 <= sizeof file; at += 16) {
    uint16_t magic, length;
    uint32_t run_id;
    uint64_t count, key;

    memcpy (&magic, file + at, 2);
    memcpy (&length, file + at + 2, 2);
    if (magic != MAGIC_SEALED || length == 0 || length > CSWAP_PAGE_SIZE)
      continue;
    memcpy (&run_id, file + at + 8, 4);
    memcpy (&count, file + at + 12, 8);
    key = (uint64_t) run_id << 40 ^ count;
    for (unsigned i = 0; i < seen_count; i++)
      twice += seen[i] == key;
    if (seen_count < sizeof seen / sizeof *seen)
      seen[seen_count++] = key;
    (*records)++;
  }
  return twice;
}

/* Writes PAGES fresh pages from FIRST and puts each on the file. */
static void
write_back_pages (struct store *store, unsigned first, unsigned pages,
                  uint64_t seed)
{
  unsigned char page[CSWAP_PAGE_SIZE];
  struct store_writeback_result result;

  for (unsigned p = first; p < first + pages; p++) {
    memcpy (page, pagefile_page (&corpus, (seed + p) % corpus.pages),
            CSWAP_PAGE_SIZE);
    page[0] ^= (unsigned char) (p + 1);   /* never same-filled */
    store_write (store, page, CSWAP_PAGE_SIZE, (uint64_t) p * CSWAP_PAGE_SIZE);
  }
  store_writeback (store, 0, pages, true, &result);
}

static void
test_nonces (void)
{
  struct store *store = open_store (STORE_SEGMENT_NEW, false);
  unsigned records, twice;

  write_back_pages (store, 0, 200, 1);
  store_keep_on_destroy (store);
  store_destroy (store);
  store = open_store (STORE_SEGMENT_ADOPT, false);
  write_back_pages (store, 200, 200, 2);
  twice = nonces_used_twice (&records);
  ok (store && records >= 400 && twice == 0,
      "sealed records of a store and of its adopter: %u, no nonce used "
      "twice (%u)", records, twice);
  store_destroy (store);
}

static struct store_stats
stats_of (struct store *store)
{
  struct store_stats stats = { 0 };

  if (store)
    store_stats (store, &stats);
  return stats;
}

static unsigned
lost_in_map (struct store *store)
{
  uint64_t pages = 0;
  _Atomic uint64_t *map = store ? store_lost_map (store, &pages) : NULL;
  unsigned set = 0;

  for (uint64_t p = 0; map && p < pages; p++)
    set += map[p / 64] >> p % 64 & 1;
  return set;
}

/* FROM's bytes in a new file TO (mode 0600): 0, or -1 with errno. */
static int
copy_file (const char *from, const char *to)
{
  static unsigned char bytes[BACKING_BYTES];
  int in = open (from, O_RDONLY), out = open (to, O_WRONLY | O_CREAT | O_EXCL,
                                              0600);
  bool copied = in != -1 && out != -1
    && read (in, bytes, sizeof bytes) == (ssize_t) sizeof bytes
    && write (out, bytes, sizeof bytes) == (ssize_t) sizeof bytes;

  if (in != -1)
    close (in);
  if (out != -1)
    close (out);
  return copied ? 0 : -1;
}

/* A copy put in the file's place; a record changed on disk. */
static void
test_foreign_and_torn (void)
{
  unsigned char page[CSWAP_PAGE_SIZE];
  struct store *store = open_store (STORE_SEGMENT_NEW, true);
  uint64_t tiered, stored;
  const struct store_adoption *adoption;

  write_back_pages (store, 0, 100, 3);
  memcpy (page, pagefile_page (&corpus, 7), CSWAP_PAGE_SIZE);
  store_write (store, page, CSWAP_PAGE_SIZE, 150 * CSWAP_PAGE_SIZE);
  tiered = stats_of (store).tiered_pages;
  stored = stats_of (store).pages_stored;
  store_keep_on_destroy (store);
  store_destroy (store);

  if (rename (backing_path, backing_moved) == -1
      || copy_file (backing_moved, backing_path) == -1)
    tap_bail_out ("putting a copy in the backing file's place: %m");
  store = open_store (STORE_SEGMENT_ADOPT, true);
  adoption = store ? store_adoption (store) : NULL;
  ok (adoption && adoption->adopted && !adoption->backing_adopted
      && adoption->backing_why
      && strstr (adoption->backing_why, "another file")
      && adoption->lost == tiered && lost_in_map (store) == tiered
      && tiered >= 90,
      "a copy in the file's place: the %llu pages on the file are lost "
      "(%llu, in the lost map: %u), not read from it (%s)",
      (unsigned long long) tiered,
      adoption ? (unsigned long long) adoption->lost : 0, lost_in_map (store),
      adoption && adoption->backing_why ? adoption->backing_why : "");
  unsigned char got[CSWAP_PAGE_SIZE];
  ok (store && adoption->pages == stored - tiered
      && store_read (store, got, CSWAP_PAGE_SIZE, 150 * CSWAP_PAGE_SIZE) == 0
      && memcmp (got, page, CSWAP_PAGE_SIZE) == 0,
      "the page in memory is adopted and reads back");
  unlink (backing_moved);

  /* Torn: one record's bytes changed.  Writeback of page 0 alone puts it
   * at the start of a fresh segment's first block.
   */
  store_destroy (store);
  unlink (backing_path);
  store = open_store (STORE_SEGMENT_NEW, true);
  write_back_pages (store, 0, 1, 5);
  store_keep_on_destroy (store);
  store_destroy (store);
  int fd = open (backing_path, O_RDWR);
  unsigned char block[16];
  bool changed = fd != -1 && pread (fd, block, sizeof block, 0) == 16;
  block[15] ^= 0x40;
  changed = changed && pwrite (fd, block, sizeof block, 0) == 16;
  if (fd != -1)
    close (fd);
  store = open_store (STORE_SEGMENT_ADOPT, true);
  adoption = store ? store_adoption (store) : NULL;
  int e = store ? store_read (store, got, CSWAP_PAGE_SIZE, 0) : 0;
  ok (changed && adoption && adoption->backing_adopted
      && adoption->backing_pages == 1 && e == -EIO,
      "a record changed on disk reads as EIO (%s), not as other bytes",
      strerror (-e));
  store_destroy (store);
}

/* Another backing-size, or none: refused, named, the store kept. */
static void
test_other_backing (void)
{
  struct store *store = open_store (STORE_SEGMENT_NEW, false);
  struct store_config config = config_for (STORE_SEGMENT_ADOPT, false);
  const char *error;

  write_back_pages (store, 0, 10, 9);
  store_keep_on_destroy (store);
  store_destroy (store);

  config.backing_size_bytes = 2 * BACKING_BYTES;
  store = store_create (&config);
  error = store ? "" : store_create_error ();
  ok (store == NULL && strstr (error, "backing file of another size")
      && strstr (error, "it is kept"),
      "another backing-size is refused (%s)", error);
  store_destroy (store);
  config.backing_path = NULL;
  config.pool_limit_bytes = 0;
  store = store_create (&config);
  error = store ? "" : store_create_error ();
  ok (store == NULL && strstr (error, "this configuration has none"),
      "no backing file is refused (%s)", error);
  store_destroy (store);
  store = open_store (STORE_SEGMENT_ADOPT, false);
  ok (store && store_adoption (store)->backing_pages == 10,
      "and the store is kept: adopted with its backing file, 10 pages "
      "on it (%s)", store ? "" : store_create_error ());
  store_destroy (store);
}

static void
remove_leftovers (void)
{
  store_segment_remove_device (device);
  unlink (backing_path);
  unlink (backing_moved);
}

int
main (void)
{
  const char *path = getenv ("CSWAP_CORPUS");
  const char *scale = getenv ("CSWAP_TEST_SCALE");
  const char *dir = getenv ("CSWAP_TIER_DIR");
  uint64_t seed = (uint64_t) time (NULL) ^ (uint64_t) getpid () << 32;
  struct store *probe;

  if (path == NULL || pagefile_load (path, &corpus) == -1)
    tap_skip_all ("no corpus (set CSWAP_CORPUS)");
  if (scale && atof (scale) < 1)
    generations = 3;
  device = 0x80000000u | (uint32_t) getpid ();
  snprintf (backing_path, sizeof backing_path,
            "%s/cswap-test-persist-backing.%d", dir ? dir : "/var/tmp",
            (int) getpid ());
  snprintf (backing_moved, sizeof backing_moved, "%s.moved", backing_path);
  atexit (remove_leftovers);
  probe = open_store (STORE_SEGMENT_NEW, false);
  if (probe == NULL && (errno == EPERM || errno == ENOMEM || errno == ENOSYS))
    tap_skip_all ("no locked System V segment here (needs CAP_IPC_LOCK)");
  if (probe == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  store_destroy (probe);
  unlink (backing_path);
  diag ("seed %#llx", (unsigned long long) seed);

  test_nonces ();
  unlink (backing_path);
  test_foreign_and_torn ();
  unlink (backing_path);
  test_other_backing ();
  unlink (backing_path);

  for (unsigned g = 0; g < generations; g++) {
    uint64_t gseed = seed + 1001 * g;
    unsigned run_ms = 150 + gseed % 500;
    /* The form is the first generation's: later ones say otherwise. */
    bool in_clear = (g % 2) == 1;

    run_generation (g ? STORE_SEGMENT_ADOPT : STORE_SEGMENT_NEW, in_clear,
                    gseed, run_ms);
    adopt_and_check (g, !in_clear, g + 1 < generations);
  }
  ok (store_segment_remove_device (device) == 0,
      "the last store, stopped cleanly, removed its segment");
  pagefile_free (&corpus);
  return tap_done ();
}
