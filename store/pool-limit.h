/* cswap: the pool limit and its accept threshold (pool-limit.c). */
#ifndef CSWAP_POOL_LIMIT_H
#define CSWAP_POOL_LIMIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "zsmalloc.h"

struct pool_limit {
  struct zs_pool *pool;                 /* set at creation */
  atomic_uint_fast64_t limit_bytes;     /* relaxed atomic; 0: none */
  atomic_uint_fast64_t charged_bytes;   /* relaxed atomic: memory besides
                                           the pool's pages it counts */
  _Atomic unsigned accept_percent;      /* relaxed atomic; 1..100 */
};

/* 0, or at least STORE_MIN_POOL_LIMIT_BYTES. */
extern bool pool_limit_valid (uint64_t bytes);
/* The limit of POOL; BYTES must be valid. */
extern void pool_limit_init (struct pool_limit *limit, struct zs_pool *pool,
                             uint64_t bytes);
/* 0, or -EINVAL (and nothing changed) for an invalid limit. */
extern int pool_limit_set (struct pool_limit *limit, uint64_t bytes);
extern uint64_t pool_limit_bytes (struct pool_limit *limit);
/* What the limit counts: the pool's pages, and what was charged. */
extern uint64_t pool_limit_used_bytes (struct pool_limit *limit);
/* The pool's pages alone, in bytes. */
extern uint64_t pool_limit_pool_bytes (struct pool_limit *limit);
/* Memory besides the pool's pages that the limit counts from now on
 * (BYTES < 0: no longer): the slot table's chunks.  No check: see
 * pool_limit_has_room_bytes first.
 */
extern void pool_limit_charge (struct pool_limit *limit, int64_t bytes);
/* Whether BYTES more fit below the limit. */
extern bool pool_limit_has_room_bytes (struct pool_limit *limit,
                                       uint64_t bytes);
/* Whether PAGES more pool pages fit below the limit. */
extern bool pool_limit_has_room (struct pool_limit *limit, unsigned pages);
/* Not one page more fits: a batch is followed by compaction at once. */
extern bool pool_limit_reached (struct pool_limit *limit);
/* At or above the start watermark (START_PERCENT of the limit, or the
 * accept threshold if higher): the writer starts, before anyone waits.
 */
extern bool pool_limit_writeback_due (struct pool_limit *limit);
/* At or above the accept threshold: the writer goes on. */
extern bool pool_limit_above_threshold (struct pool_limit *limit);
/* Whether a page of LENGTH read back from disk should come back into
 * memory: only below the threshold.
 */
extern bool pool_limit_may_promote (struct pool_limit *limit, uint32_t length);
/* The accept threshold (0: 90%); -EINVAL past 100. */
extern int pool_limit_threshold_init (struct pool_limit *limit,
                                      unsigned percent);
/* 1..100, else -EINVAL and nothing changed. */
extern int pool_limit_set_threshold (struct pool_limit *limit,
                                     unsigned percent);
extern unsigned pool_limit_threshold (struct pool_limit *limit);

#endif /* CSWAP_POOL_LIMIT_H */
