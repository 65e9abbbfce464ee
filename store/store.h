/* cswap: the page store — one slot per 4 KiB page of the device.
 *
 * The store is the engine every front end (nbdkit plugin, FUSE file)
 * serves: reads and writes of any offset and length, trim and write-zeroes
 * that free memory at once, and counters.  A page is either absent (reads
 * as zeros), same-filled (the 8-byte value kept in its slot, no
 * allocation), compressed in the allocator, or raw in the allocator's huge
 * class when it does not compress below the huge threshold.
 *
 * With a backing file (store_config.backing_path), cold pages move, still
 * compressed, to that file when the pool reaches its limit (writeback.c,
 * over tier/), and come back when read.
 *
 * It knows nothing of NBD or FUSE.  All functions are thread-safe; see
 * data-path.c for the locking, and lock-order.h for the lock order.
 */
#ifndef CSWAP_STORE_H
#define CSWAP_STORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "compress.h"
#include "latency.h"

/* The writeback budget: bytes a day that writeback may write to the
 * backing file, in bursts of at most a burst (a token bucket refilled at
 * limit / 86400 bytes a second).  Every byte written counts: pages,
 * records' headers, padding and the cleaner's copies.
 */
struct store_writeback_budget {
  uint64_t limit_bytes_per_day; /* 0: no budget */
  uint64_t burst_bytes;         /* 0: a day's limit */
};
/* Each is 0 or within these: the least is what the largest page can take
 * on disk (two 4 KiB blocks), so a budget that allows a batch allows one
 * page at least; the most keeps the bucket's arithmetic in 64 bits
 * (token-bucket.h).
 */
#define STORE_MIN_WRITEBACK_BUDGET_BYTES 8192u
#define STORE_MAX_WRITEBACK_BUDGET_BYTES (UINT64_C (1) << 47)

/* Recompression of pages that stay (store/recompress.c): each pass, every
 * after_s seconds, compresses again with COLD the pages untouched since
 * the pass before.
 */
struct store_recompress {
  bool enabled;                 /* false: no cold codec, no passes */
  struct codec_config cold;
  unsigned after_s;             /* 1..STORE_MAX_COLD_AFTER_S; in a config, 0: the default */
};
/* The default cold-after, and the longest (30 days, as for
 * idle-writeback).
 */
#define STORE_DEFAULT_COLD_AFTER_S 60
#define STORE_MAX_COLD_AFTER_S (30u * 24 * 3600)

enum store_persistence {
  STORE_PRIVATE = 0,            /* the process's memory: dies with it */
  STORE_SEGMENT_NEW,
  STORE_SEGMENT_ADOPT,
};

struct store_config {
  uint64_t size_bytes;          /* device size; a multiple of 4096 */
  /* Areas: 0, none (the device is one, without a limit of its own);
   * else the device is cut into this many equal areas (size_bytes a
   * multiple of areas pages, at most STORE_MAX_AREAS), each with its own
   * counters and its own limit on the pool bytes it holds (the nbdkit
   * plugin's exports: one pool, one backing file, a quota each).
   */
  unsigned areas;
  struct codec_config codec;
  struct store_recompress recompress;   /* all zeros: none */
  uint64_t pool_limit_bytes;    /* 0: no limit; else STORE_MIN_POOL_LIMIT_BYTES up */
  /* pool_limit_bytes is the default a backing file brings, not one the
   * user gave (the stats say so, pool_limit_default, until it is set).
   */
  bool pool_limit_default;
  uint32_t huge_threshold_bytes; /* 0: the allocator's huge class size */
  unsigned max_pages_per_zspage; /* 0: the allocator's default */
  /* Warm memory kept for new zspages, so that a swap-out does not wait
   * for the kernel to find free pages (zsmalloc.h, the reserve).
   */
  uint64_t reserve_bytes;
  /* Called first on the reserve's refill thread, or NULL (zsmalloc.h). */
  void (*refill_thread_init) (void);
  /* Backing file: NULL for none (a full pool then refuses writes). */
  const char *backing_path;
  uint64_t backing_size_bytes;  /* 0: the device's or existing file's size */
  bool backing_thin;            /* no fallocate: the filesystem may fill up */
  /* Records go to disk in the clear (tier/record.h), not sealed: only for
   * those who measured the cost of sealing them and accept the risk
   * (backing-encrypt=no).  False, the zero value, seals them.
   */
  bool backing_in_clear;
  unsigned accept_threshold_percent;    /* 0: 90; writeback stops below it */
  unsigned writeback_batch_pages;       /* 0: 64 */
  unsigned idle_writeback_seconds;      /* 0: off; at most STORE_MAX_IDLE_WRITEBACK_S */
  /* Pages the kernel reads go to the backing file, and pages read from
   * it stay there (writeback-reads.c), when untouched for
   * read_writeback_wait_ms after the read (0: 1000; tests shorten it).
   */
  bool read_writeback;
  unsigned read_writeback_wait_ms;
  /* How much may be written to the backing file (writeback-budget.c);
   * all zeros: no budget.
   */
  struct store_writeback_budget writeback_budget;
  /* Automatic compaction (auto-compact.c): when what compaction could
   * free reaches this percent of the pool (0: 10), and under memory
   * pressure.  Manual (compact=off): only store_compact() and writeback
   * (after its batches) compact.  False, the zero value, is automatic.
   */
  bool manual_compaction;
  unsigned auto_compact_percent;
  /* Test only: the writeback budget's clock, in nanoseconds, so that a
   * test refills the budget without waiting.  NULL (the daemon):
   * CLOCK_MONOTONIC.
   */
  uint64_t (*budget_clock) (void *arg);
  void *budget_clock_arg;
  /* A store that outlives its process (store-segment.h): its slots and
   * pool in a System V segment of the process's own, found again by
   * segment_device (the first ublk device it serves), made new, or
   * adopted from a killed daemon.  Adopting: made new, every page lost
   * (store_lost_map), where there is none; where there is one it cannot
   * adopt (another device size, another version of cswap, attached by a
   * live process) store_create fails, saying why, and leaves it, unless
   * discard_segment: then it is removed and the store made new, every
   * page lost.  Not with a backing file or areas.
   */
  enum store_persistence persistence;
  uint32_t segment_device;
  bool discard_segment;
};

/* The most pages per writeback batch (the batch buffer's size). */
#define STORE_MAX_WRITEBACK_BATCH 256
/* The longest idle-writeback, and writeback idle=: 30 days.  Past about
 * 2^32 - 3 the idle sweep's period (a third of it) wrapped to 0.
 */
#define STORE_MAX_IDLE_WRITEBACK_S (30u * 24 * 3600)
/* The smallest pool limit but 0 (none): one page.  The allocator counts
 * the limit in whole pages, and 0 pages is no limit to it.
 */
#define STORE_MIN_POOL_LIMIT_BYTES 4096u  /* parse_pool_limit's too */

struct store;

/* What a store adopted from a killed daemon's segment. */
struct store_adoption {
  bool adopted;                 /* false: none, or discarded (why) */
  const char *why;              /* when not adopted */
  uint64_t pages;               /* adopted, readable as before */
  uint64_t lost;                /* pages that could not be, now: their
                                   bits set in store_lost_map */
  /* Where the store's allocator geometry (made by another configuration,
   * or on a machine with other RAM, as the default reserve follows it)
   * is not this configuration's, it is kept: "reserve 8388608
   * (configured 4194304)", and the like; empty when none differs.
   */
  char kept_geometry[160];
  /* With a backing file: whether the killed daemon's records on it are
   * this store's to read (tier.h, tier_keep_state), how many pages were
   * adopted there, and why not where they were not (NULL: the killed
   * daemon had kept no state of it).
   */
  bool backing_adopted;
  uint64_t backing_pages;
  const char *backing_why;
};
/* STORE_SEGMENT_ADOPT's outcome (adopted false for STORE_SEGMENT_NEW);
 * NULL for a store that does not persist.
 */
extern const struct store_adoption *store_adoption (struct store *store);
/* The pages a take-over lost, in a store that persists (store-segment.h,
 * the lost map): bit P % 64 of word P / 64 set for page P that a
 * take-over lost (its store made new, or the page not adopted) and the
 * kernel has not written, discarded or zeroed since.  It lives in the
 * segment, so a page lost stays lost across any number of take-overs.
 * The front end refuses reads of those pages and clears their bits as
 * the kernel gives them contents (daemon/serve/lost-pages.h).  Zero in
 * a store made new for new devices; every page's bit set in one made
 * new where there was nothing to adopt.  NULL for a store that does
 * not persist; else *PAGES is its size in pages.
 */
extern _Atomic uint64_t *store_lost_map (struct store *store,
                                         uint64_t *pages);
/* A few bytes that persist with the store, for what its front end must
 * find again after a kill besides the pages (the ladder's hand-over:
 * ladder-record.h): zero in a new store, as the killed daemon left them in
 * an adopted one.  NULL for a store that does not persist; else *BYTES
 * is their size.
 */
extern void *store_persistent_note (struct store *store, size_t *bytes);
/* The store's devices outlive this process (a daemon that stops
 * without deleting them): store_destroy leaves its segment for a new
 * daemon to adopt.  Without this call it removes it: nothing will ask
 * for its pages again.  (A process that is killed leaves it anyway.)
 */
extern void store_keep_on_destroy (struct store *store);

/* Returns NULL with errno set (EINVAL for a bad config, ENOMEM, or the
 * backing file's error) and store_create_error() saying why.
 */
extern struct store *store_create (const struct store_config *config);
extern const char *store_create_error (void);
extern void store_destroy (struct store *store);

/* The background threads: the allocator's reserve refill, the
 * compressor of deferred pages, automatic compaction, the recompressor
 * (idle until a cold codec is set), and the writer
 * (pool limit with hysteresis, idle writeback) when there is a backing
 * file.  Threads do not survive fork, so front ends start them
 * after they fork (nbdkit's .after_fork, after fuse_daemonize); without
 * them the pool limit still holds (writes then make room themselves) and
 * new zspages fault their pages in on the spot.  Memory locks do not
 * survive fork either: first it locks the backing file's key again
 * (tier_lock_key).  0 or -errno (a thread's, or mlock's).
 * store_destroy stops them.
 */
extern int store_start_background (struct store *store);
extern void store_stop_background (struct store *store);

/* Each returns 0 or a negative errno: -EINVAL for a range outside the
 * device, -ENOSPC when the pool limit or the allocator's capacity is
 * reached, -EDQUOT (writes) when the page's area is at its limit,
 * -ENOMEM (writes) when the machine had no memory for a new zspage in
 * time (zsmalloc.h's ETIMEDOUT); nothing already stored is changed in
 * any of these.  -EIO when a stored page fails to decompress.  Any
 * offset and length work; partial pages are read-modify-write.
 */
extern int store_read (struct store *store, void *buf, uint64_t count,
                       uint64_t offset);
extern int store_write (struct store *store, const void *buf, uint64_t count,
                        uint64_t offset);
/* Zeroes the range: whole pages in it are freed at once (this is also
 * trim: the kernel tells a swap device a slot is free only by discard).
 */
extern int store_zero (struct store *store, uint64_t count, uint64_t offset);

/* Extents, for NBD block status: from OFFSET, the longest run of at most
 * COUNT bytes whose pages all read as zeros and hold no memory (*ZERO:
 * never written, trimmed, or written with zeros) or all hold data.  Runs
 * end on page boundaries, or at OFFSET + COUNT.  A snapshot: concurrent
 * writes may change it.  Returns 0, or -EINVAL for an empty range or one
 * outside the device.
 */
extern int store_extent (struct store *store, uint64_t offset, uint64_t count,
                         bool *zero, uint64_t *length);

extern uint64_t store_size (const struct store *store);

/* Changes the codec used for pages written from now on; pages already
 * stored keep theirs (each remembers it).  Returns 0 or -EINVAL.
 */
extern int store_set_codec (struct store *store, const struct codec_config *codec);
extern void store_get_codec (struct store *store, struct codec_config *codec);
/* Recompression of pages that stay: its codec (ENABLED false: none) and
 * the seconds between passes.  Returns 0 or -EINVAL.
 */
extern int store_set_recompress (struct store *store,
                                 const struct store_recompress *settings);
extern void store_get_recompress (struct store *store,
                                  struct store_recompress *settings);
/* One recompression pass now (`cswapctl recompress`): pages untouched
 * since the last pass are compressed again with the cold codec, the
 * others aged a pass; so two in a row recompress every page untouched
 * between them.  The pages recompressed in *PAGES.  0, or -EINVAL without
 * a cold codec.
 */
extern int store_recompress_now (struct store *store, uint64_t *pages);
/* cold-codec=NAME into *SETTINGS: none, or zstd at its default level.
 * 0, or -1 (nothing changed) for another name (lz4 too: see
 * store-settings.c).  And the name of
 * what *SETTINGS holds.
 */
extern int store_recompress_parse_codec (const char *name,
                                         struct store_recompress *settings);
extern const char *store_recompress_codec_name (const struct store_recompress *settings);
/* Returns 0, or -EINVAL (and changes nothing) for a limit under
 * STORE_MIN_POOL_LIMIT_BYTES but 0.
 */
extern int store_set_pool_limit (struct store *store, uint64_t bytes);

/* One uint64_t for each row of store-stats.def, by its name: what each
 * number is, and where it comes from, is said there.
 */
struct store_stats {
#define STORE_STAT(name, kind, line, help) uint64_t name;
#include "store-stats.def"
};
extern void store_stats (struct store *store, struct store_stats *stats);

/* Pages not absent: from counters only, no lock taken, so it is cheap
 * enough for every FUSE getattr (store_stats takes every allocator lock).
 */
extern uint64_t store_pages_stored (struct store *store);

/* Request latency as the front ends see it: a request's time in the
 * daemon, from the front end taking it to its result (the FUSE
 * transport's receive and reply, and nbdkit's socket I/O, aside), one
 * histogram per kind.  The front ends record it (the store cannot see the
 * transport); the store keeps it beside its counters so that every view
 * of the device shows it.  The time a request spent in the kernel is the
 * block layer's time (/sys/block/DEV/stat) less this.
 */
enum store_request {
  STORE_REQUEST_READ,
  STORE_REQUEST_WRITE,
  STORE_REQUEST_TRIM,           /* trims and write-zeroes */
  STORE_REQUEST_KINDS
};
extern void store_note_request (struct store *store, enum store_request kind,
                                uint64_t ns);
extern void store_request_latency (struct store *store,
                                   enum store_request kind,
                                   struct latency_summary *summary);

/* Runs compaction now: every compaction the store runs, asked for or
 * its own, goes through here.  Returns 0, or -EBUSY when one is already
 * running.
 */
struct zs_compact_result;
extern int store_compact (struct store *store, struct zs_compact_result *result);

/* Writes back now: IDLE_SECONDS 0 takes every page in memory, otherwise
 * those idle at least that long (to the idle sweep's resolution); at most
 * MAX_PAGES (0: no limit); raw (huge) pages only with INCLUDE_HUGE.
 * Returns 0, -EINVAL for IDLE_SECONDS past STORE_MAX_IDLE_WRITEBACK_S,
 * -ENODEV without a backing file, -EDQUOT when the writeback budget is
 * spent, or the batch error that stopped it (pages it could not write
 * stay in memory); *RESULT counts what was written before, too.
 */
struct store_writeback_result {
  uint64_t pages_written;
  uint64_t batches;
};
extern int store_writeback (struct store *store, unsigned idle_seconds,
                            uint64_t max_pages, bool include_huge,
                            struct store_writeback_result *result);
/* Setters return 0 or -EINVAL (percent 1..100, batch 1..256, idle
 * 0..STORE_MAX_IDLE_WRITEBACK_S; no backing file), and change nothing
 * on -EINVAL.
 */
extern int store_set_accept_threshold (struct store *store, unsigned percent);
extern unsigned store_get_accept_threshold (struct store *store);
extern int store_set_writeback_batch (struct store *store, unsigned pages);
extern unsigned store_get_writeback_batch (struct store *store);
extern int store_set_idle_writeback (struct store *store, unsigned seconds);
extern unsigned store_get_idle_writeback (struct store *store);
/* The writeback budget: -EINVAL (and nothing changed) for a value out of
 * bounds or no backing file.  What was left of the budget is kept, up to
 * the new burst; a budget set where there was none starts full.
 */
extern int store_set_writeback_budget (struct store *store,
                                       const struct store_writeback_budget *budget);
extern void store_get_writeback_budget (struct store *store,
                                        struct store_writeback_budget *budget);

/* Areas (store_config.areas): their number (1 for a store without) and
 * the bytes in each; area A is [A * size, (A + 1) * size) of the device.
 */
#define STORE_MAX_AREAS 4096u
extern unsigned store_areas (const struct store *store);
extern uint64_t store_area_size (const struct store *store);
/* Area A's limit on the bytes its pages hold in the pool (compressed, or
 * 4096 raw) and its slot table's chunks hold: a write that would take it over first writes the area's own
 * pages to the backing file, if there is one, and is refused with
 * -EDQUOT when that makes no room (or there is none), as a full pool
 * without a backing file refuses it; a page read back from the backing
 * file stays there.  Writers racing in one area can each take it over by
 * their page.  0: no limit but the pool's.  -EINVAL for no such area.
 */
extern int store_set_area_limit (struct store *store, unsigned area,
                                 uint64_t bytes);
/* What area A holds and has served, from its counters (no lock). */
struct store_area_stats {
  uint64_t limit_bytes;
  uint64_t pages_stored;        /* same-filled, compressed, huge, tiered */
  uint64_t same_filled_pages;
  uint64_t tiered_pages;
  uint64_t compressed_bytes;    /* what the limit counts, */
  uint64_t slot_chunk_bytes;    /* and the slot table's chunks made for
                                   it (4.5 KiB for each 2 MiB written to) */
  uint64_t reads, writes, trims;
  uint64_t failed_writes;       /* refused: the area's limit or the pool's */
  uint64_t area_limit_hits;     /* refused by the area's limit */
};
extern int store_area_stats (struct store *store, unsigned area,
                             struct store_area_stats *stats);

/* The allocator underneath, for its per-class table. */
struct zs_pool;
extern struct zs_pool *store_pool (struct store *store);

#endif /* CSWAP_STORE_H */
