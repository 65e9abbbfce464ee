/* cswap: the header-only helpers of common/ — rounding.h, counter.h and
 * mib-text.h.
 * Each is small, and each was written twice before it had a home: pin
 * what the callers rely on.
 */
#include <stdint.h>

#include <stdio.h>
#include <string.h>

#include "counter.h"
#include "mib-text.h"
#include "rounding.h"
#include "tap.h"

static void
test_rounding (void)
{
  ok (round_up (0, 4096) == 0, "round_up of 0 is 0");
  ok (round_up (1, 4096) == 4096, "round_up of 1 is one unit");
  ok (round_up (4096, 4096) == 4096, "round_up of a multiple is itself");
  ok (round_up (4097, 4096) == 8192, "round_up past a multiple is the next");
  ok (round_up (17, 16) == 32 && round_up (10, 3) == 12,
      "round_up takes units that are not powers of two");
  ok (round_up (1ull << 40, 1u << 20) == 1ull << 40,
      "round_up is 64-bit");
  ok (round_down (4095, 4096) == 0 && round_down (8191, 4096) == 4096,
      "round_down drops the remainder");
  ok (round_down (10, 3) == 9, "round_down takes any unit");
}

/* mib_text prints what "%.1f" of bytes / 1048576.0 prints. */
static void
test_mib_text (void)
{
  static const uint64_t counts[] = {
    0, 1, 52428, 52429, 104857, 104858, 262144, 786432, 1048575, 1048576,
    24 << 20, (24 << 20) + 943718, 5ull << 40, UINT64_MAX >> 11,
  };
  char text[MIB_TEXT_BYTES], expected[64];
  int differ = 0;

  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    snprintf (expected, sizeof expected, "%.1f", counts[i] / 1048576.0);
    if (strcmp (mib_text (text, counts[i]), expected) != 0) {
      diag ("%llu bytes: %s, not %s", (unsigned long long) counts[i], text,
            expected);
      differ++;
    }
  }
  /* Every tenth's edge, where rounding decides, below 2 MiB. */
  for (uint64_t b = 0; b < (2 << 20); b += 4096 / 8) {
    snprintf (expected, sizeof expected, "%.1f", b / 1048576.0);
    if (strcmp (mib_text (text, b), expected) != 0 && differ++ < 5)
      diag ("%llu bytes: %s, not %s", (unsigned long long) b, text, expected);
  }
  ok (differ == 0, "mib_text is \"%%.1f\" of the count in MiB, ties to "
      "even (%d differ)", differ);
}

static void
test_counter (void)
{
  atomic_uint_fast64_t c;

  atomic_init (&c, 0);
  counter_add (&c, 5);
  ok (counter_get (&c) == 5, "counter_add adds");
  counter_add (&c, -5);
  ok (counter_get (&c) == 0, "a negative delta takes back what was added");
  counter_add (&c, -1);
  counter_add (&c, 1);
  ok (counter_get (&c) == 0, "through a wrap and back");
  counter_add (&c, INT64_MAX);
  ok (counter_get (&c) == (uint64_t) INT64_MAX, "a large delta");
}

int
main (void)
{
  test_rounding ();
  test_mib_text ();
  test_counter ();
  return tap_done ();
}
