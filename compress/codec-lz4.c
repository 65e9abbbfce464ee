/* cswap: the lz4 codec.
 *
 * The per-thread state is lz4's hash table (LZ4_sizeofState(), 16 KiB), so
 * compressing a page allocates nothing.  Each page is one independent
 * block, compressed by LZ4_compress_fast_extState: what the library does
 * when called directly (LZ4_compress_default, on a state of its own), a
 * 16-bit table for an input under 64 KiB, cleared for every page.
 *
 * For a while a page went through a stream instead (LZ4_resetStream_fast
 * and LZ4_compress_fast_continue), which skips the clearing: that was
 * faster only under TCG, where qemu emulates the 16 KiB memset byte by
 * byte (190-204 MB/s against 120).  On real hardware the memset is a few
 * hundred cycles, and the stream costs more than it saves: 32-bit
 * offsets, and a check of every match candidate against the previous
 * page's entries ("dictSmall"), which made compress/ 11% slower than the
 * library called directly (bench/codec on the corpus: 823.5 against
 * 931.5 MB/s), for a ratio of 2.666 against 2.612.
 * lz4 has no levels in the sense zstd has; its "acceleration" trades
 * ratio for speed and is fixed at 1, the library's default, because
 * ratio is what a swap device is for.
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
