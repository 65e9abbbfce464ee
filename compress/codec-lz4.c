/* cswap: the lz4 codec.
 *
 * The per-thread state is lz4's hash table (LZ4_sizeofState(), 16 KiB), so
 * compressing a page allocates nothing.  lz4 has no levels in the sense
 * zstd has; its "acceleration" trades ratio for speed and is fixed at 1,
 * the library's default, because ratio is what a swap device is for.
 */
#include <stdlib.h>

#include <lz4.h>

#include "page.h"
#include "codec.h"

static void *
lz4_state_new (void)
{
  return malloc (LZ4_sizeofState ());
}

static size_t
lz4_compress (void *state, int level, const void *page, void *dst,
              size_t dst_capacity)
{
  (void) level;
  int r = LZ4_compress_fast_extState (state, page, dst, CSWAP_PAGE_SIZE,
                                      dst_capacity, 1);
  return r > 0 ? (size_t) r : 0;
}

static long
lz4_decompress (void *state, const void *src, size_t src_len, void *page)
{
  (void) state;
  return LZ4_decompress_safe (src, page, src_len, CSWAP_PAGE_SIZE);
}

const struct codec_ops codec_lz4_ops = {
  .name = "lz4",
  .min_level = 0, .max_level = 0, .default_level = 0,
  .state_new = lz4_state_new,
  .state_free = free,
  .compress = lz4_compress,
  .decompress = lz4_decompress,
};
