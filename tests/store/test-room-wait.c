/* cswap: store/ — a write at the pool's limit waits for writeback a
 * bounded time, never without bound (writeback.c, ROOM_WAIT_MS).
 *
 *   - writeback stalled: every batch's submission is held at a gate
 *     (tier_batch_submit wrapped, -Wl,--wrap in tests/store/meson.build),
 *     as when the batch's O_DIRECT write waits for a bio the kernel's
 *     swap-out requests hold (the VM's "deadlock B").  A writer fills the
 *     pool; the write that finds it at its limit must return ENOSPC, with
 *     the gate still shut.  The old store waited for the batch forever.
 *   - writeback working, the accept threshold at 100% so that nothing
 *     moves before the limit: writes at the limit wait for a batch and
 *     succeed, three pools' worth, none refused, none timed out.
 *
 * The hang guard (HANG_GUARD_S) is no timing threshold: a bounded write
 * is refused within a second; a writer still stuck when the guard
 * expires is one that waits without bound.  The guard then opens the
 * gate so that the test ends, and fails.  Every page accepted reads back
 * byte-exact.  Backing files go under $CSWAP_TIER_DIR or /var/tmp
 * (O_DIRECT needs a real filesystem).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "page.h"
#include "store.h"
#include "tap.h"

#define POOL_LIMIT (1u << 20)
#define DEVICE_PAGES 2048u
#define HANG_GUARD_S 120

static char backing_path[256];

/* The gate: while shut, every batch submission waits at it. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_changed = PTHREAD_COND_INITIALIZER;
static bool gate_shut;
static unsigned submits_held;   /* submissions that waited at the gate */

struct tier;
struct tier_batch;
extern int __real_tier_batch_submit (struct tier *tier,
                                     struct tier_batch *batch);
extern int __wrap_tier_batch_submit (struct tier *tier,
                                     struct tier_batch *batch);

int
__wrap_tier_batch_submit (struct tier *tier, struct tier_batch *batch)
{
  pthread_mutex_lock (&gate_lock);
  if (gate_shut)
    submits_held++;
  while (gate_shut)
    pthread_cond_wait (&gate_changed, &gate_lock);
  pthread_mutex_unlock (&gate_lock);
  return __real_tier_batch_submit (tier, batch);
}

static void
set_gate (bool shut)
{
  pthread_mutex_lock (&gate_lock);
  gate_shut = shut;
  pthread_cond_broadcast (&gate_changed);
  pthread_mutex_unlock (&gate_lock);
}

/* Half noise, half zeros: about 2 KiB compressed, so the device is four
 * pools' worth.
 */
static void
make_page (uint64_t *rng, unsigned char *page)
{
  for (unsigned i = 0; i < CSWAP_PAGE_SIZE / 2; i += 8) {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    memcpy (page + i, rng, 8);
  }
  memset (page + CSWAP_PAGE_SIZE / 2, 0, CSWAP_PAGE_SIZE / 2);
}

struct writer {
  struct store *store;
  unsigned rounds;              /* passes over the device */
  bool stop_at_refusal;
  unsigned char *reference;     /* DEVICE_PAGES pages */
  bool *written;
  unsigned long accepted, refused;
  int first_refusal;
  /* Under done_lock: */
  pthread_mutex_t done_lock;
  pthread_cond_t done_changed;
  bool done;
};

static void *
write_pages (void *opaque)
{
  struct writer *w = opaque;
  unsigned char page[CSWAP_PAGE_SIZE];
  uint64_t rng = 88172645463325252ull;

  for (uint64_t i = 0; i < (uint64_t) w->rounds * DEVICE_PAGES; i++) {
    uint64_t slot = i % DEVICE_PAGES;
    make_page (&rng, page);
    int r = store_write (w->store, page, CSWAP_PAGE_SIZE,
                         slot * CSWAP_PAGE_SIZE);
    if (r == 0) {
      memcpy (w->reference + slot * CSWAP_PAGE_SIZE, page, CSWAP_PAGE_SIZE);
      w->written[slot] = true;
      w->accepted++;
      continue;
    }
    if (w->refused++ == 0)
      w->first_refusal = r;
    if (w->stop_at_refusal)
      break;
  }
  pthread_mutex_lock (&w->done_lock);
  w->done = true;
  pthread_cond_broadcast (&w->done_changed);
  pthread_mutex_unlock (&w->done_lock);
  return NULL;
}

/* Runs W to its end; false when the hang guard expired first. */
static bool
run_writer (struct writer *w)
{
  struct timespec deadline;
  pthread_t thread;
  bool in_time = true;

  pthread_mutex_init (&w->done_lock, NULL);
  pthread_cond_init (&w->done_changed, NULL);
  pthread_create (&thread, NULL, write_pages, w);
  clock_gettime (CLOCK_REALTIME, &deadline);
  deadline.tv_sec += HANG_GUARD_S;
  pthread_mutex_lock (&w->done_lock);
  while (!w->done && in_time)
    in_time = pthread_cond_timedwait (&w->done_changed, &w->done_lock,
                                      &deadline) != ETIMEDOUT;
  pthread_mutex_unlock (&w->done_lock);
  if (!in_time) {
    diag ("hang guard: the writer is stuck after %lu writes; "
          "opening the gate", w->accepted);
    set_gate (false);
  }
  pthread_join (thread, NULL);
  pthread_cond_destroy (&w->done_changed);
  pthread_mutex_destroy (&w->done_lock);
  return in_time;
}

static unsigned long
count_mismatches (struct store *store, const struct writer *w)
{
  unsigned char page[CSWAP_PAGE_SIZE];
  unsigned long bad = 0;

  for (uint64_t slot = 0; slot < DEVICE_PAGES; slot++)
    if (w->written[slot]
        && (store_read (store, page, CSWAP_PAGE_SIZE, slot * CSWAP_PAGE_SIZE)
            || memcmp (page, w->reference + slot * CSWAP_PAGE_SIZE,
                       CSWAP_PAGE_SIZE)))
      bad++;
  return bad;
}

static struct store *
make_store (unsigned accept_percent)
{
  struct store_config config = {
    .size_bytes = (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, 0 },
    .pool_limit_bytes = POOL_LIMIT,
    .accept_threshold_percent = accept_percent,
    .backing_path = backing_path,
    .backing_size_bytes = 32 << 20,
    .writeback_batch_pages = 16,
  };
  struct store *store;

  unlink (backing_path);
  store = store_create (&config);
  if (store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  if (store_start_background (store) != 0)
    tap_bail_out ("store_start_background failed");
  return store;
}

static struct writer *
make_writer (struct store *store, unsigned rounds, bool stop_at_refusal)
{
  struct writer *w = calloc (1, sizeof *w);

  w->store = store;
  w->rounds = rounds;
  w->stop_at_refusal = stop_at_refusal;
  w->reference = calloc (DEVICE_PAGES, CSWAP_PAGE_SIZE);
  w->written = calloc (DEVICE_PAGES, sizeof *w->written);
  if (w->reference == NULL || w->written == NULL)
    tap_bail_out ("out of memory");
  return w;
}

static void
free_writer (struct writer *w)
{
  free (w->reference);
  free (w->written);
  free (w);
}

static void
test_writeback_stalled (void)
{
  struct store *store = make_store (0);
  struct writer *w = make_writer (store, 1, true);
  struct store_stats s;

  set_gate (true);
  bool in_time = run_writer (w);
  pthread_mutex_lock (&gate_lock);
  bool still_shut = gate_shut;
  unsigned held = submits_held;
  pthread_mutex_unlock (&gate_lock);
  store_stats (store, &s);
  ok (in_time && still_shut && w->refused > 0
      && w->first_refusal == -ENOSPC,
      "writeback stalled (%u submissions held): the write at the limit is "
      "refused with ENOSPC, not left waiting (%lu accepted, first refusal "
      "%d, %s)", held, w->accepted, w->first_refusal,
      in_time ? "in time" : "HUNG until the guard opened the gate");
  ok (held > 0 && s.room_waits_expired > 0,
      "it was the bound that refused it: a batch was held, %llu waits "
      "expired", (unsigned long long) s.room_waits_expired);
  ok (s.pool_peak_bytes <= POOL_LIMIT, "the pool never passed its limit "
      "(peak %llu bytes)", (unsigned long long) s.pool_peak_bytes);
  set_gate (false);
  ok (count_mismatches (store, w) == 0,
      "the gate opened, every page accepted reads back");
  store_destroy (store);
  free_writer (w);
}

static void
test_writeback_working (void)
{
  struct store *store = make_store (100);
  struct writer *w = make_writer (store, 3, false);
  struct store_stats s;

  bool in_time = run_writer (w);
  store_stats (store, &s);
  ok (in_time && w->refused == 0 && s.writes_waited > 0
      && s.written_back_pages > 0 && s.room_waits_expired == 0,
      "writeback working: writes at the limit wait for a batch and succeed "
      "(%lu accepted, %lu refused, %llu waited, %llu pages written back, "
      "%llu waits expired)", w->accepted, w->refused,
      (unsigned long long) s.writes_waited,
      (unsigned long long) s.written_back_pages,
      (unsigned long long) s.room_waits_expired);
  ok (s.pool_peak_bytes <= POOL_LIMIT && count_mismatches (store, w) == 0,
      "the pool stayed within its limit (peak %llu bytes) and every page "
      "reads back", (unsigned long long) s.pool_peak_bytes);
  store_destroy (store);
  free_writer (w);
}

/* The writer thread starts at the start watermark, woken by the write
 * that finds the pool there: with the default accept threshold (90%),
 * writes that stop at 95% of the limit see pages written back with no
 * write having waited.  Bounded by EARLY_BOUND_S, a hang guard: the
 * kicked writer starts at once; without the kick it slept until a write
 * met the limit.
 */
#define EARLY_BOUND_S 30

static void
test_writer_starts_early (void)
{
  struct store *store = make_store (0);
  unsigned char page[CSWAP_PAGE_SIZE];
  uint64_t rng = 88172645463325252ull;
  struct store_stats s = { 0 };
  uint64_t slot = 0;

  for (; slot < DEVICE_PAGES; slot++) {
    make_page (&rng, page);
    if (store_write (store, page, CSWAP_PAGE_SIZE, slot * CSWAP_PAGE_SIZE))
      break;
    store_stats (store, &s);
    if (s.pool_bytes >= POOL_LIMIT / 100 * 95)
      break;
  }
  diag ("stopped after %llu pages, pool %llu of %u bytes",
        (unsigned long long) slot + 1, (unsigned long long) s.pool_bytes,
        POOL_LIMIT);
  for (unsigned i = 0; i < EARLY_BOUND_S * 10 && s.written_back_pages == 0;
       i++) {
    struct timespec pause = { 0, 100000000 };

    nanosleep (&pause, NULL);
    store_stats (store, &s);
  }
  ok (s.written_back_pages > 0 && s.writes_waited == 0,
      "at 95%% of the limit the writer starts by itself: %llu pages "
      "written back, %llu writes waited",
      (unsigned long long) s.written_back_pages,
      (unsigned long long) s.writes_waited);
  store_destroy (store);
}

int
main (void)
{
  const char *dir = getenv ("CSWAP_TIER_DIR");

  snprintf (backing_path, sizeof backing_path, "%s/cswap-test-room-wait.%d",
            dir ? dir : "/var/tmp", (int) getpid ());
  test_writeback_stalled ();
  test_writeback_working ();
  test_writer_starts_early ();
  unlink (backing_path);
  return tap_done ();
}
