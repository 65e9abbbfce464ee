/* cswap: the store's counters, shared by the files that count (the data
 * path, slot-state.c, the writeback files) and read by store-stats.c.
 * Relaxed atomics (counter.h): no lock guards them.
 */
#ifndef CSWAP_STORE_COUNTERS_H
#define CSWAP_STORE_COUNTERS_H

#include <stdatomic.h>

#include "counter.h"

/* One atomic for each STORE_STAT_COUNTED row of store-stats.def. */
struct store_counters {
#define STORE_STAT_COUNTED(name, kind, line, help) atomic_uint_fast64_t name;
#include "store-stats.def"
};

#endif /* CSWAP_STORE_COUNTERS_H */
