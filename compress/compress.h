/* cswap: compress and decompress one 4 KiB page.
 *
 * One small interface over the codecs (lz4; zstd with a level).  Each codec
 * is one file with one `struct codec_ops` table; this header is all the rest
 * of cswap sees.  Codec state (lz4's hash table, zstd's contexts) is kept
 * per thread and made on first use in that thread, so nothing on the
 * compression path takes a lock.
 *
 * Same-filled detection lives here too: a page that repeats one 8-byte value
 * is better kept as that value than compressed at all.
 */
#ifndef CSWAP_COMPRESS_H
#define CSWAP_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum codec_id {
  CODEC_LZ4,
  CODEC_ZSTD,
};
#define CODEC_COUNT 2

struct codec_config {
  enum codec_id id;
  int level;                    /* zstd only: ZSTD_minCLevel()..ZSTD_maxCLevel() */
};

/* Parses "lz4" or "zstd".  Returns 0, or -1 for an unknown name. */
extern int codec_id_parse (const char *name, enum codec_id *id);
extern const char *codec_name (enum codec_id id);
extern int codec_default_level (enum codec_id id);
/* Returns 0, or -1 when LEVEL is out of the codec's range. */
extern int codec_check_level (enum codec_id id, int level, int *min, int *max);

/* Compresses PAGE (4 KiB) into DST, which holds at least HUGE_THRESHOLD
 * bytes (HUGE_THRESHOLD <= 4096).  Returns the compressed length, which is
 * below HUGE_THRESHOLD, or 0 when the page does not compress below it: the
 * caller then stores the page raw.  Never fails otherwise.
 */
extern size_t codec_compress_page (const struct codec_config *codec,
                                   const void *page, void *dst,
                                   size_t huge_threshold);

/* Decompresses SRC_LEN bytes at SRC into PAGE.  Returns 0, or -1 when SRC
 * is not exactly one compressed 4 KiB page (corrupt or truncated input):
 * never reads outside SRC or writes outside PAGE.
 */
extern int codec_decompress_page (enum codec_id id, const void *src,
                                  size_t src_len, void *page);

/* True if PAGE repeats one 8-byte value, which is stored in *VALUE. */
extern bool page_is_same_filled (const void *page, uint64_t *value);
/* Fills PAGE with VALUE, the inverse of page_is_same_filled. */
extern void page_fill (void *page, uint64_t value);

#endif /* CSWAP_COMPRESS_H */
