/* cswap: the pages a killed daemon took with it (daemon/serve/lost-pages.h)
 * as the request layer serves them, against a model.
 *
 * A device taken over from a killed daemon (cswap-ublk --recover) starts
 * with every page lost.  What a user relies on: a read never returns a
 * byte that was not written since the restart (it fails with EIO when it
 * starts on a lost page, and stops short before one), a page written,
 * discarded or zeroed reads back as the model says, and the counts say
 * how many pages are still lost and how many reads were refused.
 * Random requests of random lengths and offsets over a window of a real
 * store, each checked against a page-by-page model; then the map's edges
 * alone (a size not a multiple of 64, partial pages, the end).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blockdev.h"
#include "lost-pages.h"
#include "tap.h"
#include "xorshift.h"

#define PAGE CSWAP_PAGE_SIZE
#define WINDOW_PAGES 200        /* not a multiple of 64 */
#define BASE_PAGES 8
#define MAX_REQUEST_PAGES 32
#define ROUNDS 20000
/* Rounds between two kills: each new map starts with every page lost,
 * and the requests find most pages again within a few hundred.
 */
#define ROUNDS_PER_KILL 150

/* ladder_note_write is blockdev.c's only other need: no ladder here. */
void
ladder_note_write (struct ladder *ladder, uint64_t bytes)
{
  (void) ladder;
  (void) bytes;
}

/* The model: per page, lost or its fill byte (0: zeros). */
static bool model_lost[WINDOW_PAGES];
static unsigned char model_byte[WINDOW_PAGES];

static uint64_t
model_left (void)
{
  uint64_t left = 0;

  for (int p = 0; p < WINDOW_PAGES; p++)
    left += model_lost[p];
  return left;
}

/* What a read of PAGES at FIRST must return: -EIO, or the bytes. */
static int64_t
model_read (uint64_t first, uint64_t pages)
{
  uint64_t p = first;

  while (p < first + pages && p < WINDOW_PAGES && !model_lost[p])
    p++;
  if (p == first && first < WINDOW_PAGES)
    return -EIO;
  return (int64_t) (p - first) * PAGE;
}

int
main (void)
{
  struct store_config config = {
    .size_bytes = (WINDOW_PAGES + 2 * BASE_PAGES) * (uint64_t) PAGE,
    .codec = { CODEC_LZ4, codec_default_level (CODEC_LZ4) },
  };
  struct store *store = store_create (&config);
  static unsigned char buf[MAX_REQUEST_PAGES * PAGE];
  unsigned bad_reads = 0, bad_data = 0, bad_writes = 0, refused = 0;
  unsigned reads_short = 0, reads_whole = 0, bad_counts = 0, kills = 0;
  unsigned refused_here = 0;

  if (store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  /* The dead daemon's pages: the store under the window holds data the
   * new daemon must never hand out as the lost pages' contents (here
   * as if it did: a store that is not empty).
   */
  memset (buf, 0x5a, PAGE);
  for (int p = 0; p < WINDOW_PAGES + 2 * BASE_PAGES; p++)
    store_write (store, buf, PAGE, (uint64_t) p * PAGE);

  struct blockdev window = {
    .store = store, .base_bytes = BASE_PAGES * (uint64_t) PAGE,
    .size_bytes = WINDOW_PAGES * (uint64_t) PAGE,
    .lost = lost_pages_create (WINDOW_PAGES),
  };
  if (window.lost == NULL)
    tap_bail_out ("lost_pages_create: %m");
  for (int p = 0; p < WINDOW_PAGES; p++)
    model_lost[p] = true;
  ok (lost_pages_left (window.lost) == WINDOW_PAGES,
      "a new map has every page lost");
  ok (blockdev_read (&window, buf, PAGE, 0) == -EIO
      && blockdev_read (&window, buf, PAGE, (WINDOW_PAGES - 1) * PAGE) == -EIO,
      "a read of a lost page is EIO, at either end");
  ok (blockdev_read (&window, buf, PAGE, WINDOW_PAGES * PAGE) == 0,
      "a read at the end reads nothing, as without a map");
  refused += 2;
  refused_here = 2;

  for (int round = 0; round < ROUNDS; round++) {
    uint64_t r = xorshift_next ();

    if (round > 0 && round % ROUNDS_PER_KILL == 0) {
      /* Killed and taken over again: the counts so far, then a new map
       * (the store keeps its bytes: they must not be read either).
       */
      if (lost_pages_left (window.lost) != model_left ()
          || lost_pages_reads_refused (window.lost) != refused_here)
        bad_counts++;
      lost_pages_destroy (window.lost);
      window.lost = lost_pages_create (WINDOW_PAGES);
      if (window.lost == NULL)
        tap_bail_out ("lost_pages_create: %m");
      for (int p = 0; p < WINDOW_PAGES; p++)
        model_lost[p] = true;
      refused_here = 0;
      kills++;
    }
    uint64_t first = r % (WINDOW_PAGES + 2);            /* the end too */
    uint64_t pages = 1 + (r >> 16) % MAX_REQUEST_PAGES;
    uint64_t end = first + pages > WINDOW_PAGES ? WINDOW_PAGES : first + pages;
    unsigned char fill = 1 + (r >> 32) % 255;
    int64_t got, want;

    switch ((r >> 40) % 4) {
    case 0:                     /* a write */
      memset (buf, fill, pages * PAGE);
      got = blockdev_write (&window, buf, pages * PAGE, first * PAGE);
      if (first >= WINDOW_PAGES ? got != -EFBIG
          : got != (int64_t) ((end - first) * PAGE))
        bad_writes++;
      for (uint64_t p = first; p < end; p++)
        model_lost[p] = false, model_byte[p] = fill;
      break;
    case 1:                     /* a discard or write-zeroes */
      if (blockdev_zero (&window, pages * PAGE, first * PAGE) != 0)
        bad_writes++;
      for (uint64_t p = first; p < end; p++)
        model_lost[p] = false, model_byte[p] = 0;
      break;
    default:                    /* reads, twice as often */
      want = model_read (first, pages);
      got = blockdev_read (&window, buf, pages * PAGE, first * PAGE);
      if (got != want) {
        if (bad_reads++ == 0)
          diag ("read of %llu pages at page %llu: %lld, the model %lld",
                (unsigned long long) pages, (unsigned long long) first,
                (long long) got, (long long) want);
        break;
      }
      if (want == -EIO) {
        refused++;
        refused_here++;
        break;
      }
      if ((uint64_t) want < (end - first) * PAGE)
        reads_short++;
      else
        reads_whole++;
      for (int64_t i = 0; i < want; i++)
        if (buf[i] != model_byte[first + i / PAGE]) {
          bad_data++;
          break;
        }
    }
  }
  ok (bad_writes == 0, "every write and zero did what it would without a map");
  ok (bad_reads == 0, "every read returned what the model says "
      "(EIO on a lost page, short before one)");
  ok (bad_data == 0, "and read back what was written since, never the "
      "dead daemon's bytes");
  diag ("%u reads whole, %u short, %u refused", reads_whole, reads_short,
        refused);
  ok (reads_short > 100 && reads_whole > 100 && refused > 100,
      "the rounds met each case, over %u kills", kills);
  ok (bad_counts == 0 && lost_pages_left (window.lost) == model_left ()
      && lost_pages_reads_refused (window.lost) == refused_here,
      "after each kill, the pages still lost and the reads refused are "
      "counted");
  lost_pages_destroy (window.lost);

  /* The map's edges alone. */
  struct lost_pages *lost = lost_pages_create (70);
  ok (lost_pages_kept_run (lost, 70, 5) == 5,
      "pages past the map's end are not lost");
  lost_pages_found (lost, 60, 100);
  ok (lost_pages_left (lost) == 60 && lost_pages_kept_run (lost, 60, 10) == 10
      && lost_pages_kept_run (lost, 59, 2) == 0,
      "finding pages across a word and past the end clears just those");
  lost_pages_found (lost, 60, 10);
  ok (lost_pages_left (lost) == 60, "finding them again counts nothing");
  lost_pages_destroy (lost);

  /* Over a store's map (store_lost_map), a window from its bit 70: the
   * window's pages are those bits, as they are, and only they change.
   */
  _Atomic uint64_t words[4] = { 0, UINT64_MAX, UINT64_C (1) << 40, 0 };
  lost = lost_pages_over (words, 70, 100);
  ok (lost && lost_pages_left (lost) == 59
      && lost_pages_kept_run (lost, 0, 3) == 0
      && lost_pages_kept_run (lost, 57, 5) == 0
      && lost_pages_kept_run (lost, 58, 50) == 40
      && lost_pages_kept_run (lost, 99, 1) == 1,
      "a map over a store's bits: a window's pages are the bits from its "
      "first (%llu lost)", lost ? (unsigned long long) lost_pages_left (lost)
      : 0);
  lost_pages_found (lost, 50, 100);
  ok (lost && lost_pages_left (lost) == 50 && words[0] == 0
      && words[1] == (UINT64_MAX >> (64 - 56)) && words[2] == 0
      && words[3] == 0,
      "found pages clear their bits in the store's map, no other");
  lost_pages_destroy (lost);

  /* A partial page written leaves that page lost (ublk's 4 KiB blocks
   * never send one; another front end might).
   */
  window.lost = lost_pages_create (WINDOW_PAGES);
  memset (buf, 7, 2 * PAGE);
  ok (blockdev_write (&window, buf, PAGE + 512, 512) == PAGE + 512
      && blockdev_read (&window, buf, PAGE, 0) == -EIO
      && blockdev_read (&window, buf, PAGE, PAGE) == -EIO
      && lost_pages_left (window.lost) == WINDOW_PAGES,
      "a write of parts of two pages finds neither");
  ok (blockdev_write (&window, buf, 2 * PAGE, 0) == 2 * PAGE
      && blockdev_read (&window, buf, 3 * PAGE, 0) == 2 * PAGE,
      "written whole, they read back, up to the next lost page");
  lost_pages_destroy (window.lost);

  store_destroy (store);
  return tap_done ();
}
