/* cswap: the cold pages of one read request come back in one disk read
 * (store/cold-read-ahead.h).
 *
 *   - pages written back together, read 8 to a request (the kernel's
 *     swap read-ahead): one disk read a request, every page as written,
 *     sealed and plain;
 *   - a request whose pages lie further apart on the file than a read
 *     ahead takes: a disk read a page, every page as written;
 *   - readers, more than the store has read-ahead buffers, reading
 *     requests of cold pages while a writer rewrites and writes back
 *     other pages, so segments are freed, cleaned and taken again under
 *     them: every page as written (run under ThreadSanitizer too).
 *
 * Backing files go under $CSWAP_TIER_DIR or /var/tmp (O_DIRECT).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "page.h"
#include "pagefile.h"
#include "store.h"
#include "backed-store.h"
#include "tap.h"

#define DEVICE_PAGES 2048u
#define STILL_PAGES 512u        /* written once; the readers' */
#define REQUEST_PAGES 8u
#define READERS 12u             /* more than COLD_READ_AHEAD_BUFFERS */
#define BACKING_BYTES (12u << 20)

static struct pagefile corpus;
static char backing_path[256];

/* Page P's bytes in its VERSION: a corpus page, never same-filled. */
static void
page_of (unsigned p, unsigned version, unsigned char *page)
{
  memcpy (page, pagefile_page (&corpus, (p * 7 + version * 131)
                               % corpus.pages), CSWAP_PAGE_SIZE);
  page[0] ^= (unsigned char) (p + 1);
  page[1] ^= (unsigned char) (p >> 8);
  page[2] ^= (unsigned char) version;
}

/* READS_STAY: pages read from the file stay there (read-writeback), so
 * that every read of them is a cold one.
 */
static struct store *
make_store (bool in_clear, bool reads_stay)
{
  struct store_config config = {
    .read_writeback = reads_stay,
    .size_bytes = (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, 0 },
    .backing_path = backing_path,
    .backing_size_bytes = BACKING_BYTES,
    .backing_in_clear = in_clear,
  };

  return backed_store_create (&config);
}

static void
write_pages (struct store *store, unsigned first, unsigned pages,
             unsigned version)
{
  unsigned char page[CSWAP_PAGE_SIZE];

  for (unsigned p = first; p < first + pages; p++) {
    page_of (p, version, page);
    if (store_write (store, page, CSWAP_PAGE_SIZE,
                     (uint64_t) p * CSWAP_PAGE_SIZE))
      tap_bail_out ("store_write of page %u failed", p);
  }
}

static void
write_back_all (struct store *store)
{
  struct store_writeback_result result;

  store_writeback (store, 0, DEVICE_PAGES, true, &result);
}

/* Whether the request of REQUEST_PAGES from FIRST reads as VERSION. */
static bool
request_reads_back (struct store *store, unsigned first, unsigned version)
{
  unsigned char got[REQUEST_PAGES * CSWAP_PAGE_SIZE], want[CSWAP_PAGE_SIZE];

  if (store_read (store, got, sizeof got, (uint64_t) first * CSWAP_PAGE_SIZE))
    return false;
  for (unsigned i = 0; i < REQUEST_PAGES; i++) {
    page_of (first + i, version, want);
    if (memcmp (got + (size_t) i * CSWAP_PAGE_SIZE, want, CSWAP_PAGE_SIZE))
      return false;
  }
  return true;
}

static struct store_stats
stats_of (struct store *store)
{
  struct store_stats s;

  store_stats (store, &s);
  return s;
}

static void
test_one_read_a_request (bool in_clear)
{
  struct store *store = make_store (in_clear, false);
  const unsigned requests = STILL_PAGES / REQUEST_PAGES;
  unsigned good = 0;

  write_pages (store, 0, STILL_PAGES, 0);
  write_back_all (store);
  struct store_stats before = stats_of (store);
  for (unsigned r = 0; r < requests; r++)
    good += request_reads_back (store, r * REQUEST_PAGES, 0);
  struct store_stats after = stats_of (store);
  ok (before.tiered_pages == STILL_PAGES && good == requests
      && after.written_back_reads - before.written_back_reads == STILL_PAGES
      && after.backing_reads - before.backing_reads == requests,
      "%s: %u requests of %u cold pages read as written (%u) in %llu disk "
      "reads, %llu pages from disk", in_clear ? "plain" : "sealed",
      requests, REQUEST_PAGES, good,
      (unsigned long long) (after.backing_reads - before.backing_reads),
      (unsigned long long) (after.written_back_reads
                            - before.written_back_reads));
  store_destroy (store);
}

/* Pages 0..511 on the file, then page 3 again: its new copy lies after
 * the others' 500 records, further than a read-ahead from pages 0..7.
 */
static void
test_too_far_apart (void)
{
  struct store *store = make_store (false, false);

  write_pages (store, 0, STILL_PAGES, 0);
  write_back_all (store);
  write_pages (store, 3, 1, 1);
  write_back_all (store);

  unsigned char got[REQUEST_PAGES * CSWAP_PAGE_SIZE], want[CSWAP_PAGE_SIZE];
  struct store_stats before = stats_of (store);
  bool same = store_read (store, got, sizeof got, 0) == 0;
  struct store_stats after = stats_of (store);
  for (unsigned i = 0; same && i < REQUEST_PAGES; i++) {
    page_of (i, i == 3 ? 1 : 0, want);
    same = memcmp (got + (size_t) i * CSWAP_PAGE_SIZE, want,
                   CSWAP_PAGE_SIZE) == 0;
  }
  ok (same && after.backing_reads - before.backing_reads == REQUEST_PAGES,
      "pages further apart on the file than a read-ahead: read as written, "
      "a disk read each (%llu)",
      (unsigned long long) (after.backing_reads - before.backing_reads));
  store_destroy (store);
}

struct shared {
  struct store *store;
  atomic_bool stop;
  atomic_uint wrong, requests;
};

static void *
reader (void *arg)
{
  struct shared *sh = arg;
  unsigned seed = (unsigned) (uintptr_t) pthread_self ();

  while (!atomic_load (&sh->stop)) {
    unsigned first = rand_r (&seed) % (STILL_PAGES / REQUEST_PAGES)
      * REQUEST_PAGES;
    if (!request_reads_back (sh->store, first, 0))
      atomic_fetch_add (&sh->wrong, 1);
    atomic_fetch_add (&sh->requests, 1);
  }
  return NULL;
}

static void
test_readers_under_churn (void)
{
  struct shared sh = { .store = make_store (false, true) };
  pthread_t threads[READERS];
  unsigned rounds = getenv ("CSWAP_SANITIZE")
    && strstr (getenv ("CSWAP_SANITIZE"), "thread") ? 15 : 60;

  write_pages (sh.store, 0, STILL_PAGES, 0);
  write_back_all (sh.store);
  for (unsigned t = 0; t < READERS; t++)
    pthread_create (&threads[t], NULL, reader, &sh);
  /* A random half of the rest rewritten and written back, round after
   * round: the file fills with segments whose records die here and
   * there, which the cleaner empties under the readers.
   */
  unsigned seed = 1;
  for (unsigned round = 1; round <= rounds; round++) {
    for (unsigned p = STILL_PAGES; p < DEVICE_PAGES; p++)
      if (rand_r (&seed) % 2)
        write_pages (sh.store, p, 1, round);
    write_back_all (sh.store);
  }
  atomic_store (&sh.stop, true);
  for (unsigned t = 0; t < READERS; t++)
    pthread_join (threads[t], NULL);
  struct store_stats s = stats_of (sh.store);
  ok (atomic_load (&sh.wrong) == 0 && atomic_load (&sh.requests) > 0
      && s.segments_cleaned > 0 && s.backing_reads > atomic_load (&sh.requests),
      "%u readers, %u requests of cold pages (%llu disk reads) while %u "
      "rounds rewrote the rest and %llu segments were cleaned: %u wrong",
      READERS, atomic_load (&sh.requests),
      (unsigned long long) s.backing_reads, rounds,
      (unsigned long long) s.segments_cleaned, atomic_load (&sh.wrong));
  store_destroy (sh.store);
}

int
main (void)
{
  backed_store_setup (&corpus, backing_path, sizeof backing_path,
                      "cswap-test-read-ahead");
  test_one_read_a_request (false);
  test_one_read_a_request (true);
  test_too_far_apart ();
  test_readers_under_churn ();
  unlink (backing_path);
  pagefile_free (&corpus);
  return tap_done ();
}
