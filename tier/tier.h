/* cswap: the backing file — cold compressed objects on disk.
 *
 * The tier keeps opaque objects (up to 4096 bytes, each tagged with a
 * 32-bit owner cookie) in a file or block device opened O_DIRECT, so the
 * page cache never holds a second copy.  It knows segments, blocks,
 * io_uring, seals and checksums; it knows nothing of slots or pages: the
 * store decides what goes out and keeps the offsets.
 *
 *   tier.c     segments and space, batches, reads (this header)
 *   clean.c    the cleaner: live records out of mostly-dead segments
 *   ring.c     the io_uring ring: a batch's writes, recovery from errors
 *   record.c   an object's bytes on disk: head, seal or checksum
 *   seal.c     AES-256-GCM under a key that exists only in locked memory
 *   keep.c     what a successor needs to read the records (below)
 *   io-ops.c   the system calls, as a table; io-fault.c a test program's
 *              faults (linked into no installed program)
 *
 * On-disk format (a log, no superblock: the store's slot table is the
 * only index; a restarted daemon starts from an empty device, with a
 * new key and run id, so it can read nothing of the old run, unless it
 * takes over a killed daemon's store, whose state says how: keep.c):
 *
 *   file   = segments of TIER_SEGMENT_BYTES (1 MiB), filled sequentially
 *   object = a record (record.h): sealed (backing-encrypt=yes, the
 *            default) or plain with a crc32c, padded to 16 bytes
 *
 * An object never straddles more than two 4 KiB blocks (the writer skips
 * to the next block when it would), so reading one back is ONE aligned
 * O_DIRECT read of one or two blocks; a torn or corrupted object fails its
 * tag or checksum and the reader gets -EIO, never wrong data.  Each batch
 * ends on a block boundary (the tail is padding) so a block is never
 * rewritten while readers may be reading it; at 64 pages per batch that
 * costs about 32 bytes per page.
 *
 * Space: every segment counts its live bytes; tier_free() makes an
 * object's bytes dead, and a full segment whose live count reaches zero is
 * free again.  The cleaner (clean.c) finds mostly-dead segments in
 * buckets of full segments by live share, kept as live counts change, and
 * moves the records their owner still refers to into a new batch, asking
 * the owner through struct tier_owner_ops.  TIER_CLEANER_SEGMENTS free
 * segments are kept for the cleaner: without one, a full file of mostly
 * dead segments could never be cleaned.
 *
 * A thin file (backing-prealloc=no) gets its blocks a segment at a time,
 * with fallocate, when a batch first needs the segment.  When the
 * filesystem has no more (ENOSPC from fallocate, or from a write where
 * fallocate is not supported), the tier stops counting the segments it
 * has no blocks for as free, so the cleaner makes room within the ones it
 * has; it asks the filesystem again after a few seconds.
 *
 * Threads: writes are batched by ONE caller at a time (the store's writer
 * mutex serialises tier_batch_* and tier_clean; the io_uring ring is not
 * shared).  tier_read, tier_free and the counters
 * may be used from any thread at any time.
 *
 * Lock order: common/lock-order.h (tier->lock is taken under the owner
 * lock and the batching serialisation, and nothing under it).
 *
 * Test programs only (those that link io-fault.c, never an installed
 * one): CSWAP_TIER_FAULT in the environment when the tier is opened puts
 * faults between the tier and the kernel (io-fault.h): failed, short and
 * interrupted writes, submits and reads.
 */
#ifndef CSWAP_TIER_H
#define CSWAP_TIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIER_BLOCK_BYTES 4096u
#define TIER_SEGMENT_BYTES (1024u * 1024u)
#define TIER_OFFSET_UNIT 16u    /* objects start on 16-byte boundaries */
#define TIER_MAX_OBJECT_BYTES 4096u
#define TIER_MAX_RUNS 8         /* disk runs (SQEs) per batch */
#define TIER_CLEANER_SEGMENTS 1 /* free segments only a cleaning batch takes */

struct tier_config {
  const char *path;
  uint64_t size_bytes;          /* 0: the device's or existing file's size */
  bool thin;                    /* regular file: no fallocate up front */
  bool encrypt;                 /* seal records (record.h, seal.h) */
};

struct tier;

/* Opens (creating 0600 if absent) and sizes the backing file.  Returns
 * NULL with errno set and *WHY a message naming the problem.
 */
extern struct tier *tier_open (const struct tier_config *config,
                               const char **why);
extern void tier_close (struct tier *tier);
/* Locks the sealing key's page again (seal.h): a child of fork()
 * inherits no memory lock, so a process that forks after tier_open calls
 * it in the child.  NULL-safe; 0 or -errno.
 */
extern int tier_lock_key (struct tier *tier);

/* Keeping the tier for a successor (keep.c).  A daemon whose store
 * outlives it (store/store-segment.h) keeps there, too, what a successor
 * needs to read the records of this tier: the file's identity and size,
 * the run id, the sealing key, how many nonces are spent, and each
 * segment's generation.  That memory is locked (SHM_LOCK), so the key
 * is never swapped, and it is gone at the next boot, so the file stays
 * unreadable after one.
 *
 * tier_state_bytes: how much.  tier_keep_state: from now on the tier
 * keeps its state in STATE (tier_state_bytes long: zeros, or what a
 * killed daemon left).  With ADOPT it first takes over the killed
 * daemon's state, if STATE holds one for this very file (the same inode
 * and size): its run id, key and nonce count, its generations, and its
 * form (sealed or plain, whatever this daemon's configuration says).
 * Returns 1 when it did: the records the killed daemon wrote are this
 * tier's to read, and its owner names each one still live with
 * tier_adopt_object (false: not a place the tier writes a record at),
 * then calls tier_adopt_end.  Returns 0 when the tier starts afresh,
 * with *WHY saying why a state was not taken (NULL: there was none),
 * and -1 with errno and *WHY on failure (no key could be made).  Both
 * before the first batch, from one thread.
 */
extern size_t tier_state_bytes (struct tier *tier);
extern int tier_keep_state (struct tier *tier, void *state, bool adopt,
                            const char **why);
extern bool tier_adopt_object (struct tier *tier, uint64_t offset,
                               uint32_t length);
extern void tier_adopt_end (struct tier *tier);

/* A batch of objects on their way to disk, in a preallocated aligned
 * buffer of MAX_OBJECTS objects; the caller holds it, the tier fills it.
 * Returns NULL when out of memory.
 */
struct tier_batch;
extern struct tier_batch *tier_batch_create (unsigned max_objects);
extern void tier_batch_destroy (struct tier_batch *batch);
/* Makes the pages of the part of BATCH's buffer that OBJECTS objects can
 * fill (common/prefault.h), without writing to it, so that the thread
 * that fills it never faults one in: when the batch is made, and again
 * before a larger batch is asked for.  False where the kernel cannot
 * populate (before 5.14): the pages then come as the batch is filled.
 */
extern bool tier_batch_prefault (struct tier_batch *batch, unsigned objects);

/* Caps what BATCH writes when submitted, padding included, at
 * LIMIT_BYTES (a new batch has no cap: UINT64_MAX); the cap stays until
 * changed.  The store's writeback budget sets it.
 */
extern void tier_batch_limit_bytes (struct tier_batch *batch,
                                    uint64_t limit_bytes);

/* Copies LENGTH bytes at DATA into BATCH and reserves their place on disk;
 * *OFFSET is where the object will live.  Returns 0, -E2BIG when the batch
 * is full or would pass its cap (submit it first), or -ENOSPC when the
 * backing file is.
 */
extern int tier_batch_add (struct tier *tier, struct tier_batch *batch,
                           uint32_t cookie, const void *data, uint32_t length,
                           uint64_t *offset);
/* Writes the batch with one io_uring submission (one SQE per contiguous
 * run) and waits for it (ring.h).  Returns 0 when every byte of it is on
 * disk, or a negative errno; either way none of its writes is still in
 * flight.  On failure the caller must tier_free() every object of the
 * batch.  Empties BATCH.
 */
extern int tier_batch_submit (struct tier *tier, struct tier_batch *batch);

/* Makes the object at OFFSET of LENGTH payload bytes dead. */
extern void tier_free (struct tier *tier, uint64_t offset, uint32_t length);

/* Reading an object back.  Its owner takes the generation of OFFSET's
 * segment (tier_generation) while the object is its (its lock held, so
 * the segment cannot be freed and taken again), and the object read is
 * taken only if it was written at OFFSET in that generation: bytes read
 * while the segment was reused are refused, not returned.
 *
 * tier_read reads the object at OFFSET back into PAYLOAD (LENGTH bytes),
 * checking its checksum or tag, cookie and length, and GENERATION.
 * Returns 0, -EIO (counted: a stale or corrupt record), or another
 * -errno.
 *
 * Or in two steps, so that the owner need not hold its lock across the
 * disk read: tier_fetch reads the blocks that hold the object into BUF
 * (any thread, no lock: 0 or -errno); tier_check_fetched checks them as
 * tier_read does and copies the payload out: 0, -ESTALE (written before
 * the tier opened), -EBADMSG (not the object written at OFFSET in
 * GENERATION: a read that raced a reuse, or corruption), neither
 * counted.
 */
struct tier_record_buf {
  _Alignas (TIER_BLOCK_BYTES) unsigned char bytes[2 * TIER_BLOCK_BYTES];
};
extern int tier_read (struct tier *tier, uint64_t offset, uint32_t length,
                      uint32_t cookie, uint32_t generation, void *payload);
extern int tier_fetch (struct tier *tier, uint64_t offset, uint32_t length,
                       struct tier_record_buf *buf);
extern int tier_check_fetched (struct tier *tier, struct tier_record_buf *buf,
                               uint64_t offset, uint32_t length,
                               uint32_t cookie, uint32_t generation,
                               void *payload);
/* Several objects in one read (the store's cold read-ahead: the pages of
 * one request, written back together, lie side by side on disk).
 * tier_record_blocks: the block-aligned bytes [*FIRST, *END) a fetch of
 * the object at OFFSET of LENGTH payload bytes reads.  tier_fetch_blocks
 * reads [FIRST, END) (block-aligned, within the file) into BUF: 0 or
 * -errno (any thread, no lock; counted in fetches as one).  A fetch's
 * bytes copied out of such a read into a tier_record_buf are checked by
 * tier_check_fetched as any.
 */
extern void tier_record_blocks (struct tier *tier, uint64_t offset,
                                uint32_t length, uint64_t *first,
                                uint64_t *end);
extern int tier_fetch_blocks (struct tier *tier, uint64_t first, uint64_t end,
                              void *buf);

/* The generation of OFFSET's segment: it changes each time the segment
 * is written afresh, never while a record there is live.  So a reader
 * who saw an object at OFFSET, and sees it again there in the same
 * generation, read that object and no other written there since.
 */
extern uint32_t tier_generation (struct tier *tier, uint64_t offset);

/* Cleaning: how the tier reaches the owner of its records (the store),
 * as the allocator's zs_owner_ops does for compaction.  All are called
 * from the cleaning thread (the batching caller).  lock/unlock take and
 * release the lock the owner holds while it uses the record with that
 * cookie; owns and retarget are called with it held.  owns: whether the
 * owner still refers to the record at OFFSET of LENGTH payload bytes.
 * retarget: the record was copied to TO; if the owner still refers to
 * FROM it must switch to TO and return true, else return false (and the
 * copy is freed).  batch_done: a cleaning batch completed, R its result.
 */
struct tier_owner_ops {
  void (*lock) (void *owner, uint32_t cookie);
  void (*unlock) (void *owner, uint32_t cookie);
  bool (*owns) (void *owner, uint32_t cookie, uint64_t offset,
                uint32_t length);
  bool (*retarget) (void *owner, uint32_t cookie, uint64_t from, uint64_t to,
                    uint32_t length);
  void (*batch_done) (void *owner, int r);
};

/* The cleaner (clean.c): its batch of MAX_OBJECTS records and a segment
 * buffer, made once.  NULL when out of memory.
 */
struct tier_cleaner;
extern struct tier_cleaner *tier_cleaner_create (struct tier *tier,
                                                 const struct tier_owner_ops *ops,
                                                 void *owner,
                                                 unsigned max_objects);
extern void tier_cleaner_destroy (struct tier_cleaner *c);
/* Keeps a couple of segments free for new batches: cleans mostly-dead
 * segments while fewer are free and cleaning makes progress.  Called by
 * the batching caller, never with an owner lock held.  Returns the
 * segments cleaned.
 */
extern int tier_clean (struct tier_cleaner *c);

struct tier_stats {
  uint64_t size_bytes;
  uint64_t used_bytes;          /* written area of segments in use */
  uint64_t live_bytes;          /* headers and payloads still referenced */
  uint64_t bytes_written;
  uint64_t batches, submissions;
  uint64_t ring_retries;        /* io_uring calls again after EINTR/EAGAIN */
  uint64_t ring_resets;         /* rings made afresh after a failed batch */
  uint64_t io_errors, enospc_errors;
  uint64_t checksum_errors;     /* records whose crc32c or tag failed */
  uint64_t stale_records;       /* records read from before the tier opened */
  uint64_t fetches;             /* reads from the file, one or more records */
};
extern void tier_stats (struct tier *tier, struct tier_stats *stats);

#endif /* CSWAP_TIER_H */
