/* cswap: the zstd codec.
 *
 * The per-thread state is one compression and one decompression context,
 * reused for every page (making a context costs far more than compressing
 * 4 KiB).  Each page is one ordinary zstd frame, so what cswap stores is
 * exactly what ZSTD_compress() would produce at the same level.
 */
#include <stdlib.h>

#include <zstd.h>

#include "page.h"
#include "codec.h"

struct zstd_state {
  ZSTD_CCtx *cctx;
  ZSTD_DCtx *dctx;
};

static void
zstd_state_free (void *opaque)
{
  struct zstd_state *s = opaque;
  if (s) {
    ZSTD_freeCCtx (s->cctx);
    ZSTD_freeDCtx (s->dctx);
    free (s);
  }
}

static void *
zstd_state_new (void)
{
  struct zstd_state *s = calloc (1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->cctx = ZSTD_createCCtx ();
  s->dctx = ZSTD_createDCtx ();
  if (s->cctx == NULL || s->dctx == NULL) {
    zstd_state_free (s);
    return NULL;
  }
  return s;
}

static size_t
zstd_compress (void *opaque, int level, const void *page, void *dst,
               size_t dst_capacity)
{
  struct zstd_state *s = opaque;
  size_t r = ZSTD_compressCCtx (s->cctx, dst, dst_capacity, page,
                                CSWAP_PAGE_SIZE, level);
  return ZSTD_isError (r) ? 0 : r;
}

static long
zstd_decompress (void *opaque, const void *src, size_t src_len, void *page)
{
  struct zstd_state *s = opaque;
  size_t r = ZSTD_decompressDCtx (s->dctx, page, CSWAP_PAGE_SIZE, src, src_len);
  return ZSTD_isError (r) ? -1 : (long) r;
}

/* Levels above 19 need far more memory per context than a page is worth. */
const struct codec_ops codec_zstd_ops = {
  .name = "zstd",
  .min_level = -7, .max_level = 19, .default_level = 1,
  .state_new = zstd_state_new,
  .state_free = zstd_state_free,
  .compress = zstd_compress,
  .decompress = zstd_decompress,
};
