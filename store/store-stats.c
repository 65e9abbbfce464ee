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

/* The backing file's share of *S (all 0 without one). */
static void
tier_share (struct tier *tier, struct store_stats *s)
{
  struct tier_stats t;

  if (tier == NULL)
    return;
  tier_stats (tier, &t);
  s->backing_size_bytes = t.size_bytes;
  s->backing_used_bytes = t.used_bytes;
  s->backing_live_bytes = t.live_bytes;
  s->written_back_bytes = t.bytes_written;
  s->writeback_batches = t.batches;
  s->uring_submissions = t.submissions;
  s->backing_io_errors = t.io_errors;
  s->backing_enospc_errors = t.enospc_errors;
  s->backing_checksum_errors = t.checksum_errors;
  s->backing_stale_records = t.stale_records;
}

void
store_stats (struct store *store, struct store_stats *s)
{
  struct zs_pool_stats pool;

  zs_pool_stats (store->slots.pool, &pool);
  *s = (struct store_stats) {
    .size_bytes = store->size_bytes,
    .same_filled_pages = counter_get (&store->count.same_filled_pages),
    .huge_pages = counter_get (&store->count.huge_pages),
    .compressed_pages = counter_get (&store->count.compressed_pages),
    .compressed_bytes = counter_get (&store->count.compressed_bytes),
    .pool_bytes = pool.pages_used * CSWAP_PAGE_SIZE,
    .metadata_bytes = slot_table_bytes (&store->slots.table)
                      + pool.metadata_bytes + sizeof *store,
    .pool_limit_bytes = pool_limit_bytes (&store->limit),
    .reads = counter_get (&store->count.reads),
    .writes = counter_get (&store->count.writes),
    .trims = counter_get (&store->count.trims),
    .failed_writes = counter_get (&store->count.failed_writes),
    .read_errors = counter_get (&store->count.read_errors),
    .pool_limit_hits = counter_get (&store->count.pool_limit_hits),
    .pool_peak_bytes = counter_get (&store->count.pool_peak_bytes),
    .tiered_pages = counter_get (&store->count.tiered_pages),
    .written_back_pages = counter_get (&store->count.written_back_pages),
    .written_back_reads = counter_get (&store->count.written_back_reads),
    .read_pages_written_back =
      counter_get (&store->count.read_pages_written_back),
    .writes_waited = counter_get (&store->count.writes_waited),
    .segments_cleaned = counter_get (&store->count.segments_cleaned),
    .writeback_budget_stops =
      counter_get (&store->count.writeback_budget_stops),
  };
  tier_share (store->slots.tier, s);
  if (store->writeback)
    writeback_budget_stats (store->writeback, s);
  s->deferred_pages = deferred_queued_pages (store->deferred);
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
