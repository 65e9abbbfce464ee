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

#include "killed-writers.h"
#include "page.h"
#include "rounding.h"
#include "pagefile.h"
#include "slot-table.h"
#include "store.h"
#include "store-segment.h"
#include "tap.h"
#include "zsmalloc.h"

#define DEVICE_PAGES 4096       /* 16 MiB: 8 slot chunks */

static struct pagefile corpus;
/* The test's device number, clear of ublk's (below 2^20). */
static uint32_t device;
static unsigned generations = 16;
static uint64_t reference[DEVICE_PAGES];
static struct kw_model model = {
  .corpus = &corpus, .pages = DEVICE_PAGES, .reference = reference,
};

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

static void *
compact_thread (void *arg)
{
  struct store *store = arg;
  struct zs_compact_result result;

  for (;;)
    store_compact (store, &result);
  return NULL;
}

struct generation {
  enum store_persistence persistence;
  uint64_t seed;
};

static void
child (int report_fd, void *arg)
{
  const struct generation *g = arg;

  in_generation = true;
  /* Half the generations die at a free, the others when the parent
   * says.
   */
  kill_after_frees = g->seed % 2 ? 200 + g->seed % 3000 : 0;
  kw_serve (open_store (g->persistence), DEVICE_PAGES, &corpus, report_fd,
            g->seed, compact_thread);
}

/* ------------------------------------------------------ the parent -- */

/* Runs a generation for about RUN_MS, kills it, reads what it told. */
static void
run_generation (enum store_persistence persistence, uint64_t seed,
                unsigned run_ms)
{
  struct generation g = { persistence, seed };
  uint64_t before = model.answered;
  int status = kw_run (&model, child, &g, run_ms);

  ok (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL,
      "generation killed while it worked (status %#x, %s), %llu requests "
      "answered", status, seed % 2 ? "at a free" : "at a time",
      (unsigned long long) (model.answered - before));
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
  kw_reissue (&model, store);
  wrong = kw_wrong_pages (&model, store, &written);
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

  kw_page (&corpus, 2, page);      /* a corpus page: it compresses */
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

  kw_page (&corpus, 2, page);
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
  kw_page (&corpus, 2, page);
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
  uint64_t seed = kw_setup (&corpus, &generations, &device);

  remove_stale_segments ();
  atexit (remove_segment);
  kw_probe (open_store (STORE_SEGMENT_NEW));
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
