/* cswap: bench/codec — compression ratio and speed of each codec through
 * compress/, next to the same library calls made directly, in one run.
 *
 * Same-filled pages are counted and left out of the timing and the ratio
 * (the store keeps them without compressing).  Each pass is run REPEAT
 * times, alternating compress/ and direct calls, and the fastest pass of
 * each is kept, so that both see the same machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <zstd.h>

#include "bench.h"
#include "compress.h"
#include "page.h"

#define REPEAT 5

struct page_set {
  const unsigned char **pages;  /* the pages that are not same-filled */
  size_t count;
  unsigned char *packed;        /* count slots of CSWAP_PAGE_SIZE */
  size_t *packed_len;           /* 0 = stored raw */
  unsigned char *out;
};

static ZSTD_CCtx *lib_cctx;
static ZSTD_DCtx *lib_dctx;

static size_t
lib_compress (const struct codec_config *c, const void *page, void *dst)
{
  if (c->id == CODEC_LZ4) {
    int r = LZ4_compress_default (page, dst, CSWAP_PAGE_SIZE, CSWAP_PAGE_SIZE - 1);
    return r > 0 ? (size_t) r : 0;
  }
  size_t r = ZSTD_compressCCtx (lib_cctx, dst, CSWAP_PAGE_SIZE - 1, page,
                                CSWAP_PAGE_SIZE, c->level);
  return ZSTD_isError (r) ? 0 : r;
}

static int
lib_decompress (const struct codec_config *c, const void *src, size_t len,
                void *page)
{
  if (c->id == CODEC_LZ4)
    return LZ4_decompress_safe (src, page, len, CSWAP_PAGE_SIZE)
      == (int) CSWAP_PAGE_SIZE ? 0 : -1;
  return ZSTD_decompressDCtx (lib_dctx, page, CSWAP_PAGE_SIZE, src, len)
    == CSWAP_PAGE_SIZE ? 0 : -1;
}

/* One compression pass; returns ns, stores the total packed bytes. */
static uint64_t
compress_pass (const struct codec_config *c, struct page_set *s, bool direct,
               uint64_t *packed_bytes)
{
  uint64_t start = monotonic_ns ();
  *packed_bytes = 0;
  for (size_t i = 0; i < s->count; i++) {
    unsigned char *dst = s->packed + i * CSWAP_PAGE_SIZE;
    size_t len = direct ? lib_compress (c, s->pages[i], dst)
      : codec_compress_page (c, s->pages[i], dst, CSWAP_PAGE_SIZE);
    s->packed_len[i] = len;
    *packed_bytes += len ? len : CSWAP_PAGE_SIZE;
  }
  return monotonic_ns () - start;
}

/* One decompression pass; returns ns, or 0 if a page did not round-trip. */
static uint64_t
decompress_pass (const struct codec_config *c, struct page_set *s, bool direct)
{
  uint64_t start = monotonic_ns ();
  for (size_t i = 0; i < s->count; i++) {
    if (s->packed_len[i] == 0)
      continue;                 /* stored raw: nothing to decompress */
    const unsigned char *src = s->packed + i * CSWAP_PAGE_SIZE;
    unsigned char *dst = s->out + (i % 64) * CSWAP_PAGE_SIZE;
    int r = direct ? lib_decompress (c, src, s->packed_len[i], dst)
      : codec_decompress_page (c->id, src, s->packed_len[i], dst);
    if (r == -1 || memcmp (dst, s->pages[i], CSWAP_PAGE_SIZE) != 0) {
      fprintf (stderr, "codec: page %zu did not round-trip\n", i);
      return 0;
    }
  }
  return monotonic_ns () - start;
}

static uint64_t
min_u64 (uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

static int
bench_codec (const struct codec_config *c, struct page_set *s, size_t same)
{
  uint64_t best[2][2] = { { UINT64_MAX, UINT64_MAX }, { UINT64_MAX, UINT64_MAX } };
  uint64_t packed[2] = { 0, 0 };

  for (int rep = 0; rep < REPEAT; rep++) {
    for (int direct = 0; direct <= 1; direct++) {
      best[direct][0] = min_u64 (best[direct][0],
                                 compress_pass (c, s, direct, &packed[direct]));
      uint64_t ns = decompress_pass (c, s, direct);
      if (ns == 0)
        return -1;
      best[direct][1] = min_u64 (best[direct][1], ns);
    }
  }

  uint64_t bytes = (uint64_t) s->count * CSWAP_PAGE_SIZE;
  printf ("{\"bench\":\"codec\",\"codec\":\"%s\",\"level\":%d,\"pages\":%zu,"
          "\"same_filled\":%zu,\"ratio\":%.3f,\"lib_ratio\":%.3f,"
          "\"compress_mbps\":%.1f,\"decompress_mbps\":%.1f,"
          "\"lib_compress_mbps\":%.1f,\"lib_decompress_mbps\":%.1f}\n",
          codec_name (c->id), c->level, s->count + same, same,
          (double) bytes / packed[0], (double) bytes / packed[1],
          bench_mbps (bytes, best[0][0]), bench_mbps (bytes, best[0][1]),
          bench_mbps (bytes, best[1][0]), bench_mbps (bytes, best[1][1]));
  fflush (stdout);
  return 0;
}

int
main (int argc, char **argv)
{
  static const struct codec_config configs[] = {
    /* The default, the faster and the stronger zstd levels around it:
     * what a switch of codec or level would trade (doc/design.md).
     */
    { CODEC_LZ4, 0 }, { CODEC_ZSTD, -3 }, { CODEC_ZSTD, 1 }, { CODEC_ZSTD, 3 },
    { CODEC_ZSTD, 6 },
  };
  struct pagefile pf;
  struct page_set s = { 0 };
  size_t same = 0;
  uint64_t value;
  int status = 0;

  bench_load_pages (argc, argv, &pf);
  s.pages = malloc (pf.pages * sizeof *s.pages);
  s.packed = malloc (pf.pages * CSWAP_PAGE_SIZE);
  s.packed_len = malloc (pf.pages * sizeof *s.packed_len);
  s.out = malloc (64 * CSWAP_PAGE_SIZE);
  lib_cctx = ZSTD_createCCtx ();
  lib_dctx = ZSTD_createDCtx ();
  if (!s.pages || !s.packed || !s.packed_len || !s.out || !lib_cctx || !lib_dctx) {
    perror ("codec: malloc");
    return 1;
  }
  for (size_t i = 0; i < pf.pages; i++) {
    if (page_is_same_filled (pagefile_page (&pf, i), &value))
      same++;
    else
      s.pages[s.count++] = pagefile_page (&pf, i);
  }
  for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
    if (bench_codec (&configs[i], &s, same) == -1)
      status = 1;

  ZSTD_freeCCtx (lib_cctx);
  ZSTD_freeDCtx (lib_dctx);
  free (s.pages);
  free (s.packed);
  free (s.packed_len);
  free (s.out);
  pagefile_free (&pf);
  return status;
}
