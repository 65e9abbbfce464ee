/* cswap: a token bucket (see token-bucket.h). */
#include "token-bucket.h"

#define NS_PER_MS UINT64_C (1000000)
#define MS_PER_DAY UINT64_C (86400000)

static int64_t
burst_tokens (const struct token_bucket *b)
{
  return (int64_t) b->burst;
}

void
token_bucket_init (struct token_bucket *b, uint64_t per_day, uint64_t burst,
                   uint64_t now_ns)
{
  *b = (struct token_bucket) { .per_day = per_day, .burst = burst,
                               .tokens = (int64_t) burst,
                               .refilled_ns = now_ns };
}

/* Counts the tokens accrued up to NOW_NS. */
static void
refill (struct token_bucket *b, uint64_t now_ns)
{
  if (now_ns <= b->refilled_ns)
    return;
  if (b->per_day == 0 || b->tokens >= burst_tokens (b)) {
    b->refilled_ns = now_ns;    /* full: nothing accrues */
    b->remainder = 0;
    return;
  }
  uint64_t elapsed_ms = (now_ns - b->refilled_ns) / NS_PER_MS;
  /* The sub-millisecond rest of the interval counts next time. */
  b->refilled_ns += elapsed_ms * NS_PER_MS;
  uint64_t max_step_ms = (UINT64_MAX - MS_PER_DAY) / b->per_day;
  while (elapsed_ms > 0 && b->tokens < burst_tokens (b)) {
    uint64_t step_ms = elapsed_ms < max_step_ms ? elapsed_ms : max_step_ms;
    uint64_t sum = step_ms * b->per_day + b->remainder;
    b->tokens += sum / MS_PER_DAY;
    b->remainder = sum % MS_PER_DAY;
    elapsed_ms -= step_ms;
  }
  if (b->tokens >= burst_tokens (b)) {
    b->tokens = burst_tokens (b);
    b->remainder = 0;
    b->refilled_ns = now_ns;
  }
}

void
token_bucket_change (struct token_bucket *b, uint64_t per_day, uint64_t burst,
                     uint64_t now_ns)
{
  if (b->per_day == 0) {
    token_bucket_init (b, per_day, burst, now_ns);
    return;
  }
  refill (b, now_ns);
  if (per_day != b->per_day)
    b->remainder = 0;           /* less than a token, in the old rate */
  b->per_day = per_day;
  b->burst = burst;
  if (b->tokens > burst_tokens (b))
    b->tokens = burst_tokens (b);
}

uint64_t
token_bucket_available (struct token_bucket *b, uint64_t now_ns)
{
  if (b->per_day == 0)
    return UINT64_MAX;
  refill (b, now_ns);
  return b->tokens > 0 ? (uint64_t) b->tokens : 0;
}

void
token_bucket_take (struct token_bucket *b, uint64_t count, uint64_t now_ns)
{
  if (b->per_day == 0)
    return;
  refill (b, now_ns);
  /* TOKENS + TOKEN_BUCKET_MAX is 0..2^48: no overflow either way. */
  if (count >= (uint64_t) (b->tokens + (int64_t) TOKEN_BUCKET_MAX))
    b->tokens = -(int64_t) TOKEN_BUCKET_MAX;
  else
    b->tokens -= (int64_t) count;
}
