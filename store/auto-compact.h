/* cswap: compaction — every run the store makes, asked for or its own,
 * and the thread that compacts automatically (auto-compact.c).
 */
#ifndef CSWAP_AUTO_COMPACT_H
#define CSWAP_AUTO_COMPACT_H

#include <stdbool.h>

#include "store.h"
#include "zsmalloc.h"

struct auto_compact_config {
  struct zs_pool *pool;
  /* 0 (auto-compaction off) leaves the thread only writeback's requests. */
  unsigned threshold_percent;
};

struct auto_compact;

extern struct auto_compact *auto_compact_create (
  const struct auto_compact_config *config);
/* These are NULL-safe. */
extern void auto_compact_destroy (struct auto_compact *a);
extern int auto_compact_start (struct auto_compact *a);
extern void auto_compact_stop (struct auto_compact *a);
extern void auto_compact_stats (struct auto_compact *a, struct store_stats *s);
/* Compacts now, on this thread: 0, or -EBUSY when a compaction is
 * already running.  Every compaction the store runs goes through here.
 */
extern int auto_compact_run (struct auto_compact *a,
                             struct zs_compact_result *result);
/* Compaction soon: asks the thread, without waiting, or runs it here
 * when the thread is not running.
 */
extern void auto_compact_soon (struct auto_compact *a);

#endif /* CSWAP_AUTO_COMPACT_H */
