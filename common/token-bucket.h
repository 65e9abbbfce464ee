/* cswap: a token bucket — so many tokens a day, in bursts of at most so
 * many.
 *
 * The bucket holds up to BURST tokens and is refilled continuously at
 * PER_DAY / 86400 tokens a second, whole tokens only: the fraction not
 * yet a whole token is kept (in token-milliseconds), so that refills
 * taken every millisecond add up to exactly as much as one taken a day
 * later.  Nothing accrues while the bucket is full.  A take may overdraw
 * it: the tokens go below zero, and the refill pays the debt before
 * anything is available again (the writeback budget takes what a batch
 * did write, which it cannot always know to the byte beforehand).  A
 * bucket made or changed with PER_DAY 0 has no limit: every token is
 * available, and takes are not counted.
 *
 * Time is whatever monotonic clock the caller reads, in nanoseconds;
 * every call that can refill takes the time, so a test brings its own.
 *
 * The arithmetic stays in 64 bits: PER_DAY and BURST are at most
 * TOKEN_BUCKET_MAX, a refill is summed in steps whose product fits, and
 * each step adds at least 2^64 / 86,400,000 tokens (2e11), so filling the
 * largest bucket from its largest debt takes at most about 1300 steps.
 *
 * Threads: none; the caller locks.
 */
#ifndef CSWAP_TOKEN_BUCKET_H
#define CSWAP_TOKEN_BUCKET_H

#include <stdint.h>

/* The most tokens a day, and the largest burst: 2^47 (128 Ti). */
#define TOKEN_BUCKET_MAX (UINT64_C (1) << 47)

struct token_bucket {
  uint64_t per_day;             /* 0: no limit */
  uint64_t burst;               /* the most it holds */
  int64_t tokens;               /* below 0 after an overdraw, at least
                                   -TOKEN_BUCKET_MAX */
  uint64_t remainder;           /* per_day x ms not yet a whole token */
  uint64_t refilled_ns;         /* the time the tokens were counted to */
};

/* A full bucket (PER_DAY and BURST at most TOKEN_BUCKET_MAX). */
extern void token_bucket_init (struct token_bucket *b, uint64_t per_day,
                               uint64_t burst, uint64_t now_ns);
/* New rate and burst, from NOW_NS: what accrued at the old rate is kept,
 * up to the new burst, and a debt with it.  A bucket that had no limit
 * starts full.
 */
extern void token_bucket_change (struct token_bucket *b, uint64_t per_day,
                                 uint64_t burst, uint64_t now_ns);
/* The tokens there at NOW_NS: 0 while in debt, UINT64_MAX with no limit. */
extern uint64_t token_bucket_available (struct token_bucket *b,
                                        uint64_t now_ns);
/* Takes COUNT tokens at NOW_NS, overdrawing if there are fewer (a debt
 * past TOKEN_BUCKET_MAX is not kept).
 */
extern void token_bucket_take (struct token_bucket *b, uint64_t count,
                               uint64_t now_ns);

#endif /* CSWAP_TOKEN_BUCKET_H */
