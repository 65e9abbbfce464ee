/* cswap: store areas (store.h) — a device cut into equal areas, one
 * writer thread each against its own reference image, with one area
 * under a limit: every page reads back as last written (or as before, when
 * a write was refused), only the limited area refuses, it never holds
 * more than its limit and a page per writer, and the areas' counters add
 * up to the store's.  Then the same with a backing file and the store's
 * threads running: the limited area writes its own pages back instead of
 * refusing (none refused, its pages on disk, the others' not), and still
 * holds no more than its limit and a page in memory.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "page.h"
#include "pagefile.h"
#include "store.h"
#include "tap.h"

#define AREAS 4
#define AREA_PAGES 512
#define LIMITED_AREA 2
#define LIMIT_BYTES (64u * 1024)
#define OPS 20000

static struct pagefile corpus;

struct area_writer {
  struct store *store;
  unsigned area;
  uint64_t rng;
  unsigned char *reference;     /* AREA_PAGES pages */
  unsigned long mismatches, refused, errors;
  uint64_t most_held;           /* the area's compressed_bytes, at most */
};

static uint64_t
rand64 (uint64_t *state)
{
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 2685821657736338717ull;
}

static uint64_t
offset_of (const struct area_writer *w, uint64_t page)
{
  return ((uint64_t) w->area * AREA_PAGES + page) * CSWAP_PAGE_SIZE;
}

/* Random writes (corpus pages), trims and checked reads in W's area. */
static void *
write_area (void *opaque)
{
  struct area_writer *w = opaque;
  unsigned char page[CSWAP_PAGE_SIZE];
  struct store_area_stats s;

  for (unsigned i = 0; i < OPS; i++) {
    uint64_t p = rand64 (&w->rng) % AREA_PAGES;
    unsigned char *ref = w->reference + p * CSWAP_PAGE_SIZE;
    unsigned op = rand64 (&w->rng) % 8;

    if (op < 5) {
      const void *data = pagefile_page (&corpus, rand64 (&w->rng) % corpus.pages);
      int r = store_write (w->store, data, CSWAP_PAGE_SIZE, offset_of (w, p));
      if (r == 0)
        memcpy (ref, data, CSWAP_PAGE_SIZE);
      else if (r == -EDQUOT)
        w->refused++;
      else
        w->errors++;
    } else if (op == 5) {
      if (store_zero (w->store, CSWAP_PAGE_SIZE, offset_of (w, p)))
        w->errors++;
      memset (ref, 0, CSWAP_PAGE_SIZE);
    } else if (store_read (w->store, page, CSWAP_PAGE_SIZE, offset_of (w, p)))
      w->errors++;
    else if (memcmp (page, ref, CSWAP_PAGE_SIZE))
      w->mismatches++;
    store_area_stats (w->store, w->area, &s);
    if (s.compressed_bytes > w->most_held)
      w->most_held = s.compressed_bytes;
  }
  for (uint64_t p = 0; p < AREA_PAGES; p++)
    if (store_read (w->store, page, CSWAP_PAGE_SIZE, offset_of (w, p))
        || memcmp (page, w->reference + p * CSWAP_PAGE_SIZE, CSWAP_PAGE_SIZE))
      w->mismatches++;
  return NULL;
}

/* A store of AREAS areas; with BACKING, a backing file there. */
static struct store *
make_store_backed (uint64_t size_bytes, unsigned areas, const char *backing)
{
  struct store_config config = {
    .size_bytes = size_bytes,
    .areas = areas,
    .codec = { CODEC_LZ4, codec_default_level (CODEC_LZ4) },
    .backing_path = backing,
    .backing_size_bytes = backing ? size_bytes : 0,
    .writeback_batch_pages = 16,
  };
  return store_create (&config);
}

static struct store *
make_store (uint64_t size_bytes, unsigned areas)
{
  return make_store_backed (size_bytes, areas, NULL);
}

static void
test_bad_areas (void)
{
  struct store *store;

  errno = 0;
  store = make_store (3 * CSWAP_PAGE_SIZE, 2);
  ok (store == NULL && errno == EINVAL,
      "3 pages in 2 areas: refused with EINVAL");
  store = make_store ((uint64_t) (STORE_MAX_AREAS + 1) * CSWAP_PAGE_SIZE,
                      STORE_MAX_AREAS + 1);
  ok (store == NULL && errno == EINVAL, "%u areas: refused with EINVAL",
      STORE_MAX_AREAS + 1);
  store = make_store (AREA_PAGES * CSWAP_PAGE_SIZE, 0);
  ok (store && store_areas (store) == 1
      && store_area_size (store) == AREA_PAGES * CSWAP_PAGE_SIZE
      && store_set_area_limit (store, 0, LIMIT_BYTES) == -EINVAL,
      "areas=0 is one area, which takes no limit of its own");
  store_destroy (store);
  store = make_store (AREA_PAGES * CSWAP_PAGE_SIZE, 1);
  ok (store && store_areas (store) == 1
      && store_set_area_limit (store, 0, LIMIT_BYTES) == 0,
      "areas=1 is one area with a limit of its own");
  store_destroy (store);
}

/* The areas' writers, against STORE, with or without a BACKING file. */
static void
test_areas (const char *backing)
{
  struct store *store = make_store_backed (AREAS * AREA_PAGES * CSWAP_PAGE_SIZE,
                                           AREAS, backing);
  const char *with = backing ? "with a backing file" : "in memory";
  struct area_writer writers[AREAS];
  pthread_t threads[AREAS];
  struct store_area_stats a;
  struct store_stats s;
  uint64_t pages = 0, bytes = 0, writes = 0, refused = 0;

  if (store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  if (backing && store_start_background (store) != 0)
    tap_bail_out ("store_start_background failed");
  ok (store_areas (store) == AREAS
      && store_area_size (store) == AREA_PAGES * CSWAP_PAGE_SIZE,
      "%u areas of %u pages", AREAS, AREA_PAGES);
  ok (store_set_area_limit (store, AREAS, LIMIT_BYTES) == -EINVAL
      && store_area_stats (store, AREAS, &a) == -EINVAL,
      "no area %u", AREAS);
  store_set_area_limit (store, LIMITED_AREA, LIMIT_BYTES);
  for (unsigned i = 0; i < AREAS; i++) {
    writers[i] = (struct area_writer) {
      .store = store, .area = i, .rng = 0x5eed + i,
      .reference = calloc (AREA_PAGES, CSWAP_PAGE_SIZE),
    };
    pthread_create (&threads[i], NULL, write_area, &writers[i]);
  }
  for (unsigned i = 0; i < AREAS; i++)
    pthread_join (threads[i], NULL);
  /* Settled: the deferred pages compressed, no batch in flight. */
  if (backing)
    store_stop_background (store);

  for (unsigned i = 0; i < AREAS; i++) {
    struct area_writer *w = &writers[i];

    store_area_stats (store, i, &a);
    ok (w->mismatches == 0 && w->errors == 0,
        "%s, area %u: every page reads back as last written (%lu "
        "mismatches, %lu errors)", with, i, w->mismatches, w->errors);
    if (i == LIMITED_AREA && backing)
      ok (w->refused == 0 && a.failed_writes == 0 && a.tiered_pages > 0
          && w->most_held <= LIMIT_BYTES + CSWAP_PAGE_SIZE,
          "%s, area %u, limited to %u bytes: no write refused, %llu of "
          "its pages on disk, and it held %llu bytes at most in memory",
          with, i, LIMIT_BYTES, (unsigned long long) a.tiered_pages,
          (unsigned long long) w->most_held);
    else if (i == LIMITED_AREA)
      ok (w->refused > 0 && a.area_limit_hits == w->refused
          && a.failed_writes == w->refused
          && w->most_held <= LIMIT_BYTES + CSWAP_PAGE_SIZE
          && a.limit_bytes == LIMIT_BYTES,
          "area %u, limited to %u bytes: %lu writes refused, all counted, "
          "and it held %llu bytes at most", i, LIMIT_BYTES, w->refused,
          (unsigned long long) w->most_held);
    else
      ok (w->refused == 0 && a.failed_writes == 0 && a.area_limit_hits == 0
          && a.tiered_pages == 0,
          "%s, area %u, unlimited: no write refused, none on disk, holding "
          "%llu bytes", with, i, (unsigned long long) a.compressed_bytes);
    pages += a.pages_stored;
    bytes += a.compressed_bytes;
    writes += a.writes;
    refused += a.failed_writes;
  }
  store_stats (store, &s);
  ok (pages == s.pages_stored && bytes == s.compressed_bytes
      && writes == s.writes && refused == s.failed_writes,
      "the areas' pages, bytes, writes and refusals add up to the store's "
      "(%llu pages, %llu bytes)", (unsigned long long) pages,
      (unsigned long long) bytes);

  /* Trimming the limited area frees its quota: its writes go through. */
  store_zero (store, AREA_PAGES * CSWAP_PAGE_SIZE,
              (uint64_t) LIMITED_AREA * AREA_PAGES * CSWAP_PAGE_SIZE);
  store_area_stats (store, LIMITED_AREA, &a);
  int r = store_write (store, pagefile_page (&corpus, 0), CSWAP_PAGE_SIZE,
                       (uint64_t) LIMITED_AREA * AREA_PAGES * CSWAP_PAGE_SIZE);
  ok (a.pages_stored == 0 && a.compressed_bytes == 0 && r == 0,
      "a trimmed area holds nothing, and takes writes again");
  for (unsigned i = 0; i < AREAS; i++)
    free (writers[i].reference);
  store_destroy (store);
}

/* Part of a page written at an area's limit, with a backing file, makes
 * room as a whole page does: the area's own pages go to disk, and the
 * write goes through (issue #53: refused with EDQUOT, ENOSPC to an NBD
 * client, where a whole page at the same offset went through).  Parts
 * zeroed likewise.
 */
static void
test_partial_at_limit (const char *backing)
{
  enum { FILLED = AREA_PAGES / 2, PARTS = 64, PART_BYTES = 512 };
  struct store *store = make_store_backed (2 * AREA_PAGES * CSWAP_PAGE_SIZE,
                                           2, backing);
  unsigned char *reference = calloc (AREA_PAGES, CSWAP_PAGE_SIZE);
  unsigned char page[CSWAP_PAGE_SIZE];
  unsigned long refused = 0, errors = 0, mismatches = 0;
  struct store_area_stats a;

  if (store == NULL || reference == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  store_set_area_limit (store, 0, LIMIT_BYTES);
  for (uint64_t p = 0; p < FILLED; p++) {
    const void *data = pagefile_page (&corpus, p % corpus.pages);
    if (store_write (store, data, CSWAP_PAGE_SIZE, p * CSWAP_PAGE_SIZE))
      errors++;
    else
      memcpy (reference + p * CSWAP_PAGE_SIZE, data, CSWAP_PAGE_SIZE);
  }
  store_area_stats (store, 0, &a);
  ok (errors == 0 && a.tiered_pages > 0,
      "whole pages past the area's limit go through (%llu on disk)",
      (unsigned long long) a.tiered_pages);
  for (uint64_t i = 0; i < PARTS; i++) {
    uint64_t p = FILLED + i;
    const unsigned char *data = pagefile_page (&corpus, (p * 7) % corpus.pages);
    int r = store_write (store, data, PART_BYTES,
                         p * CSWAP_PAGE_SIZE + PART_BYTES);
    if (r == -EDQUOT)
      refused++;
    else if (r)
      errors++;
    else
      memcpy (reference + p * CSWAP_PAGE_SIZE + PART_BYTES, data, PART_BYTES);
    r = store_zero (store, 300, i * CSWAP_PAGE_SIZE + 1000);
    if (r == -EDQUOT)
      refused++;
    else if (r)
      errors++;
    else
      memset (reference + i * CSWAP_PAGE_SIZE + 1000, 0, 300);
  }
  for (uint64_t p = 0; p < FILLED + PARTS; p++)
    if (store_read (store, page, CSWAP_PAGE_SIZE, p * CSWAP_PAGE_SIZE)
        || memcmp (page, reference + p * CSWAP_PAGE_SIZE, CSWAP_PAGE_SIZE))
      mismatches++;
  store_area_stats (store, 0, &a);
  ok (refused == 0 && errors == 0 && a.failed_writes == 0,
      "%d writes of %d bytes and %d partial zeroes at the area's limit: "
      "%lu refused, %lu errors", PARTS, PART_BYTES, PARTS, refused, errors);
  ok (mismatches == 0
      && a.compressed_bytes + a.slot_chunk_bytes
         <= LIMIT_BYTES + CSWAP_PAGE_SIZE,
      "they read back, and the area holds %llu bytes for its %u (%lu "
      "mismatches)", (unsigned long long) (a.compressed_bytes
                                           + a.slot_chunk_bytes),
      LIMIT_BYTES, mismatches);
  free (reference);
  store_destroy (store);
}

int
main (void)
{
  const char *path = getenv ("CSWAP_CORPUS");

  if (path == NULL || pagefile_load (path, &corpus) == -1)
    tap_skip_all ("no corpus (set CSWAP_CORPUS)");
  test_bad_areas ();
  test_areas (NULL);
  /* On a real disk: /tmp may be tmpfs, which refuses O_DIRECT. */
  const char *dir = getenv ("CSWAP_TIER_DIR");
  char backing[256];
  snprintf (backing, sizeof backing, "%s/cswap-test-areas.XXXXXX",
            dir ? dir : "/var/tmp");
  int fd = mkstemp (backing);
  if (fd == -1)
    tap_bail_out ("mkstemp %s: %s", backing, strerror (errno));
  close (fd);
  test_areas (backing);
  test_partial_at_limit (backing);
  unlink (backing);
  pagefile_free (&corpus);
  return tap_done ();
}
