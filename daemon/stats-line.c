/* cswap: the exit stats line (see stats-line.h).
 *
 * Locking: none here; store_stats() reads the store's counters, each
 * atomically, so the line is a near-instant snapshot, not a consistent cut.
 */
#include "stats-line.h"

void
stats_line_print (FILE *f, struct store *store)
{
  struct store_stats s;

  store_stats (store, &s);
  fprintf (f, "cswap: stats pages_stored=%llu same_filled_pages=%llu "
           "huge_pages=%llu compressed_bytes=%llu pool_bytes=%llu "
           "metadata_bytes=%llu reads=%llu writes=%llu trims=%llu "
           "failed_writes=%llu read_errors=%llu pool_limit_hits=%llu "
           "pool_peak_bytes=%llu "
           "tiered_pages=%llu written_back_pages=%llu written_back_bytes=%llu "
           "written_back_reads=%llu read_pages_written_back=%llu "
           "backing_used_bytes=%llu "
           "backing_live_bytes=%llu writeback_batches=%llu "
           "uring_submissions=%llu writes_waited=%llu backing_io_errors=%llu "
           "backing_enospc_errors=%llu backing_checksum_errors=%llu "
           "backing_stale_records=%llu segments_cleaned=%llu "
           "writeback_budget_bytes=%llu writeback_budget_stops=%llu\n",
           (unsigned long long) s.pages_stored,
           (unsigned long long) s.same_filled_pages,
           (unsigned long long) s.huge_pages,
           (unsigned long long) s.compressed_bytes,
           (unsigned long long) s.pool_bytes,
           (unsigned long long) s.metadata_bytes,
           (unsigned long long) s.reads, (unsigned long long) s.writes,
           (unsigned long long) s.trims,
           (unsigned long long) s.failed_writes,
           (unsigned long long) s.read_errors,
           (unsigned long long) s.pool_limit_hits,
           (unsigned long long) s.pool_peak_bytes,
           (unsigned long long) s.tiered_pages,
           (unsigned long long) s.written_back_pages,
           (unsigned long long) s.written_back_bytes,
           (unsigned long long) s.written_back_reads,
           (unsigned long long) s.read_pages_written_back,
           (unsigned long long) s.backing_used_bytes,
           (unsigned long long) s.backing_live_bytes,
           (unsigned long long) s.writeback_batches,
           (unsigned long long) s.uring_submissions,
           (unsigned long long) s.writes_waited,
           (unsigned long long) s.backing_io_errors,
           (unsigned long long) s.backing_enospc_errors,
           (unsigned long long) s.backing_checksum_errors,
           (unsigned long long) s.backing_stale_records,
           (unsigned long long) s.segments_cleaned,
           (unsigned long long) s.writeback_budget_bytes,
           (unsigned long long) s.writeback_budget_stops);

  /* Request latency in the daemon, one group per kind (store.h). */
  static const char *const kinds[STORE_REQUEST_KINDS] = { "read", "write", "trim" };
  fprintf (f, "cswap: latency");
  for (int kind = 0; kind < STORE_REQUEST_KINDS; kind++) {
    struct latency_summary l;
    store_request_latency (store, kind, &l);
    fprintf (f, " %s_requests=%llu %s_mean_us=%.1f %s_p50_us=%.0f "
             "%s_p99_us=%.0f", kinds[kind], (unsigned long long) l.count,
             kinds[kind], l.mean_us, kinds[kind], l.p50_us, kinds[kind],
             l.p99_us);
  }
  fprintf (f, "\n");
}
