/* cswap: common/token-bucket — exact refills (many small ones add up to
 * one large one, fractions of a token kept), the burst as a cap, nothing
 * accrued while full, overdrafts paid back first, rate changes, no
 * limit, and the arithmetic at TOKEN_BUCKET_MAX and 64-bit times
 * (UBSan builds catch an overflow).  The clock is the test's own.
 */
#include <stdint.h>

#include "tap.h"
#include "token-bucket.h"

#define MS UINT64_C (1000000)
#define SECOND (1000 * MS)
#define DAY (86400 * SECOND)

static void
test_refill (void)
{
  struct token_bucket b;
  uint64_t t = 5 * SECOND;

  token_bucket_init (&b, 86400 * 4096, 1 << 20, t);    /* 4096 a second */
  ok (token_bucket_available (&b, t) == 1 << 20, "a new bucket is full");
  token_bucket_take (&b, 1 << 20, t);
  ok (token_bucket_available (&b, t) == 0, "taken empty, none left");
  ok (token_bucket_available (&b, t + 10 * SECOND) == 10 * 4096,
      "10 s later: 10 x 4096 (%llu)",
      (unsigned long long) token_bucket_available (&b, t + 10 * SECOND));
  ok (token_bucket_available (&b, t + 10 * SECOND + MS / 2) == 10 * 4096,
      "half a millisecond more adds nothing yet");
  ok (token_bucket_available (&b, t + 10 * SECOND + MS) == 10 * 4096 + 4,
      "and the rest of that millisecond adds its 4 (4.096) tokens");
  ok (token_bucket_available (&b, t + 365 * DAY) == 1 << 20,
      "a year later: the burst, no more");

  /* Full, a day goes by, all taken: nothing came of the full day. */
  token_bucket_take (&b, 1 << 20, t + 366 * DAY);
  ok (token_bucket_available (&b, t + 366 * DAY) == 0,
      "nothing accrues while the bucket is full");
}

/* One token a second, refilled every millisecond or every 0.3 ms: the
 * fractions add up, to the token.
 */
static void
test_fractions (void)
{
  struct token_bucket fine, coarse;
  const uint64_t per_day = 1000000007;  /* 11574.07... a second */
  uint64_t t = 0;

  token_bucket_init (&fine, 86400, 100, 0);
  token_bucket_take (&fine, 100, 0);
  for (int i = 0; i < 3000; i++)
    token_bucket_available (&fine, (uint64_t) i * MS);
  ok (token_bucket_available (&fine, 2999 * MS) == 2,
      "1 a second, read every ms: 2 after 2.999 s");
  ok (token_bucket_available (&fine, 3000 * MS) == 3, "3 after 3 s");

  token_bucket_init (&fine, per_day, TOKEN_BUCKET_MAX, 0);
  token_bucket_init (&coarse, per_day, TOKEN_BUCKET_MAX, 0);
  token_bucket_take (&fine, TOKEN_BUCKET_MAX, 0);
  token_bucket_take (&coarse, TOKEN_BUCKET_MAX, 0);
  for (int i = 0; i < 100000; i++) {
    t += 300000;                /* 0.3 ms */
    token_bucket_available (&fine, t);
  }
  uint64_t want = t / MS * per_day / 86400000;
  ok (token_bucket_available (&fine, t) == want
      && token_bucket_available (&coarse, t) == want,
      "100000 refills of 0.3 ms give what one of 30 s does: %llu tokens",
      (unsigned long long) want);
}

static void
test_overdraft (void)
{
  struct token_bucket b;

  token_bucket_init (&b, 86400 * 1000, 10000, 0);       /* 1 a ms */
  token_bucket_take (&b, 10500, 0);
  ok (token_bucket_available (&b, 0) == 0, "overdrawn by 500: none left");
  ok (token_bucket_available (&b, 500 * MS) == 0,
      "500 ms later the debt is paid, still none");
  ok (token_bucket_available (&b, 501 * MS) == 1, "then they come again");
  token_bucket_take (&b, UINT64_MAX, 501 * MS);
  ok (b.tokens == -(int64_t) TOKEN_BUCKET_MAX,
      "a debt past TOKEN_BUCKET_MAX is not kept");
}

static void
test_changes (void)
{
  struct token_bucket b;

  token_bucket_init (&b, 0, 0, 0);
  ok (token_bucket_available (&b, 0) == UINT64_MAX,
      "no limit: everything is available");
  token_bucket_take (&b, 12345, 0);
  ok (token_bucket_available (&b, SECOND) == UINT64_MAX,
      "and takes are not counted");
  token_bucket_change (&b, 86400, 5000, 2 * SECOND);
  ok (token_bucket_available (&b, 2 * SECOND) == 5000,
      "a limit set on a bucket without one starts full");
  token_bucket_take (&b, 4000, 2 * SECOND);
  token_bucket_change (&b, 86400 * 2, 600, 3 * SECOND);
  ok (token_bucket_available (&b, 3 * SECOND) == 600,
      "a smaller burst caps what is there (1001 -> 600)");
  token_bucket_take (&b, 601, 3 * SECOND);
  token_bucket_change (&b, 86400 * 10, 600, 3 * SECOND);
  ok (token_bucket_available (&b, 3 * SECOND) == 0
      && token_bucket_available (&b, 4 * SECOND) == 9,
      "a debt outlives a rate change, and the new rate pays it");
  token_bucket_change (&b, 0, 600, 5 * SECOND);
  ok (token_bucket_available (&b, 5 * SECOND) == UINT64_MAX,
      "rate 0 lifts the limit");
}

/* The largest rate and burst, the largest debt, 64-bit times. */
static void
test_extremes (void)
{
  struct token_bucket b;

  token_bucket_init (&b, TOKEN_BUCKET_MAX, TOKEN_BUCKET_MAX, 0);
  token_bucket_take (&b, UINT64_MAX, 0);
  ok (token_bucket_available (&b, UINT64_MAX) == TOKEN_BUCKET_MAX,
      "the largest debt of the largest bucket refills to the largest burst");
  ok (token_bucket_available (&b, DAY) == TOKEN_BUCKET_MAX,
      "a clock read earlier than the last changes nothing");

  token_bucket_init (&b, 1, TOKEN_BUCKET_MAX, 0);
  token_bucket_take (&b, TOKEN_BUCKET_MAX, 0);
  ok (token_bucket_available (&b, UINT64_MAX) == UINT64_MAX / DAY,
      "one a day for 2^64 ns: %llu",
      (unsigned long long) token_bucket_available (&b, UINT64_MAX));

  token_bucket_init (&b, TOKEN_BUCKET_MAX, TOKEN_BUCKET_MAX, 0);
  token_bucket_take (&b, TOKEN_BUCKET_MAX, 0);
  ok (token_bucket_available (&b, SECOND) == TOKEN_BUCKET_MAX / 86400,
      "2^47 a day: 2^47 / 86400 in the first second");
}

int
main (void)
{
  test_refill ();
  test_fractions ();
  test_overdraft ();
  test_changes ();
  test_extremes ();
  return tap_done ();
}
