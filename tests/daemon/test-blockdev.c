/* cswap: the request layer (daemon/serve/blockdev.h) over a window of a
 * real store: what every front end relies on it for — a request lands
 * at the window's base, is clipped at the window's end (short reads and
 * writes, EFBIG at the end, zeroes and extents that stop there, the
 * store beyond untouched), is timed in the store's histogram of its
 * kind, and a write is told to the ladder.  ladder_note_write is this
 * file's, to count what the layer tells it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blockdev.h"
#include "tap.h"

#define KIB 1024u
#define STORE_BYTES (1024 * KIB)
#define BASE_BYTES (256 * KIB)
#define WINDOW_BYTES (512 * KIB)

static struct ladder *const test_ladder = (struct ladder *) &test_ladder;
static uint64_t noted_bytes;

void
ladder_note_write (struct ladder *ladder, uint64_t bytes)
{
  if (ladder == test_ladder)
    noted_bytes += bytes;
}

static uint64_t
requests (struct store *store, enum store_request kind)
{
  struct latency_summary summary;

  store_request_latency (store, kind, &summary);
  return summary.count;
}

/* Whether the store's LENGTH bytes at OFFSET all equal BYTE. */
static bool
store_holds (struct store *store, uint64_t offset, size_t length, int byte)
{
  static unsigned char buf[64 * KIB];

  if (length > sizeof buf || store_read (store, buf, length, offset) != 0)
    return false;
  for (size_t i = 0; i < length; i++)
    if (buf[i] != byte)
      return false;
  return true;
}

int
main (void)
{
  struct store_config config = {
    .size_bytes = STORE_BYTES,
    .codec = { CODEC_LZ4, codec_default_level (CODEC_LZ4) },
  };
  struct store *store = store_create (&config);
  static unsigned char page[8 * KIB], back[8 * KIB];
  bool zero;
  uint64_t run_bytes;

  if (store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  struct blockdev window = {
    .store = store, .ladder = test_ladder,
    .base_bytes = BASE_BYTES, .size_bytes = WINDOW_BYTES,
  };
  memset (page, 0xa5, sizeof page);

  ok (blockdev_write (&window, page, 8 * KIB, 0) == 8 * KIB,
      "a write inside the window is whole");
  ok (store_holds (store, BASE_BYTES, 8 * KIB, 0xa5)
      && store_holds (store, BASE_BYTES - 4 * KIB, 4 * KIB, 0),
      "and lands at the window's base, not before it");
  ok (noted_bytes == 8 * KIB, "and the ladder hears of its bytes");
  ok (requests (store, STORE_REQUEST_WRITE) == 1,
      "and it is timed as a write");

  ok (blockdev_write (&window, page, 8 * KIB, WINDOW_BYTES - 4 * KIB)
      == 4 * KIB, "a write across the end is short");
  ok (store_holds (store, BASE_BYTES + WINDOW_BYTES, 4 * KIB, 0),
      "and the store past the window is untouched");
  ok (blockdev_write (&window, page, 4 * KIB, WINDOW_BYTES) == -EFBIG,
      "a write at the end is EFBIG");
  ok (noted_bytes == 12 * KIB && requests (store, STORE_REQUEST_WRITE) == 2,
      "the ladder hears the bytes written, and EFBIG is not a request");

  ok (blockdev_read (&window, back, 8 * KIB, 0) == 8 * KIB
      && memcmp (back, page, sizeof page) == 0,
      "a read inside the window reads what was written");
  ok (blockdev_read (&window, back, 8 * KIB, WINDOW_BYTES - 4 * KIB)
      == 4 * KIB, "a read across the end is short");
  ok (blockdev_read (&window, back, 4 * KIB, WINDOW_BYTES) == 0,
      "a read at the end reads nothing");
  ok (requests (store, STORE_REQUEST_READ) == 2,
      "reads are timed as reads (the empty one not)");

  ok (blockdev_extent (&window, 0, WINDOW_BYTES, &zero, &run_bytes) == 0
      && !zero && run_bytes == 8 * KIB, "the extent at 0 is the data");
  ok (blockdev_extent (&window, 8 * KIB, WINDOW_BYTES, &zero, &run_bytes)
      == 0 && zero && run_bytes == WINDOW_BYTES - 12 * KIB,
      "the hole after it stops where the data at the end starts");
  ok (blockdev_extent (&window, WINDOW_BYTES, 4 * KIB, &zero, &run_bytes)
      == -ERANGE, "an extent at the end is ERANGE");

  ok (blockdev_zero (&window, 16 * KIB, WINDOW_BYTES - 4 * KIB) == 0
      && store_holds (store, BASE_BYTES + WINDOW_BYTES - 4 * KIB, 4 * KIB, 0),
      "a zero across the end frees the window's part");
  ok (blockdev_zero (&window, 4 * KIB, WINDOW_BYTES) == 0,
      "a zero at the end does nothing, without an error");
  ok (blockdev_zero (&window, 8 * KIB, 0) == 0
      && store_holds (store, BASE_BYTES, 8 * KIB, 0)
      && store_pages_stored (store) == 0, "zeroing frees the pages");
  ok (requests (store, STORE_REQUEST_TRIM) == 2,
      "zeroes are timed as trims (the empty one not)");

  store_destroy (store);
  return tap_done ();
}
