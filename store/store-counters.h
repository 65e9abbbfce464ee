/* cswap: the store's counters, shared by the files that count (the data
 * path, slot-state.c, the writeback files) and read by store-stats.c.
 * Relaxed atomics (counter.h): no lock guards them.
 */
#ifndef CSWAP_STORE_COUNTERS_H
#define CSWAP_STORE_COUNTERS_H

#include <stdatomic.h>

#include "counter.h"

struct store_counters {
  atomic_uint_fast64_t same_filled_pages, huge_pages, compressed_pages;
  atomic_uint_fast64_t tiered_pages;
  atomic_uint_fast64_t compressed_bytes;
  atomic_uint_fast64_t reads, writes, trims;
  atomic_uint_fast64_t failed_writes, read_errors, pool_limit_hits;
  atomic_uint_fast64_t written_back_pages, written_back_reads;
  atomic_uint_fast64_t read_pages_written_back;
  atomic_uint_fast64_t writes_waited, segments_cleaned;
  atomic_uint_fast64_t writeback_budget_stops;
  atomic_uint_fast64_t pool_peak_bytes;
};

#endif /* CSWAP_STORE_COUNTERS_H */
