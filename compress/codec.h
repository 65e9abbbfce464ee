/* cswap: what one codec provides to compress.c (internal to compress/). */
#ifndef CSWAP_CODEC_H
#define CSWAP_CODEC_H

#include <stddef.h>

struct codec_ops {
  const char *name;
  int min_level, max_level, default_level;
  /* Per-thread state: made on first use in a thread, freed at its exit. */
  void *(*state_new) (void);
  void (*state_free) (void *state);
  /* Returns the compressed length, or 0 if it does not fit in DST_CAPACITY. */
  size_t (*compress) (void *state, int level, const void *page,
                      void *dst, size_t dst_capacity);
  /* Returns the decompressed length, or -1 on corrupt input. */
  long (*decompress) (void *state, const void *src, size_t src_len,
                      void *page);
};

extern const struct codec_ops codec_lz4_ops;
extern const struct codec_ops codec_zstd_ops;

#endif /* CSWAP_CODEC_H */
