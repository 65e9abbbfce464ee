/* cswap: writeback — the budget: so many bytes a day to the backing file.
 *
 * Backing files often live on flash, which wears with every write; zram
 * has writeback_limit, and ChromeOS bounds zram's writeback per day.  Here
 * a token bucket (token-bucket.h) in bytes, refilled continuously at
 * writeback-limit / 86400 bytes a second up to writeback-burst (default: a
 * day's limit), starting full, gates every batch written to the backing
 * file, whichever path writes it: pressure at the pool limit, idle and
 * read writeback, `cswapctl writeback`, and the cleaner, which only runs
 * ahead of a batch.
 *
 *   - Before a batch (writeback_budget_check): it starts only if the
 *     budget holds STORE_MIN_WRITEBACK_BUDGET_BYTES, what the largest
 *     page takes on disk; else -EDQUOT, counted as a stop, and nothing is
 *     written, not even the cleaner's copies.
 *   - After the cleaner (writeback_budget_cap): the batch is capped
 *     (tier_batch_limit_bytes) at what is left, so its records and
 *     padding never take it past the budget.
 *   - After each write (writeback_budget_charge): what the tier wrote
 *     (its bytes_written, the cleaner's copies included) is taken from
 *     the budget, so the budget and written_back_bytes count the same
 *     bytes.  Only the cleaner can overdraw it, by what one cleaning pass
 *     copies (it cannot know beforehand); the refill pays that debt first.
 *
 * Spent, the budget stops writeback and pages stay in memory.  Writes to
 * the pool go on as the pool's own rules allow: below its limit they
 * succeed; at it, a write that needs room gets the answer it gets when
 * writeback cannot make room (the file full or failing): the pool is
 * compacted, and if that frees no room the write fails with ENOSPC, as it
 * does on a full pool without a backing file, and the kernel keeps the
 * page in memory.  No write waits for the refill: a swap-out held for
 * hours would hang the machine.  Nothing already stored is lost or moved.
 *
 * Locks: the budget lock (writeback-internal.h), a leaf, under the
 * writeback mutex for the batcher, alone for the setters and the stats;
 * the tier's counters are read before it is taken.  Lock order:
 * lock-order.h.
 */
#include <errno.h>

#include "monotonic.h"
#include "writeback-internal.h"

_Static_assert (STORE_MIN_WRITEBACK_BUDGET_BYTES == 2 * TIER_BLOCK_BYTES,
                "the largest record starts a batch on a block and spans "
                "two at most (tier.h)");
_Static_assert (STORE_MAX_WRITEBACK_BUDGET_BYTES <= TOKEN_BUCKET_MAX,
                "the bucket's bounds");

/* The budget lock, a leaf (lock-order.h). */
static void
budget_lock (struct writeback *wb)
{
  lock_acquire (&wb->budget_lock, LOCK_RANK_LEAF);
}

static void
budget_unlock (struct writeback *wb)
{
  lock_release (&wb->budget_lock);
}

static bool
budget_bytes_valid (uint64_t bytes)
{
  return bytes == 0 || (bytes >= STORE_MIN_WRITEBACK_BUDGET_BYTES
                        && bytes <= STORE_MAX_WRITEBACK_BUDGET_BYTES);
}

static bool
budget_valid (const struct store_writeback_budget *budget)
{
  return budget_bytes_valid (budget->limit_bytes_per_day)
    && budget_bytes_valid (budget->burst_bytes);
}

/* The bucket's burst: a day's limit unless given. */
static uint64_t
burst_bytes (const struct store_writeback_budget *budget)
{
  return budget->burst_bytes ? budget->burst_bytes
    : budget->limit_bytes_per_day;
}

static uint64_t
budget_now_ns (struct writeback *wb)
{
  return wb->budget_clock ? wb->budget_clock (wb->budget_clock_arg)
    : monotonic_ns ();
}

/* Bytes the budget allows now: UINT64_MAX without one. */
static uint64_t
budget_available (struct writeback *wb)
{
  uint64_t now = budget_now_ns (wb);

  budget_lock (wb);
  uint64_t bytes = token_bucket_available (&wb->budget, now);
  budget_unlock (wb);
  return bytes;
}

static uint64_t
tier_bytes_written (struct writeback *wb)
{
  struct tier_stats t;

  tier_stats (wb->tier, &t);
  return t.bytes_written;
}

int
writeback_budget_init (struct writeback *wb, const struct store_config *config)
{
  const struct store_writeback_budget *budget = &config->writeback_budget;

  if (!budget_valid (budget))
    return -EINVAL;
  wb->budget_clock = config->budget_clock;
  wb->budget_clock_arg = config->budget_clock_arg;
  wb->budget_charged_bytes = tier_bytes_written (wb);
  wb->budget_setting = *budget;
  token_bucket_init (&wb->budget, budget->limit_bytes_per_day,
                     burst_bytes (budget), budget_now_ns (wb));
  return 0;
}

int
writeback_budget_check (struct writeback *wb)
{
  lock_assert_held (&wb->mutex);
  if (budget_available (wb) >= STORE_MIN_WRITEBACK_BUDGET_BYTES)
    return 0;
  counter_add (&wb->count->writeback_budget_stops, 1);
  return -EDQUOT;
}

void
writeback_budget_charge (struct writeback *wb)
{
  lock_assert_held (&wb->mutex);
  uint64_t written = tier_bytes_written (wb);
  uint64_t now = budget_now_ns (wb);

  budget_lock (wb);
  token_bucket_take (&wb->budget, written - wb->budget_charged_bytes, now);
  budget_unlock (wb);
  wb->budget_charged_bytes = written;
}

void
writeback_budget_cap (struct writeback *wb)
{
  writeback_budget_charge (wb);
  tier_batch_limit_bytes (wb->batch, budget_available (wb));
}

void
writeback_budget_stats (struct writeback *wb, struct store_stats *s)
{
  uint64_t now = budget_now_ns (wb);

  budget_lock (wb);
  s->writeback_limit_bytes = wb->budget_setting.limit_bytes_per_day;
  if (s->writeback_limit_bytes)
    s->writeback_budget_bytes = token_bucket_available (&wb->budget, now);
  budget_unlock (wb);
}

int
writeback_set_budget (struct writeback *wb,
                      const struct store_writeback_budget *budget)
{
  if (!budget_valid (budget))
    return -EINVAL;
  uint64_t now = budget_now_ns (wb);
  budget_lock (wb);
  wb->budget_setting = *budget;
  token_bucket_change (&wb->budget, budget->limit_bytes_per_day,
                       burst_bytes (budget), now);
  budget_unlock (wb);
  return 0;
}

void
writeback_budget (struct writeback *wb, struct store_writeback_budget *budget)
{
  budget_lock (wb);
  *budget = wb->budget_setting;
  budget_unlock (wb);
}
