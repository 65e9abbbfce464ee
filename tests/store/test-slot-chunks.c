/* cswap: the slot table's memory (store/slot-table.h, issue #53) — a
 * chunk of 4.5 KiB is made for each 2 MiB written to, and it is memory
 * like any other: counted against an area's limit and the pool limit
 * (a write that would pass either is refused with that limit's error,
 * making nothing), never made by reads, trims or zeroes of pages never
 * written, and given back when its last page goes, so that an area
 * trimmed whole (an export dropped) holds no chunk.  Then threads write,
 * trim and read pages of the same few chunks, which retire and come
 * back under them, with compaction and extents running: every page reads
 * back as last written (run under ThreadSanitizer in the threads suite).
 *
 * What it measures is the store's own metadata_bytes: the slot table's
 * directory and stripes are fixed, everything else in it that changes is
 * chunks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "page.h"
#include "store.h"
#include "tap.h"
#include "zsmalloc.h"

/* The areas: each 32 chunks (64 MiB); area 1 has a limit. */
#define AREAS 4
#define CHUNK_SLOTS 512
#define AREA_CHUNKS 32
#define AREA_PAGES (AREA_CHUNKS * CHUNK_SLOTS)
#define AREA_BYTES ((uint64_t) AREA_PAGES * CSWAP_PAGE_SIZE)
#define LIMITED 1
#define LIMIT_BYTES (64u * 1024)

static struct store *
make_store (uint64_t size_bytes, unsigned areas, uint64_t pool_limit)
{
  struct store_config config = {
    .size_bytes = size_bytes,
    .areas = areas,
    .codec = { CODEC_LZ4, codec_default_level (CODEC_LZ4) },
    .pool_limit_bytes = pool_limit,
  };
  struct store *store = store_create (&config);

  if (store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  return store;
}

static uint64_t
metadata (struct store *store)
{
  struct store_stats s;

  store_stats (store, &s);
  return s.metadata_bytes;
}

/* Byte I of a page that compresses a little. */
static unsigned char
page_byte (uint64_t seed, unsigned i)
{
  return (unsigned char) ((seed * 131 + i / 8 * 7) ^ (i % 8 == 0 ? seed : 0));
}

static void
make_page (unsigned char *page, uint64_t seed)
{
  for (unsigned i = 0; i < CSWAP_PAGE_SIZE; i++)
    page[i] = page_byte (seed, i);
}

/* Reads, trims and zeroes of pages never written make no chunk. */
static void
test_no_chunk_for_nothing (void)
{
  struct store *store = make_store (AREAS * AREA_BYTES, AREAS, 0);
  unsigned char page[CSWAP_PAGE_SIZE];
  uint64_t before = metadata (store);
  int errors = 0;

  for (uint64_t c = 0; c < AREA_CHUNKS; c++) {
    uint64_t at = c * CHUNK_SLOTS * CSWAP_PAGE_SIZE;
    errors += store_read (store, page, CSWAP_PAGE_SIZE, at) != 0;
    errors += store_read (store, page, 100, at + 10) != 0;
    errors += store_zero (store, CSWAP_PAGE_SIZE, at + CSWAP_PAGE_SIZE) != 0;
    errors += store_zero (store, 512, at + 2 * CSWAP_PAGE_SIZE + 512) != 0;
  }
  ok (errors == 0 && metadata (store) == before,
      "reads, trims and partial zeroes of pages never written make no "
      "chunk (metadata %llu bytes, was %llu)",
      (unsigned long long) metadata (store), (unsigned long long) before);

  /* A partial zero of an absent page in a chunk made: still absent. */
  make_page (page, 1);
  store_write (store, page, CSWAP_PAGE_SIZE, 0);
  store_zero (store, 512, CSWAP_PAGE_SIZE + 512);
  struct store_stats s;
  store_stats (store, &s);
  ok (s.pages_stored == 1, "a partial zero of a page never written stores "
      "nothing (%llu pages stored)", (unsigned long long) s.pages_stored);
  store_destroy (store);
}

/* A zero page in each 2 MiB of the limited area (the issue's
 * reproduction: no quota counts same-filled pages), then in an unlimited
 * one; then both areas dropped.
 */
static void
test_area_limit (void)
{
  struct store *store = make_store (AREAS * AREA_BYTES, AREAS, 0);
  unsigned char zeros[CSWAP_PAGE_SIZE] = { 0 };
  uint64_t before = metadata (store);
  unsigned written = 0, refused = 0, other = 0;
  struct store_area_stats a;

  store_set_area_limit (store, LIMITED, LIMIT_BYTES);
  for (uint64_t c = 0; c < AREA_CHUNKS; c++) {
    int r = store_write (store, zeros, CSWAP_PAGE_SIZE,
                         LIMITED * AREA_BYTES
                         + c * CHUNK_SLOTS * CSWAP_PAGE_SIZE);
    if (r == 0)
      written++;
    else if (r == -EDQUOT)
      refused++;
    else
      other++;
  }
  uint64_t grown = metadata (store) - before;
  store_area_stats (store, LIMITED, &a);
  ok (refused > 0 && other == 0 && grown <= LIMIT_BYTES
      && a.failed_writes == refused && a.area_limit_hits == refused,
      "a zero page per 2 MiB of an area limited to %u bytes: %u written, "
      "%u refused with EDQUOT, and the slot table grew %llu bytes",
      LIMIT_BYTES, written, refused, (unsigned long long) grown);
  ok (a.compressed_bytes + a.slot_chunk_bytes <= LIMIT_BYTES
      && a.slot_chunk_bytes == grown,
      "the area's chunks count against its limit (%llu bytes of chunks)",
      (unsigned long long) a.slot_chunk_bytes);

  /* A compressible page where a chunk is made already fits; where none
   * is, it would need one: refused, and nothing made.
   */
  uint64_t full = metadata (store);
  unsigned char page[CSWAP_PAGE_SIZE];
  make_page (page, 2);
  int r = store_write (store, page, CSWAP_PAGE_SIZE,
                       LIMITED * AREA_BYTES + (AREA_PAGES - 1) * CSWAP_PAGE_SIZE);
  ok (r == -EDQUOT && metadata (store) == full,
      "a refused write makes no chunk (%d)", r);

  /* An unlimited area makes a chunk for each. */
  for (uint64_t c = 0; c < AREA_CHUNKS; c++)
    other += store_write (store, zeros, CSWAP_PAGE_SIZE,
                          c * CHUNK_SLOTS * CSWAP_PAGE_SIZE) != 0;
  ok (other == 0, "an unlimited area takes a zero page in each 2 MiB");

  /* Dropped: both areas trimmed whole. */
  store_zero (store, AREA_BYTES, LIMITED * AREA_BYTES);
  store_area_stats (store, LIMITED, &a);
  ok (a.slot_chunk_bytes == 0 && a.pages_stored == 0,
      "the limited area, trimmed whole, holds no chunk");
  store_zero (store, AREA_BYTES, 0);
  ok (metadata (store) == before,
      "both areas trimmed whole: the slot table is back to %llu bytes "
      "(%llu)", (unsigned long long) before,
      (unsigned long long) metadata (store));

  /* And the limited area takes its writes again. */
  written = 0;
  for (uint64_t c = 0; c < 4; c++)
    written += store_write (store, zeros, CSWAP_PAGE_SIZE,
                            LIMITED * AREA_BYTES
                            + c * CHUNK_SLOTS * CSWAP_PAGE_SIZE) == 0;
  ok (written == 4, "the trimmed area takes writes again");
  store_destroy (store);
}

/* The last page of a chunk trimmed, one page at a time: the chunk goes
 * (after a batch at most), and writes come back.
 */
static void
test_last_page (void)
{
  enum { CHUNKS = 64 };
  struct store *store = make_store (CHUNKS * CHUNK_SLOTS * CSWAP_PAGE_SIZE,
                                    0, 0);
  unsigned char page[CSWAP_PAGE_SIZE];
  uint64_t before = metadata (store);

  make_page (page, 3);
  for (uint64_t c = 0; c < CHUNKS; c++)
    for (uint64_t i = 0; i < 3; i++)
      store_write (store, page, CSWAP_PAGE_SIZE,
                   (c * CHUNK_SLOTS + i * 100) * CSWAP_PAGE_SIZE);
  uint64_t made = metadata (store) - before;
  for (uint64_t c = 0; c < CHUNKS; c++)
    for (uint64_t i = 0; i < 3; i++)
      store_zero (store, CSWAP_PAGE_SIZE,
                  (c * CHUNK_SLOTS + i * 100) * CSWAP_PAGE_SIZE);
  uint64_t left = metadata (store) - before;
  struct store_stats s;
  store_stats (store, &s);
  /* What is left waits in limbo for a batch: at most 16 chunks. */
  ok (made > 0 && left * 4 <= made && s.slot_chunk_bytes == 0,
      "chunks emptied page by page are given back: %llu bytes made, %llu "
      "left waiting", (unsigned long long) made, (unsigned long long) left);
  store_destroy (store);
}

/* The pool limit counts chunks too: a zero page per 2 MiB of a device
 * with a small pool limit, no areas.
 */
static void
test_pool_limit (void)
{
  enum { CHUNKS = 64 };
  const uint64_t limit = 64 * 1024;
  struct store *store = make_store (CHUNKS * CHUNK_SLOTS * CSWAP_PAGE_SIZE,
                                    0, limit);
  unsigned char zeros[CSWAP_PAGE_SIZE] = { 0 };
  uint64_t before = metadata (store);
  unsigned refused = 0, other = 0;
  struct store_stats s;

  for (uint64_t c = 0; c < CHUNKS; c++) {
    int r = store_write (store, zeros, CSWAP_PAGE_SIZE,
                         c * CHUNK_SLOTS * CSWAP_PAGE_SIZE);
    refused += r == -ENOSPC;
    other += r != 0 && r != -ENOSPC;
  }
  uint64_t grown = metadata (store) - before;
  store_stats (store, &s);
  ok (refused > 0 && other == 0 && grown <= limit
      && s.pool_limit_hits == refused,
      "a zero page per 2 MiB under a %llu-byte pool limit: %u refused "
      "with ENOSPC, the slot table grew %llu bytes",
      (unsigned long long) limit, refused, (unsigned long long) grown);
  store_destroy (store);
}

/* Threads on the pages of the same few chunks. */
enum { SHARED_CHUNKS = 2, THREADS = 4, PAGES_PER_THREAD = 4 };
#define OPS 40000

struct chunk_writer {
  struct store *store;
  unsigned id;
  uint64_t rng;
  unsigned char reference[PAGES_PER_THREAD][CSWAP_PAGE_SIZE];
  unsigned long mismatches, errors;
};

static atomic_bool writers_done;

static uint64_t
rand64 (uint64_t *state)
{
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 2685821657736338717ull;
}

/* Page P of writer W: spread over the chunks and over their stripes. */
static uint64_t
page_of (const struct chunk_writer *w, unsigned p)
{
  unsigned k = p * THREADS + w->id;

  return (k % SHARED_CHUNKS) * CHUNK_SLOTS + k * 37 % CHUNK_SLOTS;
}

static void *
write_chunks (void *opaque)
{
  struct chunk_writer *w = opaque;
  unsigned char page[CSWAP_PAGE_SIZE];

  for (unsigned i = 0; i < OPS; i++) {
    unsigned p = rand64 (&w->rng) % PAGES_PER_THREAD;
    uint64_t at = page_of (w, p) * CSWAP_PAGE_SIZE;
    unsigned op = rand64 (&w->rng) % 8;
    unsigned char *ref = w->reference[p];

    if (op < 2) {
      uint64_t seed = rand64 (&w->rng);
      if (seed % 3 == 0)
        memset (page, (int) (seed >> 8), sizeof page);
      else
        make_page (page, seed);
      if (store_write (w->store, page, CSWAP_PAGE_SIZE, at))
        w->errors++;
      else
        memcpy (ref, page, CSWAP_PAGE_SIZE);
    } else if (op < 4) {
      /* Trims most: chunks empty, retire and come back. */
      if (store_zero (w->store, CSWAP_PAGE_SIZE, at))
        w->errors++;
      memset (ref, 0, CSWAP_PAGE_SIZE);
    } else if (op == 4) {
      unsigned off = rand64 (&w->rng) % (CSWAP_PAGE_SIZE - 100);
      make_page (page, rand64 (&w->rng));
      if (store_write (w->store, page, 100, at + off))
        w->errors++;
      else
        memcpy (ref + off, page, 100);
    } else if (op == 5) {
      unsigned off = rand64 (&w->rng) % (CSWAP_PAGE_SIZE - 300);
      if (store_zero (w->store, 300, at + off))
        w->errors++;
      memset (ref + off, 0, 300);
    } else if (store_read (w->store, page, CSWAP_PAGE_SIZE, at))
      w->errors++;
    else if (memcmp (page, ref, CSWAP_PAGE_SIZE))
      w->mismatches++;
  }
  return NULL;
}

/* Compaction and extents over the chunks while they come and go. */
static void *
watch_chunks (void *opaque)
{
  struct store *store = opaque;
  struct zs_compact_result compacted;
  bool zero;
  uint64_t length;

  while (!atomic_load (&writers_done)) {
    store_compact (store, &compacted);
    for (uint64_t at = 0; at < SHARED_CHUNKS * CHUNK_SLOTS * CSWAP_PAGE_SIZE;
         at += length)
      if (store_extent (store, at,
                        SHARED_CHUNKS * CHUNK_SLOTS * CSWAP_PAGE_SIZE - at,
                        &zero, &length))
        break;
  }
  return NULL;
}

static void
test_chunks_come_and_go (void)
{
  struct store *store = make_store (SHARED_CHUNKS * CHUNK_SLOTS
                                    * CSWAP_PAGE_SIZE, 0, 0);
  static struct chunk_writer writers[THREADS];
  pthread_t threads[THREADS], watcher;
  unsigned long mismatches = 0, errors = 0;
  unsigned char page[CSWAP_PAGE_SIZE];

  if (store_start_background (store))
    tap_bail_out ("store_start_background failed");
  atomic_store (&writers_done, false);
  pthread_create (&watcher, NULL, watch_chunks, store);
  for (unsigned t = 0; t < THREADS; t++) {
    writers[t] = (struct chunk_writer) { .store = store, .id = t,
                                         .rng = 0xc0ffee + t };
    pthread_create (&threads[t], NULL, write_chunks, &writers[t]);
  }
  for (unsigned t = 0; t < THREADS; t++)
    pthread_join (threads[t], NULL);
  atomic_store (&writers_done, true);
  pthread_join (watcher, NULL);
  for (unsigned t = 0; t < THREADS; t++) {
    struct chunk_writer *w = &writers[t];
    for (unsigned p = 0; p < PAGES_PER_THREAD; p++)
      if (store_read (store, page, CSWAP_PAGE_SIZE,
                      page_of (w, p) * CSWAP_PAGE_SIZE)
          || memcmp (page, w->reference[p], CSWAP_PAGE_SIZE))
        w->mismatches++;
    mismatches += w->mismatches;
    errors += w->errors;
  }
  ok (mismatches == 0 && errors == 0,
      "%d threads writing and trimming %d pages each of %d chunks, with "
      "compaction and extents: %lu mismatches, %lu errors",
      THREADS, PAGES_PER_THREAD, SHARED_CHUNKS, mismatches, errors);
  store_zero (store, SHARED_CHUNKS * CHUNK_SLOTS * CSWAP_PAGE_SIZE, 0);
  struct store_stats s;
  store_stats (store, &s);
  ok (s.slot_chunk_bytes == 0 && s.pages_stored == 0,
      "all trimmed: no chunk left");
  store_destroy (store);
}

int
main (void)
{
  test_no_chunk_for_nothing ();
  test_area_limit ();
  test_last_page ();
  test_pool_limit ();
  test_chunks_come_and_go ();
  return tap_done ();
}
