/* cswap: a byte count as MiB with one decimal, without floating point.
 *
 * The same text as printf's "%.1f" of bytes / 1048576.0 (which is exact:
 * a double holds every count below 2^53, and glibc rounds the exact value
 * half to even), but with integers only: glibc's %f may take its digit
 * buffer from malloc (stdio-common/printf_fp.c, past its alloca cutoff),
 * and a thread that serves I/O allocates nothing while it speaks
 * (daemon/serve/daemon-log.h).
 */
#ifndef CSWAP_MIB_TEXT_H
#define CSWAP_MIB_TEXT_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

/* Room for the largest count: 17592186044416.0 and the NUL. */
#define MIB_TEXT_BYTES 24

/* Writes BYTES in MiB, one decimal, into TEXT; returns TEXT. */
static inline const char *
mib_text (char text[MIB_TEXT_BYTES], uint64_t bytes)
{
  const uint64_t mib = UINT64_C (1) << 20, half = mib / 2;
  uint64_t whole = bytes >> 20;
  uint64_t tenths_scaled = (bytes & (mib - 1)) * 10;
  uint64_t tenths = tenths_scaled >> 20, rest = tenths_scaled & (mib - 1);

  if (rest > half || (rest == half && (tenths & 1)))
    tenths++;
  if (tenths == 10) {
    whole++;
    tenths = 0;
  }
  snprintf (text, MIB_TEXT_BYTES, "%" PRIu64 ".%" PRIu64, whole, tenths);
  return text;
}

#endif /* CSWAP_MIB_TEXT_H */
