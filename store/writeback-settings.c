/* cswap: writeback — its settings: pages per batch and idle writeback.
 * (The pool limit and the accept threshold are pool-limit.c's.)
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
  atomic_init (&wb->batch_pages, pages);
  atomic_init (&wb->idle_seconds, config->idle_writeback_seconds);
  return 0;
}

int
store_set_writeback_batch (struct store *store, unsigned pages)
{
  if (store->writeback == NULL || pages < 1 || pages > STORE_MAX_WRITEBACK_BATCH)
    return -EINVAL;
  atomic_store (&store->writeback->batch_pages, pages);
  return 0;
}

unsigned
store_get_writeback_batch (struct store *store)
{
  return store->writeback ? atomic_load (&store->writeback->batch_pages) : 0;
}

int
store_set_idle_writeback (struct store *store, unsigned seconds)
{
  if (store->writeback == NULL || seconds > STORE_MAX_IDLE_WRITEBACK_S)
    return -EINVAL;
  atomic_store (&store->writeback->idle_seconds, seconds);
  return 0;
}

unsigned
store_get_idle_writeback (struct store *store)
{
  return store->writeback ? atomic_load (&store->writeback->idle_seconds) : 0;
}
