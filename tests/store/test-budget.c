/* cswap: store/ — the writeback budget (writeback-budget.c), under the
 * test's own clock: no test waits for a refill, and none has a timing
 * threshold.
 *
 *   - `cswapctl writeback` (store_writeback): it stops at the burst, with
 *     -EDQUOT; what it wrote, the budget left and the stops are counted
 *     exactly; the clock moved on, it resumes with what refilled, and
 *     never more than the burst accrues; the budget lifted, everything
 *     goes; set again, it starts full; a value out of bounds changes
 *     nothing.  (Idle writeback takes the same sweep.)
 *   - the pool limit, with no background thread (a write makes room
 *     itself) and with the writer thread (writes wait for it): writes
 *     succeed while the budget lasts, then those that need room fail
 *     with ENOSPC; the pool never passes its limit; after a refill they
 *     go through again.
 *   - read writeback: the writer thread's judgements stop at the burst
 *     and resume after a refill.  The thread runs them every millisecond
 *     here; the test waits for the event (the budget's stop counted),
 *     with a hang guard, not for a time.
 *
 * Every page reads back byte-exact against a reference, refused writes
 * as what was there before.  Backing files go under $CSWAP_TIER_DIR or
 * /var/tmp (O_DIRECT needs a real filesystem).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "page.h"
#include "pagefile.h"
#include "store.h"
#include "backed-store.h"
#include "tap.h"

#define DEVICE_PAGES 1024u
#define SECOND_NS UINT64_C (1000000000)
#define DAY_NS (86400 * SECOND_NS)
/* 4096 bytes a second, a page's worth of blocks every two seconds. */
#define LIMIT_PER_DAY (86400u * 4096u)
#define HANG_GUARD_MS 60000

static struct pagefile corpus;
static char backing_path[256];
static _Atomic uint64_t now_ns = 1000 * SECOND_NS;

static uint64_t
test_clock (void *arg)
{
  (void) arg;
  return atomic_load (&now_ns);
}

static void
advance_clock (uint64_t ns)
{
  atomic_fetch_add (&now_ns, ns);
}

static struct store *
make_store (uint64_t pool_limit, uint64_t burst, unsigned read_wait_ms)
{
  struct store_config config = {
    .size_bytes = (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, 0 },
    .pool_limit_bytes = pool_limit,
    .backing_path = backing_path,
    .backing_size_bytes = 16 << 20,
    .writeback_batch_pages = 16,
    .read_writeback = read_wait_ms > 0,
    .read_writeback_wait_ms = read_wait_ms,
    .writeback_budget = { LIMIT_PER_DAY, burst },
    .budget_clock = test_clock,
  };

  return backed_store_create (&config);
}

/* Page I as written the Nth time: a corpus page, stamped. */
static void
make_page (uint64_t i, unsigned n, unsigned char *page)
{
  uint64_t stamp = i << 8 | n | 1;

  memcpy (page, pagefile_page (&corpus, (i + n) % corpus.pages),
          CSWAP_PAGE_SIZE);
  memcpy (page + 8 * (i % 64), &stamp, sizeof stamp);
}

/* Writes page I (its Nth version), kept in REFERENCE if taken.  Returns
 * the store's answer.
 */
static int
write_kept (struct store *store, unsigned char *reference, uint64_t i,
            unsigned n)
{
  unsigned char page[CSWAP_PAGE_SIZE];

  make_page (i, n, page);
  int r = store_write (store, page, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE);
  if (r == 0)
    memcpy (reference + i * CSWAP_PAGE_SIZE, page, CSWAP_PAGE_SIZE);
  return r;
}

static uint64_t
count_mismatches (struct store *store, const unsigned char *reference)
{
  unsigned char page[CSWAP_PAGE_SIZE];
  uint64_t bad = 0;

  for (uint64_t i = 0; i < DEVICE_PAGES; i++)
    if (store_read (store, page, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE)
        || memcmp (page, reference + i * CSWAP_PAGE_SIZE, CSWAP_PAGE_SIZE))
      bad++;
  return bad;
}

/* A batch stops where the next page would pass the budget; the next one
 * does not start below two blocks, what a page can take.
 */
static bool
spent_within (uint64_t written, uint64_t allowed)
{
  return written <= allowed
    && written + STORE_MIN_WRITEBACK_BUDGET_BYTES > allowed;
}

static void
test_command (void)
{
  const uint64_t burst = 256 << 10;
  struct store *store = make_store (0, burst, 0);
  unsigned char *reference = calloc (DEVICE_PAGES, CSWAP_PAGE_SIZE);
  struct store_writeback_result result;
  struct store_stats s, before;

  for (uint64_t i = 0; i < DEVICE_PAGES; i++)
    write_kept (store, reference, i, 0);
  int r = store_writeback (store, 0, 0, true, &result);
  store_stats (store, &s);
  ok (r == -EDQUOT && spent_within (s.written_back_bytes, burst),
      "writeback stops at the burst: %llu bytes written for %llu (%s)",
      (unsigned long long) s.written_back_bytes, (unsigned long long) burst,
      strerror (-r));
  ok (result.pages_written == s.tiered_pages
      && s.written_back_pages == s.tiered_pages && s.tiered_pages > 0
      && s.writeback_batches == result.batches,
      "its reply counts the %llu pages it wrote, in %llu batches",
      (unsigned long long) result.pages_written,
      (unsigned long long) result.batches);
  ok (s.writeback_limit_bytes == LIMIT_PER_DAY
      && s.writeback_budget_bytes == burst - s.written_back_bytes
      && s.writeback_budget_stops == 1,
      "stats: limit %llu a day, %llu bytes left, %llu stop",
      (unsigned long long) s.writeback_limit_bytes,
      (unsigned long long) s.writeback_budget_bytes,
      (unsigned long long) s.writeback_budget_stops);

  before = s;
  r = store_writeback (store, 0, 0, true, &result);
  store_stats (store, &s);
  ok (r == -EDQUOT && result.pages_written == 0 && result.batches == 0
      && s.written_back_bytes == before.written_back_bytes
      && s.writeback_budget_stops == 2,
      "with no time passed, the next writeback writes nothing");

  advance_clock (16 * SECOND_NS);
  store_stats (store, &s);
  uint64_t allowed = before.writeback_budget_bytes + 16 * 4096;
  ok (s.writeback_budget_bytes == allowed,
      "16 s later the budget has 16 x 4096 bytes more: %llu",
      (unsigned long long) s.writeback_budget_bytes);
  before = s;
  r = store_writeback (store, 0, 0, true, &result);
  store_stats (store, &s);
  ok (r == -EDQUOT && result.pages_written > 0
      && spent_within (s.written_back_bytes - before.written_back_bytes,
                       allowed)
      && s.writeback_budget_bytes == allowed
         - (s.written_back_bytes - before.written_back_bytes),
      "writeback resumes with what refilled: %llu pages, %llu bytes for %llu",
      (unsigned long long) result.pages_written,
      (unsigned long long) (s.written_back_bytes - before.written_back_bytes),
      (unsigned long long) allowed);
  ok (count_mismatches (store, reference) == 0,
      "every page reads back, from memory or from disk");

  advance_clock (30 * DAY_NS);
  store_stats (store, &s);
  ok (s.writeback_budget_bytes == burst,
      "30 days later the budget holds the burst and no more (%llu)",
      (unsigned long long) s.writeback_budget_bytes);

  struct store_writeback_budget bad[] = {
    { 4095, 0 }, { LIMIT_PER_DAY, 8191 },
    { STORE_MAX_WRITEBACK_BUDGET_BYTES + 1, 0 },
    { LIMIT_PER_DAY, STORE_MAX_WRITEBACK_BUDGET_BYTES + 1 },
  }, got;
  bool refused = true;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    refused &= store_set_writeback_budget (store, &bad[i]) == -EINVAL;
  store_get_writeback_budget (store, &got);
  ok (refused && got.limit_bytes_per_day == LIMIT_PER_DAY
      && got.burst_bytes == burst,
      "budgets out of bounds are refused and change nothing");

  struct store_writeback_budget off = { 0, 0 };
  r = store_set_writeback_budget (store, &off);
  if (r == 0)
    r = store_writeback (store, 0, 0, true, &result);
  store_stats (store, &s);
  ok (r == 0 && s.compressed_pages + s.huge_pages == 0
      && s.writeback_limit_bytes == 0 && s.writeback_budget_bytes == 0,
      "the budget lifted, every page goes (%llu on disk)",
      (unsigned long long) s.tiered_pages);
  struct store_writeback_budget on = { LIMIT_PER_DAY, 64 << 10 };
  r = store_set_writeback_budget (store, &on);
  store_stats (store, &s);
  ok (r == 0 && s.writeback_budget_bytes == 64 << 10,
      "set again, it starts full, at its new burst");
  ok (count_mismatches (store, reference) == 0, "and every page reads back");
  store_destroy (store);
  free (reference);
}

/* Writes every page of the device as its Nth version: returns the
 * writes refused.
 */
static uint64_t
write_device (struct store *store, unsigned char *reference, unsigned n)
{
  uint64_t refused = 0, errors = 0;

  for (uint64_t i = 0; i < DEVICE_PAGES; i++) {
    int r = write_kept (store, reference, i, n);
    refused += r == -ENOSPC;
    errors += r != 0 && r != -ENOSPC;
  }
  if (errors)
    diag ("%llu writes failed otherwise", (unsigned long long) errors);
  return refused + errors * DEVICE_PAGES;       /* fails the checks */
}

static void
check_pressure (bool background)
{
  const uint64_t limit = 256 << 10, burst = 64 << 10;
  const char *how = background ? "writer thread" : "no writer thread";
  struct store *store = make_store (limit, burst, 0);
  unsigned char *reference = calloc (DEVICE_PAGES, CSWAP_PAGE_SIZE);
  struct store_stats s;

  if (background && store_start_background (store) != 0)
    tap_bail_out ("store_start_background failed");
  uint64_t refused = write_device (store, reference, 0);
  store_stats (store, &s);
  ok (refused > 0 && refused < DEVICE_PAGES && s.failed_writes == refused
      && s.written_back_pages > 0 && s.written_back_bytes <= burst
      && s.writeback_budget_stops > 0,
      "%s: at the pool limit, writeback made room until the budget was "
      "spent (%llu bytes for %llu), then %llu writes were refused",
      how, (unsigned long long) s.written_back_bytes,
      (unsigned long long) burst, (unsigned long long) refused);
  ok (s.pool_peak_bytes <= limit, "%s: the pool never passed its limit "
      "(peak %llu for %llu)", how, (unsigned long long) s.pool_peak_bytes,
      (unsigned long long) limit);
  ok (count_mismatches (store, reference) == 0,
      "%s: every page written reads back, every refused one as zeros", how);

  uint64_t written_before = s.written_back_bytes;
  advance_clock (DAY_NS);
  uint64_t refused_again = write_device (store, reference, 1);
  store_stats (store, &s);
  ok (s.written_back_bytes > written_before
      && s.written_back_bytes <= 2 * burst
      && refused_again < DEVICE_PAGES && s.pool_peak_bytes <= limit,
      "%s: a day later writeback makes room again, within the refill "
      "(%llu bytes in all, %llu writes refused)", how,
      (unsigned long long) s.written_back_bytes,
      (unsigned long long) refused_again);
  ok (count_mismatches (store, reference) == 0,
      "%s: every page reads back as last written", how);
  store_destroy (store);
  free (reference);
}

/* Until the writeback budget has stopped STOPS batches. */
static bool
wait_for_stops (struct store *store, uint64_t stops)
{
  struct store_stats s;

  for (int ms = 0; ms < HANG_GUARD_MS; ms++) {
    store_stats (store, &s);
    if (s.writeback_budget_stops >= stops)
      return true;
    usleep (1000);
  }
  return false;
}

static void
test_read_writeback (void)
{
  const uint64_t burst = 64 << 10, half = DEVICE_PAGES / 2;
  struct store *store = make_store (0, burst, 1);
  unsigned char *reference = calloc (DEVICE_PAGES, CSWAP_PAGE_SIZE);
  unsigned char page[CSWAP_PAGE_SIZE];
  struct store_stats s;

  for (uint64_t i = 0; i < DEVICE_PAGES; i++)
    write_kept (store, reference, i, 0);
  for (uint64_t i = 0; i < half; i++)
    store_read (store, page, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE);
  if (store_start_background (store) != 0)
    tap_bail_out ("store_start_background failed");
  bool stopped = wait_for_stops (store, 1);
  store_stats (store, &s);
  ok (stopped && s.read_pages_written_back > 0
      && s.read_pages_written_back < half
      && spent_within (s.written_back_bytes, burst),
      "read writeback stops at the burst: %llu of %llu pages read went, "
      "%llu bytes for %llu", (unsigned long long) s.read_pages_written_back,
      (unsigned long long) half, (unsigned long long) s.written_back_bytes,
      (unsigned long long) burst);

  uint64_t went = s.read_pages_written_back;
  advance_clock (DAY_NS);
  for (uint64_t i = half; i < DEVICE_PAGES; i++)
    store_read (store, page, CSWAP_PAGE_SIZE, i * CSWAP_PAGE_SIZE);
  stopped = wait_for_stops (store, 2);
  store_stats (store, &s);
  ok (stopped && s.read_pages_written_back > went
      && s.written_back_bytes <= 2 * burst,
      "a day later it resumes, within the refill: %llu pages, %llu bytes "
      "in all", (unsigned long long) s.read_pages_written_back,
      (unsigned long long) s.written_back_bytes);
  ok (count_mismatches (store, reference) == 0, "every page reads back");
  store_destroy (store);
  free (reference);
}

int
main (void)
{
  backed_store_setup (&corpus, backing_path, sizeof backing_path,
                      "cswap-test-budget");
  test_command ();
  check_pressure (false);
  check_pressure (true);
  test_read_writeback ();
  unlink (backing_path);
  pagefile_free (&corpus);
  return tap_done ();
}
