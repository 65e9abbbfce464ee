/* cswap: a warning a minute while the device refuses writes (see
 * full-warning.h).  Lock-free: one compare-and-swap decides which thread
 * warns; the others return at once.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "full-warning.h"
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

static double
mib (uint64_t bytes)
{
  return bytes / 1048576.0;
}

static void
warn_no_memory (struct store *store)
{
  struct store_stats s;

  store_stats (store, &s);
  fprintf (stderr, "cswap: warning: no memory for the pool: %llu page "
           "writes refused so far; the machine had no free page for a new "
           "zspage within 10 seconds (pool %.1f MiB); the kernel keeps those "
           "pages in memory and retries them, and its OOM killer acts if "
           "nothing else can be freed\n",
           (unsigned long long) s.failed_writes, mib (s.pool_bytes));
}

void
full_warning_note (struct store *store, int result)
{
  if (result == -ENOMEM && warning_due (&last_no_memory_ns))
    warn_no_memory (store);
  if (result != -ENOSPC || !warning_due (&last_full_ns))
    return;

  struct store_stats s;
  store_stats (store, &s);
  fprintf (stderr, "cswap: warning: device full: %llu page writes refused "
           "so far (pool %.1f MiB of its %.1f MiB limit",
           (unsigned long long) s.failed_writes, mib (s.pool_bytes),
           mib (s.pool_limit_bytes));
  if (s.backing_size_bytes)
    fprintf (stderr, ", backing file %.1f MiB used of %.1f MiB",
             mib (s.backing_used_bytes), mib (s.backing_size_bytes));
  /* A spent budget, not the file, may be what stops writeback. */
  bool budget_spent = s.writeback_limit_bytes
    && s.writeback_budget_bytes < STORE_MIN_WRITEBACK_BUDGET_BYTES;
  if (budget_spent)
    fprintf (stderr, ", writeback budget of %.1f MiB a day spent",
             mib (s.writeback_limit_bytes));
  fprintf (stderr, "); the kernel keeps those pages in memory and retries "
           "them, so the workload may thrash: raise pool-limit%s, or add or "
           "enlarge the backing file\n",
           budget_spent ? " or writeback-limit" : "");
}
