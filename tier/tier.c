/* cswap: the backing file (see tier.h for the format and the contract).
 *
 * tier->lock guards the segment table, the free-segment stack and the
 * used/live byte counts (and so each segment's generation); lock order:
 * common/lock-order.h.  The
 * io_uring ring and the open segment's
 * position in a batch belong to the single batching caller.  Other
 * counters are relaxed atomics.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counter.h"
#include "io-ops.h"
#include "lock-order.h"
#include "record.h"
#include "ring.h"
#include "dio-warm.h"
#include "monotonic.h"
#include "prefault.h"
#include "rounding.h"
#include "tier-internal.h"

_Static_assert (TIER_SEGMENT_BYTES % TIER_BLOCK_BYTES == 0,
                "segments are whole blocks");

struct tier_batch {
  unsigned char *buf;
  size_t buf_bytes, used_bytes;
  uint64_t limit_bytes;         /* the most it writes (tier_batch_limit_bytes) */
  unsigned objects, max_objects;
  unsigned runs;
  struct { uint64_t disk_offset; size_t buf_offset; } run[TIER_MAX_RUNS];
  bool cleaning;                /* may take the cleaner's segments */
  bool unsealed;                /* a record failed to seal: fail the batch */
};

enum segment_state { SEGMENT_FREE, SEGMENT_OPEN, SEGMENT_FULL };

/* Full segments with live records sit in one of SEGMENT_BUCKETS lists by
 * live share (bucket b: b/16 to (b+1)/16 of the segment live), moved as
 * tier_free() lowers the count, so the cleaner's victim costs a look at
 * each bucket's head rather than a scan of every segment under the lock
 * that tier_free() needs.  16 steps put 25% on a bucket boundary.
 */
#define SEGMENT_BUCKETS 16
#define SEGMENT_NONE UINT32_MAX

struct segment {
  uint32_t live_bytes;          /* object bytes still referenced */
  uint32_t fill_bytes;          /* written so far (FREE: 0) */
  uint32_t bucket_prev, bucket_next;    /* FULL: its bucket's list */
  enum segment_state state;
  bool backed;                  /* the filesystem has blocks for all of it */
};

/* After the filesystem under a thin file ran out of space, no fresh
 * segment is tried for this long: the cleaner works within the segments
 * the file already has, and growth is tried again now and then in case
 * space was freed.
 */
#define GROW_RETRY_NS (5 * 1000000000ull)

struct tier {
  int fd;
  uint64_t size_bytes;
  uint32_t segments;

  pthread_mutex_t lock;
  struct segment *segment;      /* protected by lock */
  /* Each segment's generation, protected by lock: bumped each time the
   * segment opens, kept while it is free; with the offset it names a
   * record's place (record.h), so a place is written once.  It wraps
   * after 2^32 reuses, 4 PiB written to one segment.  In the tier's own
   * memory, or in memory that outlives the process (tier_keep_state).
   */
  uint32_t *generation, *own_generation;
  /* Free segments, protected by lock, in two stacks: READY ones are
   * backed (a block device, a preallocated file, or fallocated when a
   * thin file first needed them); FRESH ones are parts of a thin file
   * that the filesystem has not yet given blocks to.
   */
  uint32_t *ready_stack, *fresh_stack;
  uint32_t ready_count, fresh_count;
  uint64_t grow_after_ns;       /* protected by lock; see GROW_RETRY_NS */
  bool fallocate_unsupported;   /* protected by lock */
  int64_t open_segment;         /* protected by lock; -1: none */
  uint32_t bucket_head[SEGMENT_BUCKETS];        /* protected by lock */
  uint64_t used_bytes, live_bytes;      /* protected by lock */

  const struct tier_io_ops *io; /* io-ops.h; set at open */
  void *io_ctx;
  struct tier_ring ring;        /* the batching caller's only */
  struct record_format format;  /* set at open; its count the batcher's */

  atomic_uint_fast64_t bytes_written, batches;
  atomic_uint_fast64_t io_errors, enospc_errors, checksum_errors;
  atomic_uint_fast64_t stale_records;
  atomic_uint_fast64_t fetches;
};

/* Opening: every failure sets *WHY and errno. */
static int
open_fail (int fd, const char **why, const char *message, int error)
{
  static char buffer[256];
  snprintf (buffer, sizeof buffer, "backing file: %s", message);
  *why = buffer;
  if (fd >= 0)
    close (fd);
  errno = error;
  return -1;
}

/* Opens PATH as it is, or makes it a new file (mode 0600); *CREATED
 * says which.  O_EXCL on an existing block device makes the open
 * exclusive: the kernel refuses a second one (EBUSY) through any node of
 * the device, where flock locks only the node, and refuses a mounted one.
 * On an existing regular file Linux ignores O_EXCL without O_CREAT.
 * Returns the fd, or -1 with errno set.
 */
static int
open_path (const char *path, bool *created)
{
  const int flags = O_RDWR | O_DIRECT | O_NOFOLLOW | O_CLOEXEC | O_EXCL;

  /* Twice: the file may come or go between the two opens. */
  for (int tries = 0; tries < 2; tries++) {
    int fd = open (path, flags);

    *created = false;
    if (fd != -1 || errno != ENOENT)
      return fd;
    fd = open (path, flags | O_CREAT, 0600);
    *created = true;
    if (fd != -1 || errno != EEXIST)
      return fd;
  }
  return -1;
}

/* A file that was there before: another user's, or one another user can
 * write, would let them change the pages read back (and read them without
 * backing-encrypt).  Returns NULL or why not.  Block devices are not
 * checked: their nodes are root's and the disk group's by design.
 */
static const char *
existing_file_problem (const struct stat *st)
{
  static char reason[96];

  if (st->st_uid != geteuid ())
    snprintf (reason, sizeof reason, "owned by uid %u, not this daemon's "
              "user (refused)", (unsigned) st->st_uid);
  else if (st->st_mode & (S_IWGRP | S_IWOTH))
    snprintf (reason, sizeof reason, "other users can write it (mode %04o; "
              "chmod go-w)", (unsigned) (st->st_mode & 07777));
  else
    return NULL;
  return reason;
}

/* Locks FD's file for this process alone: 0, or -1 while another has it
 * after FLOCK_WAIT_MS.  A daemon killed with writes in flight keeps its
 * lock after it is reaped, until the kernel has torn its io_uring ring
 * down (io_uring's exit work, asynchronous): its successor, taking its
 * store over at once, waits for that rather than failing (seen in
 * test-persist-backing: one take-over in a dozen).
 */
#define FLOCK_WAIT_MS 5000
#define FLOCK_RETRY_MS 20

static int
lock_file (int fd)
{
  for (unsigned waited = 0;; waited += FLOCK_RETRY_MS) {
    if (flock (fd, LOCK_EX | LOCK_NB) == 0)
      return 0;
    if (errno != EWOULDBLOCK || waited >= FLOCK_WAIT_MS)
      return -1;
    usleep (FLOCK_RETRY_MS * 1000);
  }
}

/* Opens and sizes the file; *THIN: a regular file left unallocated. */
static int
open_backing (const struct tier_config *config, uint64_t *size_bytes,
              bool *thin, const char **why)
{
  struct stat st;
  uint64_t size = config->size_bytes;
  bool created;
  const char *problem;
  int fd = open_path (config->path, &created);

  if (fd == -1) {
    int e = errno;
    return open_fail (-1, why, e == ELOOP ? "is a symlink (refused)"
                      : e == EINVAL ? "the filesystem refuses O_DIRECT"
                      : e == EBUSY ? "in use by another process, or mounted "
                                     "(O_EXCL)"
                      : strerror (e), e);
  }
  /* One store per file: a second daemon would overwrite live objects. */
  if (lock_file (fd) == -1)
    return open_fail (fd, why, "in use by another process (flock)", EBUSY);
  if (fstat (fd, &st) == -1)
    return open_fail (fd, why, strerror (errno), errno);
  if (!created && S_ISREG (st.st_mode)
      && (problem = existing_file_problem (&st)) != NULL)
    return open_fail (fd, why, problem, EPERM);
  if (S_ISBLK (st.st_mode)) {
    uint64_t device_bytes;
    if (ioctl (fd, BLKGETSIZE64, &device_bytes) == -1)
      return open_fail (fd, why, "BLKGETSIZE64 failed", errno);
    if (size > device_bytes)
      return open_fail (fd, why, "backing-size is larger than the device", EINVAL);
    if (size == 0)
      size = device_bytes;
  }
  else if (S_ISREG (st.st_mode)) {
    if (size == 0)
      size = st.st_size;
    if (size == 0)
      return open_fail (fd, why, "backing-size=SIZE is needed for a new file", EINVAL);
  }
  else
    return open_fail (fd, why, "neither a regular file nor a block device", EINVAL);

  size -= size % TIER_SEGMENT_BYTES;
  if (size < 2 * TIER_SEGMENT_BYTES)
    return open_fail (fd, why, "smaller than two 1 MiB segments", EINVAL);
  if (S_ISREG (st.st_mode)) {
    if (!config->thin && (errno = posix_fallocate (fd, 0, size)) != 0)
      return open_fail (fd, why, errno == ENOSPC ? "no space to preallocate"
                        : "the filesystem cannot preallocate "
                          "(fallocate; backing-prealloc=no allows a thin file)",
                        errno);
    if (config->thin && (uint64_t) st.st_size < size && ftruncate (fd, size) == -1)
      return open_fail (fd, why, strerror (errno), errno);
  }
  *size_bytes = size;
  *thin = S_ISREG (st.st_mode) && config->thin;
  return fd;
}

struct tier *
tier_open (const struct tier_config *config, const char **why)
{
  struct tier *tier = calloc (1, sizeof *tier);

  if (tier == NULL) {
    *why = "backing file: out of memory";
    return NULL;
  }
  bool thin;

  tier->fd = open_backing (config, &tier->size_bytes, &thin, why);
  if (tier->fd == -1) {
    free (tier);
    return NULL;
  }
  /* Best effort: where it fails, so will writeback, which says why. */
  (void) dio_warm (tier->fd);
  tier->segments = tier->size_bytes / TIER_SEGMENT_BYTES;
  tier->segment = calloc (tier->segments, sizeof *tier->segment);
  tier->own_generation = calloc (tier->segments, sizeof *tier->own_generation);
  tier->generation = tier->own_generation;
  tier->ready_stack = calloc (tier->segments, sizeof *tier->ready_stack);
  tier->fresh_stack = calloc (tier->segments, sizeof *tier->fresh_stack);
  /* The writeback thread updates them (common/prefault.h). */
  prefault_bytes (tier->segment, tier->segments * sizeof *tier->segment);
  prefault_bytes (tier->own_generation,
                  tier->segments * sizeof *tier->own_generation);
  prefault_bytes (tier->ready_stack, tier->segments * sizeof *tier->ready_stack);
  prefault_bytes (tier->fresh_stack, tier->segments * sizeof *tier->fresh_stack);
  if (tier->segment == NULL || tier->own_generation == NULL
      || tier->ready_stack == NULL
      || tier->fresh_stack == NULL) {
    *why = "backing file: out of memory";
    tier_close (tier);
    errno = ENOMEM;
    return NULL;
  }
  /* Lowest segments on top: a fresh device fills the file from the start. */
  for (uint32_t s = 0; s < tier->segments; s++) {
    uint32_t lowest_last = tier->segments - 1 - s;
    tier->segment[lowest_last].backed = !thin;
    if (thin)
      tier->fresh_stack[tier->fresh_count++] = lowest_last;
    else
      tier->ready_stack[tier->ready_count++] = lowest_last;
  }
  tier->open_segment = -1;
  for (unsigned b = 0; b < SEGMENT_BUCKETS; b++)
    tier->bucket_head[b] = SEGMENT_NONE;
  pthread_mutex_init (&tier->lock, NULL);
  tier->io = tier_io_open (&tier->io_ctx);
  ring_init (&tier->ring, tier->io, tier->io_ctx);
  if (record_format_init (&tier->format, config->encrypt, why) == -1) {
    int e = errno;
    tier_close (tier);
    errno = e;
    return NULL;
  }
  return tier;
}

int
tier_lock_key (struct tier *tier)
{
  return tier ? record_format_lock_key (&tier->format) : 0;
}

void
tier_close (struct tier *tier)
{
  if (tier == NULL)
    return;
  if (tier->io)
    ring_destroy (&tier->ring);
  tier_io_close (tier->io_ctx);
  record_format_destroy (&tier->format);
  if (tier->segment)
    pthread_mutex_destroy (&tier->lock);
  close (tier->fd);
  free (tier->segment);
  free (tier->own_generation);
  free (tier->ready_stack);
  free (tier->fresh_stack);
  free (tier);
}

/* What a batch of OBJECTS objects may fill at worst: each object's
 * bytes plus a skip to the next block, and a block of padding per run.
 */
static size_t
batch_bytes (unsigned objects)
{
  return round_up ((size_t) objects * (RECORD_MAX_BYTES + TIER_BLOCK_BYTES / 2)
                   + TIER_MAX_RUNS * TIER_BLOCK_BYTES, TIER_BLOCK_BYTES);
}

struct tier_batch *
tier_batch_create (unsigned max_objects)
{
  struct tier_batch *batch = calloc (1, sizeof *batch);

  if (batch == NULL)
    return NULL;
  batch->max_objects = max_objects;
  batch->limit_bytes = UINT64_MAX;
  batch->buf_bytes = batch_bytes (max_objects);
  batch->buf = aligned_alloc (TIER_BLOCK_BYTES, batch->buf_bytes);
  if (batch->buf == NULL) {
    free (batch);
    return NULL;
  }
  return batch;
}

bool
tier_batch_prefault (struct tier_batch *batch, unsigned objects)
{
  size_t bytes = batch_bytes (objects);

  /* A cleaner's batch takes the live records of one segment: at most a
   * segment's bytes, and a block of padding a run.
   */
  if (batch->cleaning
      && bytes > TIER_SEGMENT_BYTES + TIER_MAX_RUNS * TIER_BLOCK_BYTES)
    bytes = TIER_SEGMENT_BYTES + TIER_MAX_RUNS * TIER_BLOCK_BYTES;

  return prefault_populate (batch->buf, bytes < batch->buf_bytes
                                        ? bytes : batch->buf_bytes);
}

void
tier_batch_destroy (struct tier_batch *batch)
{
  if (batch) {
    free (batch->buf);
    free (batch);
  }
}

void
tier_batch_limit_bytes (struct tier_batch *batch, uint64_t limit_bytes)
{
  batch->limit_bytes = limit_bytes;
}

void
tier_batch_for_cleaner (struct tier_batch *batch)
{
  batch->cleaning = true;
}

static unsigned
bucket_of (uint32_t live_bytes)
{
  unsigned b = (uint64_t) live_bytes * SEGMENT_BUCKETS / TIER_SEGMENT_BYTES;
  return b < SEGMENT_BUCKETS ? b : SEGMENT_BUCKETS - 1;
}

/* Full segment S goes into the bucket of its live count.  Lock held. */
static void
bucket_insert (struct tier *tier, uint32_t s)
{
  struct segment *seg = &tier->segment[s];
  uint32_t *head = &tier->bucket_head[bucket_of (seg->live_bytes)];

  lock_assert_held (&tier->lock);
  seg->bucket_prev = SEGMENT_NONE;
  seg->bucket_next = *head;
  if (*head != SEGMENT_NONE)
    tier->segment[*head].bucket_prev = s;
  *head = s;
}

/* Full segment S leaves the bucket of LIVE_BYTES.  Lock held. */
static void
bucket_remove (struct tier *tier, uint32_t s, uint32_t live_bytes)
{
  struct segment *seg = &tier->segment[s];

  lock_assert_held (&tier->lock);
  if (seg->bucket_prev != SEGMENT_NONE)
    tier->segment[seg->bucket_prev].bucket_next = seg->bucket_next;
  else
    tier->bucket_head[bucket_of (live_bytes)] = seg->bucket_next;
  if (seg->bucket_next != SEGMENT_NONE)
    tier->segment[seg->bucket_next].bucket_prev = seg->bucket_prev;
}

/* Segment S holds nothing live any more.  Called with tier->lock held,
 * S already out of its bucket.
 */
static void
segment_release (struct tier *tier, uint32_t s)
{
  struct segment *seg = &tier->segment[s];

  lock_assert_held (&tier->lock);
  tier->used_bytes -= seg->fill_bytes;
  *seg = (struct segment) { .state = SEGMENT_FREE, .backed = seg->backed };
  if (seg->backed)
    tier->ready_stack[tier->ready_count++] = s;
  else
    tier->fresh_stack[tier->fresh_count++] = s;
}

/* Segment S stops taking objects.  Called with tier->lock held. */
static void
segment_close (struct tier *tier, uint32_t s)
{
  struct segment *seg = &tier->segment[s];
  uint32_t filled = round_up (seg->fill_bytes, TIER_BLOCK_BYTES);

  lock_assert_held (&tier->lock);
  tier->used_bytes += filled - seg->fill_bytes;
  seg->fill_bytes = filled;
  seg->state = SEGMENT_FULL;
  tier->open_segment = -1;
  if (seg->live_bytes == 0)     /* everything in it died while it was open */
    segment_release (tier, s);
  else
    bucket_insert (tier, s);
}

/* Whether a fresh segment may be tried now.  Called with tier->lock held. */
static bool
may_grow_locked (const struct tier *tier)
{
  lock_assert_held (&tier->lock);
  return tier->fresh_count > 0 && monotonic_ns () >= tier->grow_after_ns;
}

/* The filesystem refused space: live within the segments we have for a
 * while.  Called with tier->lock held.
 */
static void
stop_growing_locked (struct tier *tier)
{
  lock_assert_held (&tier->lock);
  tier->grow_after_ns = monotonic_ns () + GROW_RETRY_NS;
  /* An open segment without blocks would refuse the next batch too. */
  if (tier->open_segment >= 0 && !tier->segment[tier->open_segment].backed)
    segment_close (tier, tier->open_segment);
}

/* Makes one fresh segment ready by asking the filesystem for its blocks
 * (fallocate), outside the lock: only the batching caller takes segments,
 * so the one popped stays ours meanwhile.
 */
static void
grow (struct tier *tier)
{
  lock_acquire (&tier->lock, LOCK_RANK_TIER);
  if (!may_grow_locked (tier)) {
    lock_release (&tier->lock);
    return;
  }
  uint32_t s = tier->fresh_stack[--tier->fresh_count];
  bool try_fallocate = !tier->fallocate_unsupported;
  lock_release (&tier->lock);

  int error = 0;
  if (try_fallocate
      && fallocate (tier->fd, 0, (off_t) s * TIER_SEGMENT_BYTES,
                    TIER_SEGMENT_BYTES) == -1)
    error = errno;

  lock_acquire (&tier->lock, LOCK_RANK_TIER);
  if (error == EOPNOTSUPP)
    /* The filesystem cannot say ahead; a write that fails will. */
    tier->fallocate_unsupported = true;
  if (error == 0 || error == EOPNOTSUPP) {
    tier->segment[s].backed = try_fallocate && error == 0;
    tier->ready_stack[tier->ready_count++] = s;
  }
  else {
    tier->fresh_stack[tier->fresh_count++] = s;
    stop_growing_locked (tier);
    counter_add (error == ENOSPC ? &tier->enospc_errors : &tier->io_errors, 1);
  }
  lock_release (&tier->lock);
}

/* Where an object of NEED bytes goes in a segment filled to FILL: here, or
 * at the next block if it would otherwise touch three blocks.
 */
static uint32_t
place_object (uint32_t fill, uint32_t need)
{
  if (fill % TIER_BLOCK_BYTES + need > 2 * TIER_BLOCK_BYTES)
    return round_up (fill, TIER_BLOCK_BYTES);
  return fill;
}

int
tier_batch_add (struct tier *tier, struct tier_batch *batch, uint32_t cookie,
                const void *data, uint32_t length, uint64_t *offset)
{
  uint32_t need = record_bytes (&tier->format, length);
  uint32_t pos = 0;
  size_t at;

  if (length == 0 || length > TIER_MAX_OBJECT_BYTES)
    return -EINVAL;
  if (batch->objects == batch->max_objects)
    return -E2BIG;

  /* A new segment must leave TIER_CLEANER_SEGMENTS ready ones for the
   * cleaner, unless the cleaner is asking.
   */
  uint32_t min_ready = batch->cleaning ? 1 : 1 + TIER_CLEANER_SEGMENTS;
  int64_t s;
  bool new_segment;
  for (uint32_t grown = 0;; grown++) {
    lock_acquire (&tier->lock, LOCK_RANK_TIER);
    s = tier->open_segment;
    if (s >= 0) {
      pos = place_object (tier->segment[s].fill_bytes, need);
      if (pos + need > TIER_SEGMENT_BYTES)
        s = -1;
    }
    new_segment = s < 0;
    if (!new_segment || tier->ready_count >= min_ready)
      break;
    bool may_grow = grown < min_ready && may_grow_locked (tier);
    lock_release (&tier->lock);
    if (!may_grow)
      return -ENOSPC;
    grow (tier);
  }
  bool new_run = new_segment || batch->runs == 0;
  if (new_run && batch->runs == TIER_MAX_RUNS) {
    lock_release (&tier->lock);
    return -E2BIG;
  }
  if (new_segment)
    pos = 0;
  /* Runs start on a block in the buffer as on disk; within a run, buffer
   * and disk advance together.
   */
  if (new_run)
    at = round_up (batch->used_bytes, TIER_BLOCK_BYTES);
  else {
    const typeof (batch->run[0]) *run = &batch->run[batch->runs - 1];
    at = run->buf_offset + ((uint64_t) s * TIER_SEGMENT_BYTES + pos
                            - run->disk_offset);
  }
  if (at + need > batch->buf_bytes
      || round_up (at + need, TIER_BLOCK_BYTES) > batch->limit_bytes) {
    lock_release (&tier->lock);
    return -E2BIG;
  }

  if (new_segment) {
    if (tier->open_segment >= 0)
      segment_close (tier, tier->open_segment);
    s = tier->ready_stack[--tier->ready_count];
    tier->segment[s].state = SEGMENT_OPEN;
    tier->generation[s]++;
    tier->open_segment = s;
  }
  struct segment *seg = &tier->segment[s];
  uint32_t generation = tier->generation[s];
  tier->used_bytes += pos + need - seg->fill_bytes;
  tier->live_bytes += need;
  seg->fill_bytes = pos + need;
  seg->live_bytes += need;
  lock_release (&tier->lock);

  if (new_run)
    batch->run[batch->runs++] = (typeof (batch->run[0])) {
      .disk_offset = (uint64_t) s * TIER_SEGMENT_BYTES + pos,
      .buf_offset = at,
    };
  memset (batch->buf + batch->used_bytes, 0, at - batch->used_bytes);
  *offset = (uint64_t) s * TIER_SEGMENT_BYTES + pos;
  struct record_place place = { .offset = *offset, .generation = generation };
  if (!record_write (&tier->format, batch->buf + at, place, cookie, data,
                     length))
    batch->unsealed = true;
  batch->used_bytes = at + need;
  batch->objects++;
  return 0;
}

/* One ring_write of every run of the batch, ending at END in its buffer. */
static int
write_runs (struct tier *tier, struct tier_batch *batch, size_t end)
{
  struct ring_run runs[TIER_MAX_RUNS];

  for (unsigned i = 0; i < batch->runs; i++) {
    size_t from = batch->run[i].buf_offset;
    size_t to = i + 1 < batch->runs ? batch->run[i + 1].buf_offset : end;
    runs[i] = (struct ring_run) { .buf = batch->buf + from, .bytes = to - from,
                                  .offset = batch->run[i].disk_offset };
  }
  return ring_write (&tier->ring, tier->fd, runs, batch->runs);
}

int
tier_batch_submit (struct tier *tier, struct tier_batch *batch)
{
  size_t end = round_up (batch->used_bytes, TIER_BLOCK_BYTES);
  int r;

  if (batch->objects == 0)
    return 0;
  memset (batch->buf + batch->used_bytes, 0, end - batch->used_bytes);
  /* The open segment's tail block is padding from now on: the next batch
   * starts on a fresh block, so no block is written twice while readers
   * may be reading it.
   */
  lock_acquire (&tier->lock, LOCK_RANK_TIER);
  if (tier->open_segment >= 0) {
    struct segment *seg = &tier->segment[tier->open_segment];
    uint32_t filled = round_up (seg->fill_bytes, TIER_BLOCK_BYTES);
    tier->used_bytes += filled - seg->fill_bytes;
    seg->fill_bytes = filled;
    if (filled == TIER_SEGMENT_BYTES)
      segment_close (tier, tier->open_segment);
  }
  lock_release (&tier->lock);

  counter_add (&tier->batches, 1);
  /* A record that could not be sealed fails its batch, unwritten: the
   * caller keeps every page of it in memory.
   */
  r = batch->unsealed ? -EIO : write_runs (tier, batch, end);
  if (r == 0)
    counter_add (&tier->bytes_written, end);
  else
    counter_add (r == -ENOSPC ? &tier->enospc_errors : &tier->io_errors, 1);
  if (r == -ENOSPC) {
    lock_acquire (&tier->lock, LOCK_RANK_TIER);
    stop_growing_locked (tier);
    lock_release (&tier->lock);
  }
  batch->used_bytes = 0;
  batch->objects = 0;
  batch->runs = 0;
  batch->unsealed = false;
  return r;
}

void
tier_free (struct tier *tier, uint64_t offset, uint32_t length)
{
  uint32_t s = offset / TIER_SEGMENT_BYTES;
  uint32_t bytes = record_bytes (&tier->format, length);

  lock_acquire (&tier->lock, LOCK_RANK_TIER);
  struct segment *seg = &tier->segment[s];
  uint32_t was = seg->live_bytes;
  seg->live_bytes -= bytes;
  tier->live_bytes -= bytes;
  if (seg->state == SEGMENT_FULL
      && (seg->live_bytes == 0 || bucket_of (seg->live_bytes) != bucket_of (was))) {
    bucket_remove (tier, s, was);
    if (seg->live_bytes)
      bucket_insert (tier, s);
  }
  /* An open segment with nothing live has nothing in flight either (a
   * batch's objects are live until settled): start it afresh.
   */
  if (seg->live_bytes == 0 && seg->state != SEGMENT_FREE) {
    if (seg->state == SEGMENT_OPEN)
      tier->open_segment = -1;
    segment_release (tier, s);
  }
  lock_release (&tier->lock);
}

/* Reads LENGTH bytes at OFFSET, again when interrupted.  Returns 0, or
 * -errno; a short read (the file ends early) is -EIO.  Both are counted
 * as I/O errors: the bytes are not there, not corrupted.
 */
static int
read_exact (struct tier *tier, void *buf, size_t length, uint64_t offset)
{
  ssize_t n;

  do
    n = tier->io->pread (tier->io_ctx, tier->fd, buf, length, offset);
  while (n == -1 && errno == EINTR);
  if (n == -1 || (size_t) n != length) {
    int e = n == -1 ? -errno : -EIO;
    counter_add (&tier->io_errors, 1);
    return e;
  }
  return 0;
}

uint32_t
tier_generation (struct tier *tier, uint64_t offset)
{
  lock_acquire (&tier->lock, LOCK_RANK_TIER);
  uint32_t generation = tier->generation[offset / TIER_SEGMENT_BYTES];
  lock_release (&tier->lock);
  return generation;
}

void
tier_record_blocks (struct tier *tier, uint64_t offset, uint32_t length,
                    uint64_t *first, uint64_t *end)
{
  *first = round_down (offset, TIER_BLOCK_BYTES);
  *end = round_up (offset + record_bytes (&tier->format, length),
                   TIER_BLOCK_BYTES);
}

int
tier_fetch (struct tier *tier, uint64_t offset, uint32_t length,
            struct tier_record_buf *buf)
{
  uint64_t first, end;

  tier_record_blocks (tier, offset, length, &first, &end);
  if (end - first > sizeof buf->bytes)
    return -EINVAL;
  return tier_fetch_blocks (tier, first, end, buf->bytes);
}

int
tier_fetch_blocks (struct tier *tier, uint64_t first, uint64_t end, void *buf)
{
  if (first % TIER_BLOCK_BYTES || end % TIER_BLOCK_BYTES || end <= first
      || end > tier->size_bytes)
    return -EINVAL;
  counter_add (&tier->fetches, 1);
  return read_exact (tier, buf, end - first, first);
}

int
tier_check_fetched (struct tier *tier, struct tier_record_buf *buf,
                    uint64_t offset, uint32_t length, uint32_t cookie,
                    uint32_t generation, void *payload)
{
  struct record_place place = { .offset = offset, .generation = generation };
  uint64_t first, end;
  struct record record;

  tier_record_blocks (tier, offset, length, &first, &end);
  size_t in_buf = offset - first;
  enum record_status status = record_read (&tier->format, buf->bytes + in_buf,
                                           end - first - in_buf, place,
                                           payload, &record);
  if (status == RECORD_STALE)
    return -ESTALE;
  if (status != RECORD_OK || record.cookie != cookie
      || record.length != length)
    return -EBADMSG;
  return 0;
}

int
tier_read (struct tier *tier, uint64_t offset, uint32_t length,
           uint32_t cookie, uint32_t generation, void *payload)
{
  struct tier_record_buf buf;
  int r = tier_fetch (tier, offset, length, &buf);

  if (r == 0)
    r = tier_check_fetched (tier, &buf, offset, length, cookie, generation,
                            payload);
  if (r == -ESTALE || r == -EBADMSG) {
    counter_add (r == -ESTALE ? &tier->stale_records : &tier->checksum_errors,
                 1);
    return -EIO;
  }
  return r;
}

/* ------------------------------------------------------- adoption -- */

int
tier_file (struct tier *tier)
{
  return tier->fd;
}

uint32_t
tier_segment_count (struct tier *tier)
{
  return tier->segments;
}

struct record_format *
tier_format (struct tier *tier)
{
  return &tier->format;
}

void
tier_use_generations (struct tier *tier, uint32_t *generation,
                      bool keep_values)
{
  lock_acquire (&tier->lock, LOCK_RANK_TIER);
  if (!keep_values)
    memcpy (generation, tier->generation,
            tier->segments * sizeof *generation);
  tier->generation = generation;
  lock_release (&tier->lock);
}

bool
tier_adopt_object (struct tier *tier, uint64_t offset, uint32_t length)
{
  if (length == 0 || length > TIER_MAX_OBJECT_BYTES
      || offset % TIER_OFFSET_UNIT)
    return false;
  uint32_t need = record_bytes (&tier->format, length);
  uint64_t s = offset / TIER_SEGMENT_BYTES;
  uint32_t in_segment = offset % TIER_SEGMENT_BYTES;

  /* Where tier_batch_add never puts a record: not one of ours. */
  if (s >= tier->segments || in_segment + need > TIER_SEGMENT_BYTES
      || in_segment % TIER_BLOCK_BYTES + need > 2 * TIER_BLOCK_BYTES)
    return false;
  lock_acquire (&tier->lock, LOCK_RANK_TIER);
  tier->segment[s].live_bytes += need;
  tier->live_bytes += need;
  lock_release (&tier->lock);
  return true;
}

void
tier_adopt_end (struct tier *tier)
{
  lock_acquire (&tier->lock, LOCK_RANK_TIER);
  tier->ready_count = tier->fresh_count = 0;
  /* Lowest segments on top, as tier_open stacks them. */
  for (uint32_t k = 0; k < tier->segments; k++) {
    uint32_t s = tier->segments - 1 - k;
    struct segment *seg = &tier->segment[s];

    if (seg->live_bytes) {
      /* How far the killed daemon had filled it is not known past its
       * live records (a batch may have been in flight): it is full, and
       * free again once they are dead.
       */
      seg->state = SEGMENT_FULL;
      seg->fill_bytes = TIER_SEGMENT_BYTES;
      seg->backed = true;
      tier->used_bytes += TIER_SEGMENT_BYTES;
      bucket_insert (tier, s);
    }
    else if (seg->backed)
      tier->ready_stack[tier->ready_count++] = s;
    else
      tier->fresh_stack[tier->fresh_count++] = s;
  }
  lock_release (&tier->lock);
}

int64_t
tier_pick_victim (struct tier *tier, unsigned live_percent)
{
  uint64_t below = (uint64_t) TIER_SEGMENT_BYTES * live_percent / 100;
  int64_t victim = -1;

  lock_acquire (&tier->lock, LOCK_RANK_TIER);
  for (unsigned b = 0; b < SEGMENT_BUCKETS; b++) {
    uint32_t s = tier->bucket_head[b];
    if (s == SEGMENT_NONE)
      continue;
    if (tier->segment[s].live_bytes < below)
      victim = s;
    break;                      /* the emptiest bucket with a segment */
  }
  lock_release (&tier->lock);
  return victim;
}

int
tier_read_segment (struct tier *tier, uint64_t segment, void *buf, size_t *fill)
{
  lock_acquire (&tier->lock, LOCK_RANK_TIER);
  *fill = tier->segment[segment].fill_bytes;
  lock_release (&tier->lock);
  return read_exact (tier, buf, *fill, segment * TIER_SEGMENT_BYTES);
}

bool
tier_segment_next (struct tier *tier, uint64_t segment, void *buf,
                   size_t fill, size_t *pos, struct tier_object *object)
{
  unsigned char *bytes = buf;
  struct record record;

  while (*pos < fill) {
    uint64_t offset = segment * TIER_SEGMENT_BYTES + *pos;
    /* The generation now: records of one the segment had before it was
     * freed and taken again are dead.
     */
    struct record_place place = { .offset = offset,
                                  .generation = tier_generation (tier, offset) };
    if (record_read (&tier->format, bytes + *pos, fill - *pos, place, NULL,
                     &record) != RECORD_OK) {
      /* Padding, a failed batch's leftovers or an unreadable record:
       * records resume on a block.
       */
      *pos = round_up (*pos + 1, TIER_BLOCK_BYTES);
      continue;
    }
    *object = (struct tier_object) {
      .offset = offset, .cookie = record.cookie, .length = record.length,
      .payload = record.payload,
    };
    *pos += record_bytes (&tier->format, record.length);
    return true;
  }
  return false;
}

unsigned
tier_free_segments (struct tier *tier)
{
  lock_acquire (&tier->lock, LOCK_RANK_TIER);
  unsigned n = tier->ready_count + (may_grow_locked (tier) ? tier->fresh_count : 0);
  lock_release (&tier->lock);
  return n;
}

void
tier_stats (struct tier *tier, struct tier_stats *s)
{
  lock_acquire (&tier->lock, LOCK_RANK_TIER);
  *s = (struct tier_stats) {
    .size_bytes = tier->size_bytes,
    .used_bytes = tier->used_bytes,
    .live_bytes = tier->live_bytes,
  };
  lock_release (&tier->lock);
  s->bytes_written = atomic_load_explicit (&tier->bytes_written, memory_order_relaxed);
  s->batches = atomic_load_explicit (&tier->batches, memory_order_relaxed);
  struct ring_counts ring;
  ring_counts (&tier->ring, &ring);
  s->submissions = ring.submissions;
  s->ring_retries = ring.retries;
  s->ring_resets = ring.resets;
  s->io_errors = atomic_load_explicit (&tier->io_errors, memory_order_relaxed);
  s->enospc_errors = atomic_load_explicit (&tier->enospc_errors, memory_order_relaxed);
  s->checksum_errors = atomic_load_explicit (&tier->checksum_errors, memory_order_relaxed);
  s->stale_records = atomic_load_explicit (&tier->stale_records, memory_order_relaxed);
  s->fetches = atomic_load_explicit (&tier->fetches, memory_order_relaxed);
}
