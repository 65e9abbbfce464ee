/* cswap: the store's statistics (store_stats) and request latency.
 *
 * Counters are relaxed atomics (store-counters.h): each is exact, a
 * snapshot of several is not simultaneous.  store_stats also takes every
 * allocator class lock (zs_pool_stats), the tier's lock and the
 * writeback budget's, one after another; no slot lock.
 */
#include "page.h"
#include "store-internal.h"

uint64_t
store_pages_stored (struct store *store)
{
  return counter_get (&store->count.same_filled_pages)
    + counter_get (&store->count.huge_pages)
    + counter_get (&store->count.compressed_pages)
    + counter_get (&store->count.tiered_pages);
}

/* The backing file's share of *S: its STORE_STAT_TIER rows (all 0
 * without one).
 */
static void
tier_share (struct tier *tier, struct store_stats *s)
{
  struct tier_stats t;

  if (tier == NULL)
    return;
  tier_stats (tier, &t);
#define STORE_STAT_TIER(name, member, kind, line, help) s->name = t.member;
#include "store-stats.def"
}

/* The STORE_STAT_COUNTED rows are copied; the STORE_STAT_SET ones are
 * worked out here or by their parts.
 */
void
store_stats (struct store *store, struct store_stats *s)
{
  struct zs_pool_stats pool;

  zs_pool_stats (store->slots.pool, &pool);
  *s = (struct store_stats) {
#define STORE_STAT_COUNTED(name, kind, line, help) \
    .name = counter_get (&store->count.name),
#include "store-stats.def"
    .size_bytes = store->size_bytes,
    .pool_bytes = pool.pages_used * CSWAP_PAGE_SIZE,
    .metadata_bytes = slot_table_bytes (&store->slots.table)
                      + pool.metadata_bytes + sizeof *store,
    .pool_limit_bytes = pool_limit_bytes (&store->limit),
    .pool_limit_default = atomic_load (&store->pool_limit_default),
  };
  tier_share (store->slots.tier, s);
  if (store->writeback)
    writeback_budget_stats (store->writeback, s);
  s->deferred_pages = deferred_queued_pages (store->deferred);
  s->recompress_passes = recompress_passes (store->recompress);
  auto_compact_stats (store->compactor, s);
  s->pages_stored = store_pages_stored (store);
  s->original_bytes = s->pages_stored * CSWAP_PAGE_SIZE;
}

void
store_note_request (struct store *store, enum store_request kind, uint64_t ns)
{
  latency_record (&store->request_latency[kind], ns);
}

void
store_request_latency (struct store *store, enum store_request kind,
                       struct latency_summary *summary)
{
  latency_summarise (&store->request_latency[kind], summary);
}
