/* cswap: the page store — one slot per 4 KiB page of the device.
 *
 * The store is the engine every front end (nbdkit plugin, FUSE file)
 * serves: reads and writes of any offset and length, trim and write-zeroes
 * that free memory at once, and counters.  A page is either absent (reads
 * as zeros), same-filled (the 8-byte value kept in its slot, no
 * allocation), compressed in the allocator, or raw in the allocator's huge
 * class when it does not compress below the huge threshold.
 *
 * It knows nothing of NBD or FUSE.  All functions are thread-safe; see
 * store.c for the locking.
 */
#ifndef CSWAP_STORE_H
#define CSWAP_STORE_H

#include <stdint.h>

#include "compress.h"

struct store_config {
  uint64_t size_bytes;          /* device size; a multiple of 4096 */
  struct codec_config codec;
  uint64_t pool_limit_bytes;    /* 0: no limit */
  uint32_t huge_threshold_bytes; /* 0: the allocator's huge class size */
  unsigned max_pages_per_zspage; /* 0: the allocator's default */
};

struct store;

/* Returns NULL with errno set (EINVAL for a bad config, ENOMEM). */
extern struct store *store_create (const struct store_config *config);
extern void store_destroy (struct store *store);

/* Each returns 0 or a negative errno: -EINVAL for a range outside the
 * device, -ENOSPC when the pool limit or the allocator's capacity is
 * reached (nothing already stored is changed), -EIO when a stored page
 * fails to decompress.  Any offset and length work; partial pages are
 * read-modify-write.
 */
extern int store_read (struct store *store, void *buf, uint64_t count,
                       uint64_t offset);
extern int store_write (struct store *store, const void *buf, uint64_t count,
                        uint64_t offset);
/* Zeroes the range: whole pages in it are freed at once (this is also
 * trim: the kernel tells a swap device a slot is free only by discard).
 */
extern int store_zero (struct store *store, uint64_t count, uint64_t offset);

extern uint64_t store_size (const struct store *store);

/* Changes the codec used for pages written from now on; pages already
 * stored keep theirs (each remembers it).  Returns 0 or -EINVAL.
 */
extern int store_set_codec (struct store *store, const struct codec_config *codec);
extern void store_get_codec (struct store *store, struct codec_config *codec);
extern void store_set_pool_limit (struct store *store, uint64_t bytes);

struct store_stats {
  uint64_t size_bytes;
  uint64_t pages_stored;        /* every page that is not absent */
  uint64_t same_filled_pages;
  uint64_t huge_pages;          /* stored raw */
  uint64_t compressed_pages;
  uint64_t original_bytes;      /* pages_stored x 4096 */
  uint64_t compressed_bytes;    /* compressed and raw pages' lengths */
  uint64_t pool_bytes;          /* allocator pages x 4096 */
  uint64_t metadata_bytes;      /* slot table, locks, allocator metadata */
  uint64_t pool_limit_bytes;
  uint64_t reads, writes, trims;        /* requests, in pages touched */
  uint64_t failed_writes;       /* pages refused: pool limit or capacity */
  uint64_t read_errors;         /* pages that failed to decompress */
  uint64_t pool_limit_hits;
};
extern void store_stats (struct store *store, struct store_stats *stats);

/* Pages not absent: from counters only, no lock taken, so it is cheap
 * enough for every FUSE getattr (store_stats takes every allocator lock).
 */
extern uint64_t store_pages_stored (struct store *store);

/* Runs compaction now.  Returns 0, or -EBUSY when one is already running. */
struct zs_compact_result;
extern int store_compact (struct store *store, struct zs_compact_result *result);

/* The allocator underneath, for its per-class table. */
struct zs_pool;
extern struct zs_pool *store_pool (struct store *store);

#endif /* CSWAP_STORE_H */
