/* cswap: store/data-path.c — the cold read, one path (issue #51).
 *
 * A page on disk is read by read_cold: the generation of its place is
 * taken once, with the slot's lock held, and the bytes read are taken
 * only if they are the record written there in that generation.  Linked
 * with --wrap=tier_generation and --wrap=tier_fetch:
 *
 *   - a whole-page read, a part of a page read, and a partial write
 *     (read-modify-write, the lock held) of a page on disk each take the
 *     tier's generation once, and read what was written;
 *   - bytes damaged between the disk and the check (as a read that raced
 *     the reuse of its place would be) are not returned: the page is read
 *     again with the lock held, and reads right, with no read error and
 *     no checksum error counted.
 *
 * Backing files go under $CSWAP_TIER_DIR or /var/tmp (O_DIRECT).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "page.h"
#include "store.h"
#include "tap.h"
#include "tier.h"

#define DEVICE_PAGES 64u

static atomic_uint generations_taken;
static atomic_uint fetches_to_damage;

extern uint32_t __real_tier_generation (struct tier *tier, uint64_t offset);
extern uint32_t __wrap_tier_generation (struct tier *tier, uint64_t offset);
extern int __real_tier_fetch (struct tier *tier, uint64_t offset,
                              uint32_t length, struct tier_record_buf *buf);
extern int __wrap_tier_fetch (struct tier *tier, uint64_t offset,
                              uint32_t length, struct tier_record_buf *buf);

uint32_t
__wrap_tier_generation (struct tier *tier, uint64_t offset)
{
  atomic_fetch_add (&generations_taken, 1);
  return __real_tier_generation (tier, offset);
}

int
__wrap_tier_fetch (struct tier *tier, uint64_t offset, uint32_t length,
                   struct tier_record_buf *buf)
{
  int r = __real_tier_fetch (tier, offset, length, buf);

  if (r == 0 && atomic_load (&fetches_to_damage) > 0) {
    atomic_fetch_sub (&fetches_to_damage, 1);
    for (size_t i = 0; i < sizeof buf->bytes; i++)
      buf->bytes[i] ^= 0x5a;
  }
  return r;
}

static char backing_path[256];

/* Noise: a page no codec shrinks, so it goes to disk as it is. */
static void
fill_page (unsigned char *page, uint64_t seed)
{
  for (unsigned i = 0; i < CSWAP_PAGE_SIZE; i += 8) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    memcpy (page + i, &seed, 8);
  }
}

/* A store with PAGE written at page 0 and written back to disk. */
static struct store *
store_with_page_on_disk (const unsigned char *page)
{
  struct store_config config = {
    .size_bytes = (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, 0 },
    .backing_path = backing_path,
    .backing_size_bytes = 8 << 20,
  };
  struct store_writeback_result r;
  struct store *store = store_create (&config);

  if (store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  if (store_write (store, page, CSWAP_PAGE_SIZE, 0) != 0
      || store_writeback (store, 0, 0, true, &r) != 0 || r.pages_written != 1)
    tap_bail_out ("the page did not go to disk");
  return store;
}

static void
test_generation_once (void)
{
  unsigned char page[CSWAP_PAGE_SIZE], got[CSWAP_PAGE_SIZE];
  const unsigned char part[100] = { 1, 2, 3 };

  fill_page (page, 1);
  struct store *store = store_with_page_on_disk (page);
  atomic_store (&generations_taken, 0);
  int r = store_read (store, got, CSWAP_PAGE_SIZE, 0);
  ok (r == 0 && memcmp (got, page, CSWAP_PAGE_SIZE) == 0
      && atomic_load (&generations_taken) == 1,
      "a whole-page read from disk takes the generation once (%u), "
      "and reads right", atomic_load (&generations_taken));
  store_destroy (store);
  unlink (backing_path);

  store = store_with_page_on_disk (page);
  atomic_store (&generations_taken, 0);
  r = store_read (store, got, 512, 1024);
  ok (r == 0 && memcmp (got, page + 1024, 512) == 0
      && atomic_load (&generations_taken) == 1,
      "a read of part of a page on disk takes it once (%u)",
      atomic_load (&generations_taken));
  store_destroy (store);
  unlink (backing_path);

  store = store_with_page_on_disk (page);
  atomic_store (&generations_taken, 0);
  r = store_write (store, part, sizeof part, 2048);
  unsigned taken = atomic_load (&generations_taken);
  memcpy (page + 2048, part, sizeof part);
  ok (r == 0 && store_read (store, got, CSWAP_PAGE_SIZE, 0) == 0
      && memcmp (got, page, CSWAP_PAGE_SIZE) == 0 && taken == 1,
      "a partial write of a page on disk (its lock held) takes it once "
      "(%u), and the page reads as written", taken);
  store_destroy (store);
  unlink (backing_path);
}

static void
test_damaged_fetch (void)
{
  unsigned char page[CSWAP_PAGE_SIZE], got[CSWAP_PAGE_SIZE];
  struct store_stats before, after;

  fill_page (page, 2);
  struct store *store = store_with_page_on_disk (page);
  store_stats (store, &before);
  atomic_store (&fetches_to_damage, 1);
  int r = store_read (store, got, CSWAP_PAGE_SIZE, 0);
  store_stats (store, &after);
  ok (r == 0 && memcmp (got, page, CSWAP_PAGE_SIZE) == 0
      && atomic_load (&fetches_to_damage) == 0,
      "bytes damaged after the disk read are not returned: the page is "
      "read again and reads right (%d)", r);
  ok (after.read_errors == before.read_errors
      && after.backing_checksum_errors == before.backing_checksum_errors,
      "and counted as no error (read errors %llu, checksum errors %llu)",
      (unsigned long long) (after.read_errors - before.read_errors),
      (unsigned long long) (after.backing_checksum_errors
                            - before.backing_checksum_errors));
  store_destroy (store);
  unlink (backing_path);
}

int
main (void)
{
  const char *dir = getenv ("CSWAP_TIER_DIR");

  snprintf (backing_path, sizeof backing_path, "%s/cswap-test-cold-read.%d",
            dir ? dir : "/var/tmp", (int) getpid ());
  test_generation_once ();
  test_damaged_fetch ();
  unlink (backing_path);
  return tap_done ();
}
