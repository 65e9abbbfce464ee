/* cswap: a store that outlives its process (store-segment.h) — killed at
 * random points of its work, adopted by a new process, nothing lost.
 *
 * Each generation is a child process that makes or adopts the store,
 * starts its threads (the compressor of deferred pages, automatic
 * compaction, the recompressor) and writes, rewrites and zeroes pages
 * from two threads, with a third compacting without a pause; before and
 * after each request a thread tells the parent (a pipe), as the kernel
 * knows which of its requests were answered.  The parent kills it with
 * SIGKILL after a random time and adopts the store itself: every page
 * whose request was answered must read back as written; a request begun
 * and not answered is sent again, as the kernel's ublk driver does
 * (REISSUE), and must then read as that one.  The counters and the
 * allocator's invariants must agree with the pages, the segment's
 * untouched memory must stay untouched, and the store must be the next
 * generation's to adopt.  The last generation stops cleanly: the segment
 * is gone.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "page.h"
#include "rounding.h"
#include "pagefile.h"
#include "slot-table.h"
#include "store.h"
#include "store-segment.h"
#include "tap.h"
#include "zsmalloc.h"

#define DEVICE_PAGES 4096       /* 16 MiB: 8 slot chunks */
#define WRITER_THREADS 2
#define MAX_PAGES_PER_WRITE 4

static struct pagefile corpus;
/* The test's device number, clear of ublk's (below 2^20). */
static uint32_t device;
static unsigned generations = 16;

/* What a page holds: 0 never written or zeroed; else the seed its
 * contents are made from (page_contents).
 */
static uint64_t reference[DEVICE_PAGES];

/* A request as the child tells it. */
enum step { STEP_BEGIN, STEP_DONE };
enum op { OP_WRITE, OP_ZERO };
struct report {
  uint8_t step, op, thread, pages;
  uint32_t first;
  uint64_t seed;                /* OP_WRITE: the first page's; +1 a page */
};

/* xorshift64*, a state per thread: a run repeats from its seed. */
static uint64_t
next (uint64_t *state)
{
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 2685821657736338717ull;
}

/* The page SEED makes: corpus pages mostly, some same-filled (zeros
 * too), some noise that does not compress.
 */
static void
page_contents (uint64_t seed, unsigned char *page)
{
  uint64_t state = seed * 0x9e3779b97f4a7c15ull | 1;
  unsigned kind = next (&state) % 8;

  if (kind == 0) {
    uint64_t value = next (&state) % 2 ? 0 : next (&state);
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

static struct store *
open_store (enum store_persistence persistence)
{
  struct store_config config = {
    .size_bytes = (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE,
    .codec = { CODEC_ZSTD, codec_default_level (CODEC_ZSTD) },
    .recompress = { .enabled = true,
                    .cold = { CODEC_ZSTD, codec_default_level (CODEC_ZSTD) },
                    .after_s = 1 },
    .persistence = persistence,
    .segment_device = device,
  };

  return store_create (&config);
}

struct finding {
  int shmid, count;
};

static void
find_device (int shmid, uint32_t dev_id, uint32_t layout, void *arg)
{
  struct finding *f = arg;

  (void) layout;
  if (dev_id == device) {
    f->shmid = shmid;
    f->count++;
  }
}

/* The test device's segment, or -1; *COUNT how many it has. */
static int
device_segment (int *count)
{
  struct finding f = { .shmid = -1 };

  store_segment_each_own (find_device, &f);
  if (count)
    *count = f.count;
  return f.shmid;
}

/* ------------------------------------------------------- the child -- */

/* In a generation, now and then the kill comes at the worst moment the
 * store has: right after it freed an object (--wrap=zs_free), with its
 * slot lock held, in a write, the compressor, compaction or a zeroing.
 * A store that freed what a slot held before the slot named something
 * else would leave that slot naming given-back memory (no reserve here:
 * an empty zspage's pages go back to the kernel at once).
 */
static bool in_generation;
static _Atomic uint64_t free_count;
static uint64_t kill_after_frees;

extern void __real_zs_free (struct zs_pool *pool, zs_handle handle);
extern void __wrap_zs_free (struct zs_pool *pool, zs_handle handle);

void
__wrap_zs_free (struct zs_pool *pool, zs_handle handle)
{
  __real_zs_free (pool, handle);
  if (in_generation && kill_after_frees
      && atomic_fetch_add (&free_count, 1) + 1 == kill_after_frees)
    raise (SIGKILL);
}

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

/* Thread T writes the pages whose number is T modulo WRITER_THREADS'
 * blocks of MAX_PAGES_PER_WRITE: no two threads write one page, so each
 * page's last answered request is known.
 */
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
    if (e)
      _exit (4);
    r.step = STEP_DONE;
    tell (w->report_fd, &r);
  }
  return NULL;
}

static void *
compact_thread (void *arg)
{
  struct store *store = arg;
  struct zs_compact_result result;

  for (;;)
    store_compact (store, &result);
  return NULL;
}

static void __attribute__ ((noreturn))
child (int report_fd, enum store_persistence persistence, uint64_t seed)
{
  struct store *store = open_store (persistence);

  in_generation = true;
  /* Half the generations die at a free, the others when the parent
   * says.
   */
  kill_after_frees = seed % 2 ? 200 + seed % 3000 : 0;
  struct writer writers[WRITER_THREADS];
  pthread_t thread;

  if (store == NULL || store_start_background (store))
    _exit (2);
  for (unsigned t = 0; t < WRITER_THREADS; t++) {
    writers[t] = (struct writer) { .store = store, .report_fd = report_fd,
                                   .thread = t, .rng = seed + t };
    pthread_create (&thread, NULL, writer_thread, &writers[t]);
  }
  pthread_create (&thread, NULL, compact_thread, store);
  for (;;)
    pause ();
}

/* ------------------------------------------------------ the parent -- */

/* The requests each thread began and did not finish. */
static struct report pending[WRITER_THREADS];
static bool has_pending[WRITER_THREADS];
static uint64_t answered;

static void
take_report (const struct report *r)
{
  if (r->step == STEP_BEGIN) {
    pending[r->thread] = *r;
    has_pending[r->thread] = true;
    return;
  }
  has_pending[r->thread] = false;
  answered++;
  for (unsigned i = 0; i < r->pages; i++)
    reference[r->first + i] = r->op == OP_WRITE ? r->seed + i : 0;
}

static uint64_t
now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Runs a generation for about RUN_MS, kills it, reads what it told. */
static void
run_generation (enum store_persistence persistence, uint64_t seed,
                unsigned run_ms)
{
  int fds[2];
  pid_t pid;
  struct report r;
  int status;
  uint64_t before = answered;

  if (pipe (fds))
    tap_bail_out ("pipe: %m");
  pid = fork ();
  if (pid == 0) {
    close (fds[0]);
    child (fds[1], persistence, seed);
  }
  close (fds[1]);
  /* Read as it goes: a full pipe would stop the writers, and the kill
   * would find them waiting instead of working.
   */
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
  ok (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL,
      "generation killed while it worked (status %#x, %s), %llu requests "
      "answered", status, seed % 2 ? "at a free" : "at a time",
      (unsigned long long) (answered - before));
}

/* Sends again what the dead generation began and did not answer. */
static void
reissue (struct store *store)
{
  unsigned char buf[MAX_PAGES_PER_WRITE * CSWAP_PAGE_SIZE];

  for (unsigned t = 0; t < WRITER_THREADS; t++) {
    struct report *r = &pending[t];

    if (!has_pending[t])
      continue;
    if (r->op == OP_WRITE) {
      for (unsigned i = 0; i < r->pages; i++)
        page_contents (r->seed + i, buf + (size_t) i * CSWAP_PAGE_SIZE);
      store_write (store, buf, (uint64_t) r->pages * CSWAP_PAGE_SIZE,
                   (uint64_t) r->first * CSWAP_PAGE_SIZE);
    }
    else
      store_zero (store, (uint64_t) r->pages * CSWAP_PAGE_SIZE,
                  (uint64_t) r->first * CSWAP_PAGE_SIZE);
    r->step = STEP_DONE;
    take_report (r);
  }
}

/* Every page reads as the reference says: the count of those that do not. */
static uint64_t
wrong_pages (struct store *store, uint64_t *written)
{
  unsigned char got[CSWAP_PAGE_SIZE], want[CSWAP_PAGE_SIZE];
  uint64_t wrong = 0;

  *written = 0;
  for (unsigned p = 0; p < DEVICE_PAGES; p++) {
    if (reference[p]) {
      page_contents (reference[p], want);
      (*written)++;
    }
    else
      memset (want, 0, sizeof want);
    if (store_read (store, got, CSWAP_PAGE_SIZE,
                    (uint64_t) p * CSWAP_PAGE_SIZE) != 0
        || memcmp (got, want, CSWAP_PAGE_SIZE) != 0) {
      if (wrong < 5)
        diag ("page %u: not as written (seed %#llx)", p,
              (unsigned long long) reference[p]);
      wrong++;
    }
  }
  return wrong;
}

/* Adopts the dead generation's store, checks it, and leaves it for the
 * next (KEEP) or removes it.
 */
static void
adopt_and_check (unsigned generation, bool keep)
{
  struct store *store = open_store (STORE_SEGMENT_ADOPT);
  const struct store_adoption *adoption;
  struct store_stats stats;
  uint64_t written, wrong;

  if (!ok (store != NULL, "generation %u: the store opens again (%s)",
           generation, store ? "" : store_create_error ()))
    tap_bail_out ("cannot go on");
  adoption = store_adoption (store);
  ok (adoption && adoption->adopted && adoption->lost == 0,
      "generation %u: the killed store is adopted (%llu pages), none lost",
      generation, adoption ? (unsigned long long) adoption->pages : 0);
  reissue (store);
  wrong = wrong_pages (store, &written);
  ok (wrong == 0, "generation %u: every page reads as last answered "
      "(%llu written, %llu wrong)", generation, (unsigned long long) written,
      (unsigned long long) wrong);
  store_stats (store, &stats);
  ok (stats.pages_stored == written, "generation %u: pages_stored %llu is "
      "the pages written", generation,
      (unsigned long long) stats.pages_stored);
  /* zs_pool_check holds every class lock at once, more than
   * ThreadSanitizer's deadlock detector can track (as in test-store).
   */
  const char *sanitize = getenv ("CSWAP_SANITIZE");
  if (sanitize == NULL || strstr (sanitize, "thread") == NULL)
    ok (zs_pool_check (store_pool (store)) == 0,
        "generation %u: the allocator's invariants hold", generation);
  if (keep)
    store_keep_on_destroy (store);
  store_destroy (store);
}

/* A kill between the two stores that change a slot (its word, then its
 * flags) in the recompressor's turn: the page's word says zstd, its flags
 * still lz4.  Made by hand in the segment (a second mapping of it), since
 * a kill lands there too seldom to wait for: the page must read back.
 */
static void
test_torn_slot (void)
{
  static const unsigned slot = 5;
  unsigned char page[CSWAP_PAGE_SIZE], got[CSWAP_PAGE_SIZE];
  struct store *store = open_store (STORE_SEGMENT_NEW);
  struct codec_config lz4 = { CODEC_LZ4, codec_default_level (CODEC_LZ4) };
  struct slot_chunk *chunk;
  uint64_t recompressed = 0, word_lz4;
  uint8_t flags_lz4;
  unsigned char *base;
  int shmid;

  page_contents (2, page);      /* a corpus page: it compresses */
  store_set_codec (store, &lz4);
  store_write (store, page, CSWAP_PAGE_SIZE, (uint64_t) slot * CSWAP_PAGE_SIZE);
  shmid = device_segment (NULL);
  base = shmat (shmid, NULL, 0);
  if (base == (void *) -1)
    tap_bail_out ("shmat: %m");
  /* The header's page, then the lost map's (a bit per page). */
  chunk = (struct slot_chunk *) (base + CSWAP_PAGE_SIZE
                                 + round_up (DEVICE_PAGES / 8, CSWAP_PAGE_SIZE));
  flags_lz4 = chunk->flags[slot];
  word_lz4 = chunk->word[slot];
  /* Two passes: the first ages the page, the second recompresses it. */
  store_recompress_now (store, &recompressed);
  store_recompress_now (store, &recompressed);
  ok (recompressed == 1 && chunk->word[slot] != word_lz4
      && chunk->flags[slot] != flags_lz4,
      "the recompressor changed the page's word and flags");
  chunk->flags[slot] = flags_lz4;
  shmdt (base);
  store_keep_on_destroy (store);
  store_destroy (store);

  store = open_store (STORE_SEGMENT_ADOPT);
  ok (store && store_read (store, got, CSWAP_PAGE_SIZE,
                           (uint64_t) slot * CSWAP_PAGE_SIZE) == 0
      && memcmp (got, page, CSWAP_PAGE_SIZE) == 0,
      "a slot torn between its word and its flags reads back as written");
  store_destroy (store);
}

/* The note (store_persistent_note: the ladder's hand-over) is zero in a
 * new store, holds what the last daemon wrote in an adopted one, and a
 * store that does not persist has none.
 */
static void
test_note (void)
{
  struct store *store = open_store (STORE_SEGMENT_NEW);
  unsigned char *note;
  size_t bytes = 0, zeros = 0, as_written = 0;

  note = store ? store_persistent_note (store, &bytes) : NULL;
  for (size_t i = 0; note && i < bytes; i++) {
    zeros += note[i] == 0;
    note[i] = (unsigned char) (i * 7 + 1);
  }
  ok (note && bytes >= 1024 && zeros == bytes,
      "a new store's note is %zu bytes of zeros", bytes);
  store_keep_on_destroy (store);
  store_destroy (store);
  store = open_store (STORE_SEGMENT_ADOPT);
  note = store ? store_persistent_note (store, &bytes) : NULL;
  for (size_t i = 0; note && i < bytes; i++)
    as_written += note[i] == (unsigned char) (i * 7 + 1);
  ok (note && as_written == bytes,
      "an adopted store's note is as the last daemon wrote it");
  store_destroy (store);
  store = open_store (STORE_PRIVATE);
  ok (store && store_persistent_note (store, &bytes) == NULL,
      "a store that does not persist has no note");
  store_destroy (store);
}

/* A segment made for another configuration (issue 62, item 4): one of
 * another device size is refused, named, and kept (its pages are not
 * removed), unless discarded; one of another reserve or
 * max-zspage-pages (the default reserve follows the RAM) is adopted
 * with the store's own geometry, its pages read back.
 */
static void
test_other_configuration (void)
{
  unsigned char page[CSWAP_PAGE_SIZE], got[CSWAP_PAGE_SIZE];
  struct store_config config = {
    .size_bytes = 2 * (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, codec_default_level (CODEC_LZ4) },
    .persistence = STORE_SEGMENT_ADOPT, .segment_device = device,
  };
  struct store *store = open_store (STORE_SEGMENT_NEW);
  const struct store_adoption *adoption;
  const char *error;

  page_contents (2, page);
  store_write (store, page, CSWAP_PAGE_SIZE, 0);
  store_keep_on_destroy (store);
  store_destroy (store);
  store = store_create (&config);
  error = store ? "" : store_create_error ();
  ok (store == NULL && strstr (error, "size = 16777216"),
      "a segment of another device size is refused, naming the size it "
      "was made with (%s)", error);
  store_destroy (store);
  ok (device_segment (NULL) != -1, "and it is kept");

  config.size_bytes = (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE;
  config.reserve_bytes = 3 << 20;
  config.max_pages_per_zspage = 2;
  store = store_create (&config);
  adoption = store ? store_adoption (store) : NULL;
  ok (adoption && adoption->adopted && adoption->pages == 1
      && strstr (adoption->kept_geometry, "reserve")
      && strstr (adoption->kept_geometry, "max-zspage-pages"),
      "one of another reserve and max-zspage-pages is adopted with its own "
      "(%s)", adoption ? adoption->kept_geometry : store_create_error ());
  ok (store && store_read (store, got, CSWAP_PAGE_SIZE, 0) == 0
      && memcmp (got, page, CSWAP_PAGE_SIZE) == 0,
      "and its page reads back as written");
  store_keep_on_destroy (store);
  store_destroy (store);

  config.size_bytes = 2 * (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE;
  config.discard_segment = true;
  store = store_create (&config);
  adoption = store ? store_adoption (store) : NULL;
  ok (adoption && !adoption->adopted && adoption->why,
      "discard_segment: a segment of another size is removed (%s)",
      adoption && adoption->why ? adoption->why : store_create_error ());
  store_destroy (store);
  ok (device_segment (NULL) == -1, "and no segment is left once it stops");
}

/* Lost stays lost (issue 62, item 2): a store taken over with nothing to
 * adopt has every page lost in its segment's lost map; killed again, the
 * next adopter finds them still lost, but for the pages written since.
 */
static void
test_lost_stays_lost (void)
{
  unsigned char page[CSWAP_PAGE_SIZE];
  struct store *store = open_store (STORE_SEGMENT_ADOPT);
  const struct store_adoption *adoption;
  _Atomic uint64_t *map;
  uint64_t pages = 0, set = 0;

  adoption = store ? store_adoption (store) : NULL;
  map = store ? store_lost_map (store, &pages) : NULL;
  for (uint64_t p = 0; map && p < pages; p++)
    set += map[p / 64] >> p % 64 & 1;
  ok (adoption && !adoption->adopted && map && pages == DEVICE_PAGES
      && set == DEVICE_PAGES,
      "taken over with no segment: every page is lost in the new segment "
      "(%llu of %llu)", (unsigned long long) set, (unsigned long long) pages);
  /* The front end clears a page's bit once written (lost-pages.h). */
  page_contents (2, page);
  store_write (store, page, CSWAP_PAGE_SIZE, 7 * CSWAP_PAGE_SIZE);
  if (map)
    map[0] &= ~(UINT64_C (1) << 7);
  store_keep_on_destroy (store);
  store_destroy (store);

  for (int round = 1; round <= 2; round++) {
    store = open_store (STORE_SEGMENT_ADOPT);
    adoption = store ? store_adoption (store) : NULL;
    map = store ? store_lost_map (store, &pages) : NULL;
    set = 0;
    for (uint64_t p = 0; map && p < pages; p++)
      set += map[p / 64] >> p % 64 & 1;
    ok (adoption && adoption->adopted && map && set == DEVICE_PAGES - 1
        && !(map[0] >> 7 & 1) && (map[0] >> 5 & 1),
        "take-over %d adopts it: the pages lost before are still lost "
        "(%llu), the one written since is not", round + 1,
        (unsigned long long) set);
    store_keep_on_destroy (store);
    store_destroy (store);
  }
  store = open_store (STORE_SEGMENT_NEW);
  map = store ? store_lost_map (store, &pages) : NULL;
  set = 0;
  for (uint64_t p = 0; map && p < pages; p++)
    set += map[p / 64] >> p % 64 & 1;
  ok (map && set == 0, "a store made new for a new device has none lost");
  store_destroy (store);
  ok (device_segment (NULL) == -1, "and no segment is left once it stops");
}

/* A test that bails out leaves no locked segment behind. */
static void
remove_segment (void)
{
  store_segment_remove_device (device);
}

/* Segments an earlier run left when a sanitizer aborted it before its
 * atexit handlers ran: the test's devices (0x8…), attached by no process.
 * Each stays locked until removed.
 */
static void
note_stale (int shmid, uint32_t dev_id, uint32_t layout, void *arg)
{
  (void) shmid;
  (void) layout;
  (void) arg;
  if (dev_id != UINT32_MAX && (dev_id & 0x80000000u))
    store_segment_remove_device (dev_id);
}

static void
remove_stale_segments (void)
{
  store_segment_each_own (note_stale, NULL);
}

int
main (void)
{
  const char *path = getenv ("CSWAP_CORPUS");
  const char *scale = getenv ("CSWAP_TEST_SCALE");
  uint64_t seed = (uint64_t) time (NULL) ^ (uint64_t) getpid () << 32;
  struct store *probe;

  if (path == NULL || pagefile_load (path, &corpus) == -1)
    tap_skip_all ("no corpus (set CSWAP_CORPUS)");
  if (scale && atof (scale) < 1)
    generations = 3;
  device = 0x80000000u | (uint32_t) getpid ();
  remove_stale_segments ();
  atexit (remove_segment);
  probe = open_store (STORE_SEGMENT_NEW);
  if (probe == NULL && (errno == EPERM || errno == ENOMEM || errno == ENOSYS))
    tap_skip_all ("no locked System V segment here (needs CAP_IPC_LOCK)");
  if (probe == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  store_destroy (probe);
  ok (device_segment (NULL) == -1, "a store stopped cleanly removes its segment");
  diag ("seed %#llx", (unsigned long long) seed);
  test_torn_slot ();
  test_note ();
  test_other_configuration ();
  test_lost_stays_lost ();

  for (unsigned g = 0; g < generations; g++) {
    uint64_t gseed = seed + 1001 * g;   /* odd steps: at a free, every other */
    unsigned run_ms = 100 + gseed % 400;

    /* One that answered nothing (killed as it started, slow under a
     * sanitizer) still leaves a store to adopt.
     */
    run_generation (g ? STORE_SEGMENT_ADOPT : STORE_SEGMENT_NEW, gseed,
                    run_ms);
    adopt_and_check (g, g + 1 < generations);
  }
  ok (device_segment (NULL) == -1,
      "the last store, stopped cleanly, removed its segment");
  pagefile_free (&corpus);
  return tap_done ();
}
