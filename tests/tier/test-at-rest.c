/* cswap: what the backing file gives away — encryption at rest.
 *
 *   - through the store: pages holding a marker string, written back to
 *     the backing file, leave no copy of it in the file's bytes when the
 *     records are sealed (the default); with backing-encrypt=no they do,
 *     which shows the search finds what is there;
 *   - through the tier: after a restart on the same file (a new key),
 *     the records of the run before read as -EIO, counted as stale, not
 *     as corrupted, and the tier goes on writing and reading new ones;
 *     the same for plain records, which carry the run's id too;
 *   - through the store again: a restarted store on an old file serves
 *     pages to disk and back;
 *   - a replay: a page's record copied aside, the page rewritten and
 *     written back to the same place, the old record put back there: the
 *     page reads as -EIO, not as its old copy (issue #27, item 7), sealed
 *     or plain.
 *
 * Backing files go under $CSWAP_TIER_DIR or /var/tmp (O_DIRECT).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "page.h"
#include "store.h"
#include "tap.h"
#include "tier.h"

#define DEVICE_PAGES 1024u
#define MARKED_PAGES 64u
#define BACKING_BYTES (8u << 20)
#define RECORDS 200u

static char backing_path[256];
static char marker[64];

/* A page that compresses but keeps MARKER readable in it: the marker,
 * then text that varies with SEED.
 */
static void
make_marked_page (unsigned char *page, unsigned seed)
{
  for (unsigned i = 0; i < CSWAP_PAGE_SIZE; i++)
    page[i] = 'a' + (i * 7 + seed * 13) % 23;
  memcpy (page + seed % (CSWAP_PAGE_SIZE - strlen (marker)), marker,
          strlen (marker));
}

/* Whether the backing file's bytes hold the marker anywhere. */
static bool
file_holds_marker (void)
{
  FILE *f = fopen (backing_path, "rb");
  unsigned char *bytes = malloc (BACKING_BYTES);

  if (f == NULL || bytes == NULL
      || fread (bytes, 1, BACKING_BYTES, f) != BACKING_BYTES)
    tap_bail_out ("cannot read %s back", backing_path);
  fclose (f);
  bool found = memmem (bytes, BACKING_BYTES, marker, strlen (marker)) != NULL;
  free (bytes);
  return found;
}

static struct store *
make_store (bool in_clear)
{
  struct store_config config = {
    .size_bytes = (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, 0 },
    .backing_path = backing_path,
    .backing_size_bytes = BACKING_BYTES,
    .backing_in_clear = in_clear,
  };
  struct store *store = store_create (&config);

  if (store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  return store;
}

/* Marked pages written and sent to disk: is the marker in the file? */
static bool
marker_reaches_file (bool in_clear)
{
  unsigned char page[CSWAP_PAGE_SIZE], got[CSWAP_PAGE_SIZE];
  struct store_writeback_result r;
  struct store_stats s;
  unsigned wrong = 0;

  unlink (backing_path);
  struct store *store = make_store (in_clear);
  for (unsigned p = 0; p < MARKED_PAGES; p++) {
    make_marked_page (page, p);
    store_write (store, page, CSWAP_PAGE_SIZE, (uint64_t) p * CSWAP_PAGE_SIZE);
  }
  store_writeback (store, 0, 0, true, &r);
  store_stats (store, &s);
  if (s.tiered_pages != MARKED_PAGES)
    tap_bail_out ("%llu of %u marked pages went to disk",
                  (unsigned long long) s.tiered_pages, MARKED_PAGES);
  bool found = file_holds_marker ();
  for (unsigned p = 0; p < MARKED_PAGES; p++) {
    make_marked_page (page, p);
    if (store_read (store, got, CSWAP_PAGE_SIZE, (uint64_t) p * CSWAP_PAGE_SIZE)
        || memcmp (got, page, CSWAP_PAGE_SIZE))
      wrong++;
  }
  ok (wrong == 0, "backing-encrypt=%s: the %u marked pages read back from disk",
      in_clear ? "no" : "yes", MARKED_PAGES);
  store_destroy (store);
  return found;
}

static void
test_marker (void)
{
  ok (marker_reaches_file (true),
      "backing-encrypt=no: the marker is in the backing file's bytes");
  ok (!marker_reaches_file (false),
      "backing-encrypt=yes: the marker is nowhere in the backing file's bytes");
}

static struct tier *
open_tier (bool encrypt)
{
  struct tier_config config = {
    .path = backing_path, .size_bytes = BACKING_BYTES, .encrypt = encrypt,
  };
  const char *why;
  struct tier *tier = tier_open (&config, &why);

  if (tier == NULL)
    tap_bail_out ("tier_open: %s", why);
  return tier;
}

static void
record_payload (unsigned char *payload, unsigned n)
{
  make_marked_page (payload, n);
}

static uint32_t
record_length (unsigned n)
{
  return 100 + n * 37 % 3000;
}

/* RECORDS records through one batch at a time; their offsets in OFFSET. */
static void
write_records (struct tier *tier, uint64_t *offset)
{
  struct tier_batch *batch = tier_batch_create (16);
  unsigned char payload[CSWAP_PAGE_SIZE];

  for (unsigned n = 0; n < RECORDS; n++) {
    record_payload (payload, n);
    int r = tier_batch_add (tier, batch, n, payload, record_length (n), &offset[n]);
    if (r == -E2BIG) {
      if (tier_batch_submit (tier, batch))
        tap_bail_out ("tier_batch_submit failed");
      r = tier_batch_add (tier, batch, n, payload, record_length (n), &offset[n]);
    }
    if (r)
      tap_bail_out ("tier_batch_add: %s", strerror (-r));
  }
  if (tier_batch_submit (tier, batch))
    tap_bail_out ("tier_batch_submit failed");
  tier_batch_destroy (batch);
}

/* Reads every record back; returns how many read right, and counts the
 * -EIO in *EIO.
 */
static unsigned
read_records (struct tier *tier, const uint64_t *offset, unsigned *eio)
{
  unsigned char payload[CSWAP_PAGE_SIZE], got[CSWAP_PAGE_SIZE];
  unsigned right = 0;

  *eio = 0;
  for (unsigned n = 0; n < RECORDS; n++) {
    record_payload (payload, n);
    int r = tier_read (tier, offset[n], record_length (n), n,
                       tier_generation (tier, offset[n]), got);
    if (r == 0 && memcmp (got, payload, record_length (n)) == 0)
      right++;
    else if (r == -EIO)
      ++*eio;
  }
  return right;
}

static void
test_restart (bool encrypt)
{
  const char *form = encrypt ? "sealed" : "plain";
  uint64_t old_offset[RECORDS], new_offset[RECORDS];
  struct tier_stats stats;
  unsigned eio;

  unlink (backing_path);
  struct tier *tier = open_tier (encrypt);
  write_records (tier, old_offset);
  ok (read_records (tier, old_offset, &eio) == RECORDS,
      "%s: %u records read back in the run that wrote them", form, RECORDS);
  tier_close (tier);

  tier = open_tier (encrypt);
  unsigned right = read_records (tier, old_offset, &eio);
  tier_stats (tier, &stats);
  ok (right == 0 && eio == RECORDS,
      "%s, after a restart: none of the %u old records reads (%u did), "
      "all -EIO (%u)", form, RECORDS, right, eio);
  ok (stats.stale_records == RECORDS && stats.checksum_errors == 0,
      "%s: counted as stale (%llu), not as corrupted (%llu)", form,
      (unsigned long long) stats.stale_records,
      (unsigned long long) stats.checksum_errors);
  write_records (tier, new_offset);
  ok (read_records (tier, new_offset, &eio) == RECORDS,
      "%s: the restarted tier writes and reads new records", form);
  tier_close (tier);
}

/* A store restarted on a file full of the last run's records. */
static void
test_store_restart (void)
{
  unsigned char page[CSWAP_PAGE_SIZE], got[CSWAP_PAGE_SIZE];
  struct store_writeback_result r;
  unsigned wrong = 0;

  for (int run = 0; run < 2; run++) {
    struct store *store = make_store (false);
    for (unsigned p = 0; p < DEVICE_PAGES; p++) {
      make_marked_page (page, p + run);
      store_write (store, page, CSWAP_PAGE_SIZE, (uint64_t) p * CSWAP_PAGE_SIZE);
    }
    store_writeback (store, 0, 0, true, &r);
    for (unsigned p = 0; p < DEVICE_PAGES; p++) {
      make_marked_page (page, p + run);
      if (store_read (store, got, CSWAP_PAGE_SIZE, (uint64_t) p * CSWAP_PAGE_SIZE)
          || memcmp (got, page, CSWAP_PAGE_SIZE))
        wrong++;
    }
    store_destroy (store);
  }
  ok (wrong == 0, "a store restarted on the same file writes every page "
      "back and reads it (%u wrong)", wrong);
}

/* A page that does not compress (SEED's noise): every one is stored whole,
 * so any two have records of the same length.
 */
static void
make_noise_page (unsigned char *page, uint64_t seed)
{
  for (unsigned i = 0; i < CSWAP_PAGE_SIZE; i += 8) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    memcpy (page + i, &seed, 8);
  }
}

/* Page 0 written back, its record (at offset 0, in the first two
 * blocks) copied aside; the page trimmed, rewritten with another page of
 * the same length and written back to the same place; the old record put
 * back there behind the store's back.
 */
static void
check_replay (bool in_clear)
{
  const char *form = in_clear ? "backing-encrypt=no" : "backing-encrypt=yes";
  unsigned char old_page[CSWAP_PAGE_SIZE], new_page[CSWAP_PAGE_SIZE];
  unsigned char got[CSWAP_PAGE_SIZE], old_record[2 * CSWAP_PAGE_SIZE];
  struct store_writeback_result r;
  struct store_stats before, after;

  unlink (backing_path);
  struct store *store = make_store (in_clear);
  make_noise_page (old_page, 1);
  make_noise_page (new_page, 2);
  store_write (store, old_page, CSWAP_PAGE_SIZE, 0);
  store_writeback (store, 0, 0, true, &r);
  int fd = open (backing_path, O_RDWR);
  if (fd == -1 || pread (fd, old_record, sizeof old_record, 0) != sizeof old_record)
    tap_bail_out ("cannot read %s", backing_path);
  store_zero (store, CSWAP_PAGE_SIZE, 0);
  store_write (store, new_page, CSWAP_PAGE_SIZE, 0);
  store_writeback (store, 0, 0, true, &r);
  unsigned char now[sizeof old_record];
  ok (r.pages_written == 1 && pread (fd, now, sizeof now, 0) == sizeof now
      && memcmp (now, old_record, sizeof now) != 0
      && memcmp (now, old_record, 8) == 0,
      "%s: the page's next copy went to the same place (the same head: "
      "magic, length, slot)", form);
  if (pwrite (fd, old_record, sizeof old_record, 0) != sizeof old_record
      || fsync (fd) == -1)
    tap_bail_out ("cannot write %s", backing_path);
  close (fd);
  store_stats (store, &before);
  int e = store_read (store, got, CSWAP_PAGE_SIZE, 0);
  store_stats (store, &after);
  ok (e == -EIO && after.backing_checksum_errors > before.backing_checksum_errors,
      "%s: the old record put back reads as -EIO, counted as a checksum "
      "error (read %s)", form,
      e == -EIO ? "-EIO" : e ? "another error"
      : memcmp (got, old_page, CSWAP_PAGE_SIZE) == 0 ? "the old page"
      : "something else");
  store_destroy (store);
}

static void
test_replay (void)
{
  check_replay (false);
  check_replay (true);
}

int
main (void)
{
  const char *dir = getenv ("CSWAP_TIER_DIR");

  snprintf (backing_path, sizeof backing_path, "%s/cswap-test-at-rest.%d",
            dir ? dir : "/var/tmp", (int) getpid ());
  snprintf (marker, sizeof marker, "cswap-at-rest-marker-%d-%ld",
            (int) getpid (), (long) time (NULL));
  test_marker ();
  test_restart (true);
  test_restart (false);
  test_store_restart ();
  test_replay ();
  unlink (backing_path);
  return tap_done ();
}
