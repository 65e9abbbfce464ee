/* cswap: CRC-32C, table-driven (see crc32c.h). */
#include <pthread.h>
#include <string.h>

#include "crc32c.h"

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void
make_table (void)
{
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;  /* reflected polynomial */
    table[i] = c;
  }
}

#if defined __x86_64__
/* SSE 4.2 has CRC-32C in hardware: 8 bytes a cycle or so, against one
 * table lookup per byte; bench/tier's batched writeback went from 154 to
 * 233 MB/s with it.
 */
__attribute__ ((target ("sse4.2")))
static uint32_t
crc32c_sse42 (uint32_t crc, const unsigned char *p, size_t len)
{
  uint64_t c = ~crc;

  for (; len >= 8; p += 8, len -= 8) {
    uint64_t v;
    memcpy (&v, p, 8);
    c = __builtin_ia32_crc32di (c, v);
  }
  for (; len; p++, len--)
    c = __builtin_ia32_crc32qi (c, *p);
  return ~(uint32_t) c;
}
#endif

uint32_t
crc32c (uint32_t crc, const void *data, size_t len)
{
  const unsigned char *p = data;

#if defined __x86_64__
  if (__builtin_cpu_supports ("sse4.2"))
    return crc32c_sse42 (crc, p, len);
#endif
  pthread_once (&table_once, make_table);
  crc = ~crc;
  while (len--)
    crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}
