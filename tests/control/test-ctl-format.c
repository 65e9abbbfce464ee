/* cswap: cswapctl's numbers as text (control/ctl-reply.c) — sizes as
 * zramctl's table prints them, in prose and exact, across every unit and
 * at the edges where one decimal would round up to 1024, and durations.
 */
#include <stdint.h>
#include <string.h>

#include "cswapctl.h"
#include "tap.h"

static void
size_is (uint64_t bytes, enum size_style style, const char *want)
{
  char got[SIZE_TEXT_MAX];

  format_size (got, bytes, style);
  ok (strcmp (got, want) == 0, "%llu bytes, style %d: \"%s\" (want \"%s\")",
      (unsigned long long) bytes, style, got, want);
}

static void
duration_is (double seconds, const char *want)
{
  char got[SIZE_TEXT_MAX];

  format_duration (got, seconds);
  ok (strcmp (got, want) == 0, "%.1f s: \"%s\" (want \"%s\")", seconds, got,
      want);
}

int
main (void)
{
  const uint64_t KiB = 1024, MiB = KiB << 10, GiB = MiB << 10;

  /* zramctl's table: one letter, the decimal dropped when it is 0. */
  size_is (0, SIZE_SHORT, "0B");
  size_is (1023, SIZE_SHORT, "1023B");
  size_is (KiB, SIZE_SHORT, "1K");
  size_is (1536, SIZE_SHORT, "1.5K");
  size_is (64 * MiB, SIZE_SHORT, "64M");
  size_is (GiB + GiB / 5, SIZE_SHORT, "1.2G");
  size_is (3 * (GiB << 10), SIZE_SHORT, "3T");
  size_is (UINT64_MAX, SIZE_SHORT, "16E");
  /* 1023.99 KiB would read 1024.0K: it is 1M. */
  size_is (MiB - 1, SIZE_SHORT, "1M");
  size_is (1023 * KiB + 512, SIZE_SHORT, "1023.5K");
  /* Prose and exact. */
  size_is (512, SIZE_LONG, "512 B");
  size_is (64 * MiB, SIZE_LONG, "64.0 MiB");
  size_is (GiB - 1, SIZE_LONG, "1.0 GiB");
  size_is (64 * MiB, SIZE_BYTES, "67108864");
  size_is (0, SIZE_BYTES, "0");

  duration_is (0, "0s");
  duration_is (42.9, "42s");
  duration_is (250, "4m10s");
  duration_is (2 * 3600 + 5 * 60 + 59, "2h05m");
  duration_is (3 * 86400 + 4 * 3600 + 59, "3d04h");
  duration_is (-1, "0s");
  return tap_done ();
}
