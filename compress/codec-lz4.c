/* cswap: the lz4 codec.
 *
 * The per-thread state is one lz4 stream (its hash table, 16 KiB), so
 * compressing a page allocates nothing.  Each page is one independent
 * block: the stream is reset before every page, with
 * LZ4_resetStream_fast, which moves the stream's offset past the old
 * entries instead of clearing them.  LZ4_compress_fast_extState clears
 * all 16 KiB for every page, four times the page it compresses; in the
 * small VM that memset was a tenth of the daemon's time once deferred
 * pages went through lz4.  bench/codec on the corpus: under TCG 190-204
 * MB/s against 120, on the host 765-813 against 859-893 (a stream
 * compresses a page with 32-bit offsets, extState with 16-bit ones),
 * and a ratio of 2.666 against 2.612 on both.
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
  LZ4_stream_t *stream = malloc (sizeof *stream);

  return stream ? LZ4_initStream (stream, sizeof *stream) : NULL;
}

static size_t
lz4_compress (void *state, int level, const void *page, void *dst,
              size_t dst_capacity)
{
  (void) level;
  LZ4_resetStream_fast (state);
  int r = LZ4_compress_fast_continue (state, page, dst, CSWAP_PAGE_SIZE,
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
