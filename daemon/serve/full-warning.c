/* cswap: a warning a minute while the device refuses writes (see
 * full-warning.h).  Lock-free: one compare-and-swap decides which thread
 * warns; the others return at once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon-log.h"
#include "full-warning.h"
#include "mib-text.h"
#include "monotonic.h"

#define WARNING_INTERVAL_NS (60 * UINT64_C (1000000000))

/* When the last warning of each kind was printed; 0: never. */
static _Atomic uint64_t last_full_ns, last_no_memory_ns;

/* Whether this thread is the one to warn now, not within a minute of
 * the last warning *LAST_NS recorded.
 */
static bool
warning_due (_Atomic uint64_t *last_ns)
{
  uint64_t now = monotonic_ns ();
  uint64_t last = atomic_load_explicit (last_ns, memory_order_relaxed);

  return !(last && now - last < WARNING_INTERVAL_NS)
    && atomic_compare_exchange_strong (last_ns, &last, now);
}

/* The warnings are said from the thread that served the write: each is
 * built whole on its stack and said once through daemon_log, which never
 * waits (daemon-log.h); MiB are printed with integers (mib-text.h).
 */
#define WARNING_BYTES 512

static void
warn_no_memory (struct store *store)
{
  struct store_stats s;
  char pool[MIB_TEXT_BYTES];

  store_stats (store, &s);
  daemon_log ("cswap: warning: no memory for the pool: %llu page "
              "writes refused so far; the machine had no free page for a new "
              "zspage within 10 seconds (pool %s MiB); the kernel keeps those "
              "pages in memory and retries them, and its OOM killer acts if "
              "nothing else can be freed\n",
              (unsigned long long) s.failed_writes,
              mib_text (pool, s.pool_bytes));
}

/* Appends FMT to LINE, which holds *USED bytes of WARNING_BYTES. */
__attribute__ ((format (printf, 3, 4)))
static void
append (char *line, size_t *used, const char *fmt, ...)
{
  va_list ap;
  int n;

  if (*used >= WARNING_BYTES)
    return;
  va_start (ap, fmt);
  n = vsnprintf (line + *used, WARNING_BYTES - *used, fmt, ap);
  va_end (ap);
  if (n > 0)
    *used += n;
}

static void
warn_full (struct store *store)
{
  struct store_stats s;
  char line[WARNING_BYTES], a[MIB_TEXT_BYTES], b[MIB_TEXT_BYTES];
  size_t used = 0;

  store_stats (store, &s);
  append (line, &used, "cswap: warning: device full: %llu page writes "
          "refused so far (pool %s MiB of its %s MiB limit",
          (unsigned long long) s.failed_writes, mib_text (a, s.pool_bytes),
          mib_text (b, s.pool_limit_bytes));
  if (s.backing_size_bytes)
    append (line, &used, ", backing file %s MiB used of %s MiB",
            mib_text (a, s.backing_used_bytes),
            mib_text (b, s.backing_size_bytes));
  /* A spent budget, not the file, may be what stops writeback. */
  bool budget_spent = s.writeback_limit_bytes
    && s.writeback_budget_bytes < STORE_MIN_WRITEBACK_BUDGET_BYTES;
  if (budget_spent)
    append (line, &used, ", writeback budget of %s MiB a day spent",
            mib_text (a, s.writeback_limit_bytes));
  /* Writes refused because no batch came in time (writeback.c,
   * ROOM_WAIT_MS): the disk, not the sizes, may be what is short.
   */
  if (s.room_waits_expired)
    append (line, &used, ", %llu of them because writeback made no room "
            "within a second: a slow or stalled backing disk",
            (unsigned long long) s.room_waits_expired);
  append (line, &used, "); the kernel keeps those pages in memory and "
          "retries them, so the workload may thrash: raise pool-limit%s, or "
          "add or enlarge the backing file",
          budget_spent ? " or writeback-limit" : "");
  daemon_log ("%s\n", line);
}

void
full_warning_note (struct store *store, int result)
{
  if (result == -ENOMEM && warning_due (&last_no_memory_ns))
    warn_no_memory (store);
  if (result == -ENOSPC && warning_due (&last_full_ns))
    warn_full (store);
}
