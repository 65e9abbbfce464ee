/* cswap: rounding to a multiple of a unit (any unit, not only powers of
 * two).  N + UNIT - 1 must not wrap: every caller rounds sizes and
 * offsets far below 2^64.
 */
#ifndef CSWAP_ROUNDING_H
#define CSWAP_ROUNDING_H

#include <stdint.h>

static inline uint64_t
round_up (uint64_t n, uint64_t unit)
{
  return (n + unit - 1) / unit * unit;
}

static inline uint64_t
round_down (uint64_t n, uint64_t unit)
{
  return n / unit * unit;
}

#endif /* CSWAP_ROUNDING_H */
