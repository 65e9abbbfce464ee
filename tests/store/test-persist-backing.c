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
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "killed-writers.h"
#include "page.h"
#include "pagefile.h"
#include "store.h"
#include "store-segment.h"
#include "tap.h"

#define DEVICE_PAGES 4096       /* 16 MiB */
#define BACKING_BYTES (6u << 20) /* 6 segments: the cleaner has work */
#define MAGIC_SEALED 0xc5abu    /* tier/record.c */

static struct pagefile corpus;
static uint32_t device;
static unsigned generations = 12;
static char backing_path[256], backing_moved[300];
static uint64_t reference[DEVICE_PAGES];
static struct kw_model model = {
  .corpus = &corpus, .pages = DEVICE_PAGES, .reference = reference,
};
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

struct generation {
  enum store_persistence persistence;
  bool in_clear;
  uint64_t seed;
};

static void
child (int report_fd, void *arg)
{
  const struct generation *g = arg;

  kw_serve (open_store (g->persistence, g->in_clear), DEVICE_PAGES, &corpus,
            report_fd, g->seed, sweep_thread);
}

/* ------------------------------------------------------ the parent -- */

static void
run_generation (enum store_persistence persistence, bool in_clear,
                uint64_t seed, unsigned run_ms)
{
  struct generation g = { persistence, in_clear, seed };
  int status = kw_run (&model, child, &g, run_ms);

  if (!WIFSIGNALED (status))
    tap_bail_out ("the generation ended by itself (status %#x): could not "
                  "make its store", status);
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
  kw_reissue (&model, store);
  uint64_t written, wrong = kw_wrong_pages (&model, store, &written);
  ok (wrong == 0, "generation %u: every page reads as last answered "
      "(%llu written, %llu wrong)", generation, (unsigned long long) written,
      (unsigned long long) wrong);
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
  const char *dir = getenv ("CSWAP_TIER_DIR");
  uint64_t seed = kw_setup (&corpus, &generations, &device);

  snprintf (backing_path, sizeof backing_path,
            "%s/cswap-test-persist-backing.%d", dir ? dir : "/var/tmp",
            (int) getpid ());
  snprintf (backing_moved, sizeof backing_moved, "%s.moved", backing_path);
  atexit (remove_leftovers);
  kw_probe (open_store (STORE_SEGMENT_NEW, false));
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
