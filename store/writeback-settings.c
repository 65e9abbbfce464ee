/* cswap: writeback — its settings: pages per batch and idle writeback.
 * (The pool limit and the accept threshold are pool-limit.c's; the
 * store's setters, which refuse them without a writer, store-settings.c.)
 *
 * Threads: atomics, read by the writer on every batch; no lock.
 */
#include <errno.h>

#include "writeback-internal.h"

#define DEFAULT_BATCH_PAGES 64

int
writeback_settings_init (struct writeback *wb,
                         const struct store_config *config)
{
  unsigned pages = config->writeback_batch_pages
    ? config->writeback_batch_pages : DEFAULT_BATCH_PAGES;

  if (pages > STORE_MAX_WRITEBACK_BATCH
      || config->idle_writeback_seconds > STORE_MAX_IDLE_WRITEBACK_S)
    return -EINVAL;
  tier_batch_prefault (wb->batch, pages);
  atomic_init (&wb->batch_pages, pages);
  atomic_init (&wb->idle_seconds, config->idle_writeback_seconds);
  return 0;
}

int
writeback_set_batch (struct writeback *wb, unsigned pages)
{
  if (pages < 1 || pages > STORE_MAX_WRITEBACK_BATCH)
    return -EINVAL;
  /* Before the writer may fill that much (common/prefault.h). */
  tier_batch_prefault (wb->batch, pages);
  atomic_store (&wb->batch_pages, pages);
  return 0;
}

unsigned
writeback_batch (struct writeback *wb)
{
  return atomic_load (&wb->batch_pages);
}

int
writeback_set_idle (struct writeback *wb, unsigned seconds)
{
  if (seconds > STORE_MAX_IDLE_WRITEBACK_S)
    return -EINVAL;
  atomic_store (&wb->idle_seconds, seconds);
  return 0;
}

unsigned
writeback_idle (struct writeback *wb)
{
  return atomic_load (&wb->idle_seconds);
}
