/* cswap: the store's settings — the codec for new pages, recompression
 * (recompress.c's, under its own lock), the pool limit
 * and accept threshold (pool-limit.c's), the writer's batch size and
 * idle writeback (writeback-settings.c's), and the writeback budget
 * (writeback-budget.c's).  Settings of the writer are refused without a
 * backing file (-EINVAL), and read as 0.
 *
 * Threads: every setting but the budget is a relaxed atomic, read where
 * it is used; the budget is under its own lock (writeback-internal.h).
 */
#include <errno.h>
#include <string.h>

#include "store-internal.h"

int
store_set_codec (struct store *store, const struct codec_config *codec)
{
  if (!store_codec_valid (codec))
    return -EINVAL;
  store_codec_set_now (store, codec);
  return 0;
}

void
store_get_codec (struct store *store, struct codec_config *codec)
{
  *codec = store_codec_now (store);
}

int
store_set_recompress (struct store *store,
                      const struct store_recompress *settings)
{
  return recompress_set (store->recompress, settings);
}

void
store_get_recompress (struct store *store, struct store_recompress *settings)
{
  recompress_get (store->recompress, settings);
}

int
store_recompress_now (struct store *store, uint64_t *pages)
{
  return recompress_pass (store->recompress, pages);
}

/* zstd only: lz4 makes almost no zstd page smaller, so a cold lz4 would
 * decompress and compress every page at every pass for nothing (a page
 * the cold codec does not shrink stays as it was, and is tried again).
 */
int
store_recompress_parse_codec (const char *name, struct store_recompress *settings)
{
  if (strcmp (name, "none") == 0) {
    settings->enabled = false;
    return 0;
  }
  if (strcmp (name, "zstd") != 0)
    return -1;
  settings->enabled = true;
  settings->cold = (struct codec_config) { CODEC_ZSTD,
                                           codec_default_level (CODEC_ZSTD) };
  return 0;
}

const char *
store_recompress_codec_name (const struct store_recompress *settings)
{
  return settings->enabled ? codec_name (settings->cold.id) : "none";
}

int
store_set_pool_limit (struct store *store, uint64_t bytes)
{
  int r = pool_limit_set (&store->limit, bytes);

  /* Set, even to the same figure, it is the user's now. */
  if (r == 0)
    atomic_store (&store->pool_limit_default, false);
  return r;
}

int
store_set_accept_threshold (struct store *store, unsigned percent)
{
  if (store->writeback == NULL)
    return -EINVAL;
  return pool_limit_set_threshold (&store->limit, percent);
}

unsigned
store_get_accept_threshold (struct store *store)
{
  return store->writeback ? pool_limit_threshold (&store->limit) : 0;
}

int
store_set_writeback_batch (struct store *store, unsigned pages)
{
  if (store->writeback == NULL)
    return -EINVAL;
  return writeback_set_batch (store->writeback, pages);
}

unsigned
store_get_writeback_batch (struct store *store)
{
  return store->writeback ? writeback_batch (store->writeback) : 0;
}

int
store_set_idle_writeback (struct store *store, unsigned seconds)
{
  if (store->writeback == NULL)
    return -EINVAL;
  return writeback_set_idle (store->writeback, seconds);
}

unsigned
store_get_idle_writeback (struct store *store)
{
  return store->writeback ? writeback_idle (store->writeback) : 0;
}

int
store_set_writeback_budget (struct store *store,
                            const struct store_writeback_budget *budget)
{
  if (store->writeback == NULL)
    return -EINVAL;
  return writeback_set_budget (store->writeback, budget);
}

void
store_get_writeback_budget (struct store *store,
                            struct store_writeback_budget *budget)
{
  *budget = (struct store_writeback_budget) { 0 };
  if (store->writeback)
    writeback_budget (store->writeback, budget);
}
