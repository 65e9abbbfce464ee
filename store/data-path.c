/* cswap: the page store's data path (see store.h).
 *
 * Entry points, at the top of this file, and what they call below:
 *
 *   store_read    for_each_page (cold_read_ahead_start: a request's cold
 *                 pages in one disk read) > page_op > read_page >
 *                 load_contents: memory (decode_page), or disk: read_cold
 *                 (cold_read_ahead_take or tier_fetch, tier_generation,
 *                 tier_check_fetched), then finish_tiered_read
 *                 (slot_promote)
 *   store_write   for_each_page_reclaim > page_op > write_page:
 *                 prepare_deferred or prepare_page, then write_with_room >
 *                 try_install > install_page > claim_slot, store_object
 *                 (zs_malloc), slot_publish; at the pool's limit
 *                 make_room (writeback_make_room), at the area's
 *                 store_area_make_room
 *   store_zero    the same walk: zero_page (slot_release), or for part of
 *                 a page, as a partial store_write, modify_page >
 *                 write_with_room > try_modify > load_contents (lock held)
 *                 > install_page
 *   store_extent  page_is_hole
 *
 * and two callbacks: store_deferred_ops (compress_deferred, the
 * compressor thread) and store_recompress_ops (recompress_visit).
 *
 * A whole-page write is prepared (same-filled check, compression into a
 * stack buffer) with no lock held, then installed under the slot's lock:
 * allocate, copy, publish, free the old object.  A partial-page write or
 * zero holds the slot's lock across read-modify-write so that two partial
 * writes to one page cannot lose each other's bytes.  Reads decompress
 * under the slot's lock, which is also what keeps compaction from moving
 * the object meanwhile (zsmalloc.h: the owner lock).
 *
 * A page written back to the backing file (SLOT_TIERED) is read by one
 * function, read_cold: a whole-page read drops its slot lock across the
 * disk read, so reads of cold pages do not stall their stripe, then
 * relocks, looks again if the slot changed meanwhile, and takes the
 * bytes only if they are the record written at the slot's place in the
 * generation that place has now (tier_generation, taken once, under the
 * slot lock: why the slot word alone is not enough is read_cold's
 * comment, issue #27).  Partial-page writes, rare on a swap device, keep
 * the lock across the read.
 *
 * When the pool is at its limit and there is a backing file, a write does
 * not go to disk ahead of colder pages: it drops its slot lock, waits for
 * a batch of cold pages to go to disk (writeback.c), and retries; at its
 * area's limit, it writes back the area's own pages (store-areas.c).
 * Whole-page and partial writes share that loop (write_with_room).
 *
 * A write to a page whose 2 MiB has no slot chunk yet makes one
 * (slot-table.h), and the chunk's 4.5 KiB count against the pool limit
 * and the area's limit as a page's bytes do: refused as a page would be
 * when there is no room, before anything is allocated.  Reads, trims and
 * zeroes of pages never written make none, and a chunk whose last page
 * is trimmed retires; a zero of a chunk or more frees what it retired
 * before it returns (an export dropped gives its chunks back), smaller
 * requests leave them for a batch (slot_state_reclaim).
 *
 * What a slot holds changes only through slot-state.h; the deferred
 * compressor reaches this file through store_deferred_ops, the
 * recompressor through store_recompress_ops.  Locks: one
 * slot lock at a time (lock order: lock-order.h).  Counters are relaxed
 * atomics: each is exact, a snapshot of several is not simultaneous.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "page.h"
#include "rounding.h"
#include "store-internal.h"

/* Rounds of writeback a write at its area's limit may ask for. */
#define AREA_ROOM_TRIES 4

enum store_op { OP_READ, OP_WRITE, OP_ZERO };

static int for_each_page (struct store *store, enum store_op op,
                          unsigned char *buf, uint64_t count,
                          uint64_t offset);
static int for_each_page_reclaim (struct store *store, enum store_op op,
                                  unsigned char *buf, uint64_t count,
                                  uint64_t offset);
static bool range_is_valid (struct store *store, uint64_t count,
                            uint64_t offset);
static bool page_is_hole (struct store *store, uint64_t slot);

int
store_read (struct store *store, void *buf, uint64_t count, uint64_t offset)
{
  return for_each_page (store, OP_READ, buf, count, offset);
}

int
store_write (struct store *store, const void *buf, uint64_t count,
             uint64_t offset)
{
  /* The cast is safe: OP_WRITE only reads from BUF. */
  int r = for_each_page_reclaim (store, OP_WRITE, (unsigned char *) buf,
                                 count, offset);
  writeback_wake_early (store->writeback);
  return r;
}

int
store_zero (struct store *store, uint64_t count, uint64_t offset)
{
  return for_each_page_reclaim (store, OP_ZERO, NULL, count, offset);
}

int
store_extent (struct store *store, uint64_t offset, uint64_t count,
              bool *zero, uint64_t *length)
{
  if (count == 0 || !range_is_valid (store, count, offset))
    return -EINVAL;
  uint64_t end = offset + count;
  uint64_t at = round_down (offset, CSWAP_PAGE_SIZE);

  *zero = page_is_hole (store, at / CSWAP_PAGE_SIZE);
  for (at += CSWAP_PAGE_SIZE; at < end; ) {
    uint64_t slot = at / CSWAP_PAGE_SIZE;
    if (*zero && !slot_exists (&store->slots, slot)) {
      /* A chunk never made: all of it is a hole. */
      at = (slot / SLOTS_PER_CHUNK + 1) * SLOTS_PER_CHUNK * CSWAP_PAGE_SIZE;
      continue;
    }
    if (page_is_hole (store, slot) != *zero)
      break;
    at += CSWAP_PAGE_SIZE;
  }
  *length = (at < end ? at : end) - offset;
  return 0;
}

/* A page ready to install: what prepare_page() decided for it. */
struct prepared_page {
  enum slot_type type;
  enum codec_id codec;
  uint64_t same_value;
  const void *bytes;            /* SLOT_STORED: LENGTH bytes to copy */
  uint32_t length;
  bool deferred;                /* raw now, compressed later (deferred.c) */
  unsigned char compressed[CSWAP_PAGE_SIZE];
};

/* Decides how PAGE is kept: same-filled, compressed, or raw.  No lock. */
static void
prepare_page (struct store *store, const void *page, struct prepared_page *p)
{
  struct codec_config codec = store_codec_now (store);

  p->codec = codec.id;
  p->deferred = false;
  if (page_is_same_filled (page, &p->same_value)) {
    p->type = SLOT_SAME_FILLED;
    return;
  }
  p->type = SLOT_STORED;
  p->length = codec_compress_page (&codec, page, p->compressed,
                                   store->huge_threshold_bytes);
  p->bytes = p->compressed;
  if (p->length == 0) {
    p->length = CSWAP_PAGE_SIZE;
    p->bytes = page;
  }
}

/* As prepare_page, but a page that is not same-filled is queued for the
 * compressor thread, if the deferred queue has a place for it (taken
 * here: the caller gives it back or fills it with deferred_push).  False,
 * with nothing taken, when the page should be compressed now.
 *
 * What waits in the queue is the page in lz4 when the store's codec is
 * slower (zstd), raw otherwise or when lz4 does not shrink it.  lz4 costs
 * the writer about a third of zstd-1's time and keeps the queue's pages
 * at their lz4 size instead of 4 KiB each: up to DEFERRED_QUEUE_PAGES raw
 * pages were a third of stress-ng's peak (doc/design.md, "Deferred
 * compression"), and each took a fresh page from the allocator.
 */
static bool
prepare_deferred (struct store *store, uint64_t slot, const void *page,
                  struct prepared_page *p)
{
  static const struct codec_config queue_codec = { .id = CODEC_LZ4 };

  /* Near a pool limit, and in an area under a limit of its own, pages go
   * in compressed: queued ones would take the room the limit leaves and
   * could not be written back meanwhile.
   */
  if (!pool_limit_has_room (&store->limit, 2 * DEFERRED_QUEUE_PAGES)
      || store_area_limited (store, slot))
    return false;
  if (page_is_same_filled (page, &p->same_value)
      || !deferred_reserve (store->deferred))
    return false;
  p->type = SLOT_STORED;
  p->deferred = true;
  p->codec = store_codec_now (store).id;
  p->bytes = page;
  p->length = CSWAP_PAGE_SIZE;
  if (p->codec != queue_codec.id) {
    size_t length = codec_compress_page (&queue_codec, page, p->compressed,
                                         store->huge_threshold_bytes);
    if (length) {
      p->codec = queue_codec.id;
      p->bytes = p->compressed;
      p->length = length;
    }
  }
  return true;
}

/* Keeps pool_peak_bytes: a max kept by the writers, so the limit can be
 * checked after the fact (tests, the exit stats line).
 */
static void
note_pool_peak (struct store *store)
{
  uint64_t used = pool_limit_pool_bytes (&store->limit);
  uint64_t peak = counter_get (&store->count.pool_peak_bytes);

  while (used > peak
         && !atomic_compare_exchange_weak_explicit (&store->count.pool_peak_bytes,
                                                    &peak, used,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed))
    ;
}

/* The slot page for P, allocating and filling its object when it needs
 * one.  -EAGAIN: the pool is at its limit but a backing file can make
 * room; -ENOSPC: no room; -ENOMEM: no memory for a new zspage (the
 * machine had none to give the refill thread in time).  Called with the
 * slot's lock held.
 */
static int
store_object (struct store *store, uint64_t slot, const struct prepared_page *p,
              struct slot_page *page)
{
  *page = (struct slot_page) { .type = p->type, .codec = p->codec,
                               .value = p->same_value, .length = p->length };
  if (p->type == SLOT_SAME_FILLED)
    return 0;
  page->handle = zs_malloc (store->slots.pool, p->length, slot);
  if (page->handle == ZS_HANDLE_NONE) {
    if (errno == ETIMEDOUT)
      return -ENOMEM;
    if (errno != ENOSPC)
      return -ENOSPC;
    counter_add (&store->count.pool_limit_hits, 1);
    return store->writeback ? -EAGAIN : -ENOSPC;
  }
  memcpy (zs_object (store->slots.pool, page->handle), p->bytes, p->length);
  note_pool_peak (store);
  return 0;
}

/* The room a refused write asks for before it tries again: pool bytes
 * below the pool limit (-EAGAIN), bytes below its area's (-EDQUOT).
 */
struct room_wanted {
  uint32_t pool_bytes;
  uint32_t area_bytes;
};

/* SLOT's chunk held for a write of a page of LENGTH pool bytes to it,
 * made if there is none: 0, or -EDQUOT (the area has no room for the
 * chunk and the page), -EAGAIN (the pool has none for the chunk, and a
 * backing file can make it), -ENOSPC (and none can), -ENOMEM.  *WANT is
 * the room the chunk and page take.  Called with the slot's lock held.
 */
static int
claim_slot (struct store *store, uint64_t slot, uint32_t length,
            struct room_wanted *want)
{
  if (slot_claim (&store->slots, slot))
    return 0;
  *want = (struct room_wanted) { .pool_bytes = length + SLOT_CHUNK_BYTES,
                                 .area_bytes = length + SLOT_CHUNK_BYTES };
  if (!store_area_has_room (store, slot, want->area_bytes))
    return -EDQUOT;
  if (!pool_limit_has_room_bytes (&store->limit, SLOT_CHUNK_BYTES)) {
    counter_add (&store->count.pool_limit_hits, 1);
    return store->writeback ? -EAGAIN : -ENOSPC;
  }
  return slot_claim_new (&store->slots, slot);
}

/* Replaces what SLOT holds with P.  Called with the slot's lock held.  On
 * failure the slot keeps what it had.  -EAGAIN: the pool is full but a
 * backing file can make room; -EDQUOT: the area is at its limit; the
 * caller drops the lock, asks for *WANT (write_with_room) and tries
 * again.
 */
static int
install_page (struct store *store, uint64_t slot, const struct prepared_page *p,
              struct room_wanted *want)
{
  uint32_t length = p->type == SLOT_STORED ? p->length : 0;
  struct slot_page page;
  int r = claim_slot (store, slot, length, want);

  if (r)
    return r;
  *want = (struct room_wanted) { .pool_bytes = length, .area_bytes = length };
  if (p->type == SLOT_STORED
      && !store_area_has_room (store, slot, length))
    r = -EDQUOT;
  else if ((r = store_object (store, slot, p, &page)) == 0)
    slot_publish (&store->slots, slot, &page, p->deferred);
  slot_unclaim (&store->slots, slot);
  return r;
}

static int
decode_page (struct store *store, enum codec_id codec, const void *object,
             uint32_t length, void *page)
{
  if (length == CSWAP_PAGE_SIZE) {
    memcpy (page, object, CSWAP_PAGE_SIZE);
    return 0;
  }
  if (codec_decompress_page (codec, object, length, page) == 0)
    return 0;
  counter_add (&store->count.read_errors, 1);
  return -EIO;
}

/* The compressor thread's turn for SLOT (deferred.h): compresses its
 * queued object (raw or lz4) again with the store's codec, in its place,
 * if it is still deferred.
 */
static void
compress_deferred (void *owner, uint32_t slot)
{
  struct store *store = owner;
  unsigned char page_bytes[CSWAP_PAGE_SIZE];
  struct prepared_page p;
  struct slot_contents c;
  struct slot_page page;

  slot_lock (&store->slots, slot);
  if (slot_take_deferred (&store->slots, slot)) {
    slot_get (&store->slots, slot, &c);
    /* Kept only when smaller: an incompressible page stays raw, and a
     * page zstd does not shrink below lz4 (or for which there is no room)
     * stays in lz4, which reads as well.
     */
    if (decode_page (store, c.codec, c.object, c.length, page_bytes) == 0) {
      prepare_page (store, page_bytes, &p);
      if (p.type == SLOT_STORED && p.length < c.length
          && store_object (store, slot, &p, &page) == 0)
        slot_publish_compressed (&store->slots, slot, &page);
    }
  }
  slot_unlock (&store->slots, slot);
}

const struct deferred_ops store_deferred_ops = {
  .compress = compress_deferred,
};

/* After install_page's -EAGAIN for WANT: 0 to try again, or -ENOSPC.  A
 * chunk's bytes are asked for as whole pages, an object's as the new
 * zspage it may need.
 */
static int
make_room (struct store *store, const struct room_wanted *want,
           uint64_t *deadline_ns)
{
  unsigned pages = want->pool_bytes > CSWAP_PAGE_SIZE
    ? (want->pool_bytes + CSWAP_PAGE_SIZE - 1) / CSWAP_PAGE_SIZE
    : zs_new_zspage_pages (store->slots.pool, want->pool_bytes);

  return writeback_make_room (store->writeback, pages, deadline_ns)
         ? -ENOSPC : 0;
}

/* A write's result for SLOT, with a refused page counted. */
static int
count_refusal (struct store *store, uint64_t slot, int r)
{
  struct store_counters *area = slot_area_counters (&store->slots, slot);

  if (r == -ENOSPC || r == -EDQUOT || r == -ENOMEM) {
    counter_add (&store->count.failed_writes, 1);
    if (area)
      counter_add (&area->failed_writes, 1);
  }
  /* pool_limit_hits, in an area's counters, counts its own limit's. */
  if (r == -EDQUOT && area)
    counter_add (&area->pool_limit_hits, 1);
  return r;
}

/* SLOT is tiered (C) and OBJECT holds its bytes, just read from disk:
 * decodes them into PAGE and, when the pool has room below its accept
 * threshold and read writeback is off, brings the page back into memory
 * and frees its disk copy.  Called with the slot's lock held.
 */
static int
finish_tiered_read (struct store *store, uint64_t slot,
                    const struct slot_contents *c, const void *object,
                    void *page)
{
  counter_add (&store->count.written_back_reads, 1);
  slot_touch (&store->slots, slot);
  if (pool_limit_may_promote (&store->limit, c->length)
      && !writeback_keeps_reads (store->writeback)
      && store_area_has_room (store, slot, c->length))
    slot_promote (&store->slots, slot, object, c->length);
  return decode_page (store, c->codec, object, c->length, page);
}

/* The cold read: SLOT's page, tiered at the place C names, read from
 * disk into OBJECT (C->length bytes).  Called with the slot's lock held,
 * and returns with it held.  With DROP_LOCK the lock is dropped across
 * the disk read, so a cold read does not stall its stripe (the whole-page
 * read), and the blocks are taken from AHEAD where its request's
 * read-ahead fetched them (cold-read-ahead.h; checked as any); without,
 * it is held throughout (a partial write's read-modify-write).  Returns 0, a negative errno (counted), or
 * LOOK_AGAIN: the slot changed while its lock was dropped (rewritten,
 * trimmed, promoted or moved by the cleaner), so the caller reads what
 * it holds now.
 *
 * Why the generation: the slot word is not enough.  While the lock is
 * dropped, a trim, the segment freed and taken again, and the page's next
 * copy written back to the same offset with the same length give the
 * same slot word again, and the read may have fetched the old copy's
 * bytes, or half of each (issue #27).  So the generation of the place is
 * taken once, with the lock held and the slot pointing there (its record
 * live, the segment cannot be reused): after the read when the lock was
 * dropped, before it otherwise.  A place is written once a generation,
 * so bytes that pass the record's check against it (tier_check_fetched:
 * it binds a record to offset and generation) are the copy the slot
 * holds now, at no cost to the slot.  Bytes that fail it raced a reuse,
 * or are corrupt: they are read again with the lock held, where the same
 * generation still holds, and a second failure is a read error.
 */
#define LOOK_AGAIN 1

static int
read_cold (struct store *store, uint64_t slot, const struct slot_contents *c,
           bool drop_lock, const struct cold_read_ahead *ahead, void *object)
{
  struct slot_state *ss = &store->slots;
  uint32_t generation;
  int r = 0;

  if (drop_lock) {
    struct tier_record_buf fetched;

    slot_unlock (ss, slot);
    if (!cold_read_ahead_take (ahead, ss->tier, c->tier_offset, c->length,
                               &fetched))
      r = tier_fetch (ss->tier, c->tier_offset, c->length, &fetched);
    slot_lock (ss, slot);
    if (!slot_unchanged (ss, slot, c))
      return LOOK_AGAIN;
    generation = tier_generation (ss->tier, c->tier_offset);
    if (r == 0)
      r = tier_check_fetched (ss->tier, &fetched, c->tier_offset, c->length,
                              slot, generation, object);
  } else
    generation = tier_generation (ss->tier, c->tier_offset);
  /* Not read yet, or not the copy the slot holds now: read, lock held. */
  if (!drop_lock || r == -EBADMSG || r == -ESTALE)
    r = tier_read (ss->tier, c->tier_offset, c->length, slot, generation,
                   object);
  if (r)
    counter_add (&store->count.read_errors, 1);
  return r;
}

/* Reads SLOT, which holds C, into PAGE.  Called with the slot's lock
 * held, and returns with it held; a tiered page is read by read_cold,
 * with the lock dropped across the disk read when DROP_LOCK (and then
 * LOOK_AGAIN may come back).
 */
static int
load_contents (struct store *store, uint64_t slot,
               const struct slot_contents *c, bool drop_lock,
               const struct cold_read_ahead *ahead, void *page)
{
  switch (c->type) {
  case SLOT_ABSENT:
    memset (page, 0, CSWAP_PAGE_SIZE);
    return 0;
  case SLOT_SAME_FILLED:
    page_fill (page, c->value);
    return 0;
  case SLOT_STORED:
    slot_touch (&store->slots, slot);
    return decode_page (store, c->codec, c->object, c->length, page);
  case SLOT_TIERED: {
    unsigned char object[CSWAP_PAGE_SIZE];
    int r = read_cold (store, slot, c, drop_lock, ahead, object);
    return r ? r : finish_tiered_read (store, slot, c, object, page);
  }
  }
  abort ();                     /* a slot type the store never writes */
}

/* A whole-page read of SLOT into PAGE: load_contents with the lock
 * dropped across a disk read, until the slot holds still; a page read
 * from memory is noted for read writeback (a page read from disk stays
 * there: writeback-reads.c).
 */
static int
read_page (struct store *store, uint64_t slot,
           const struct cold_read_ahead *ahead, void *page)
{
  struct slot_state *ss = &store->slots;
  struct slot_contents c;
  int r;

  do {
    slot_lock (ss, slot);
    slot_get (ss, slot, &c);
    bool noting = c.type != SLOT_TIERED
                  && writeback_keeps_reads (store->writeback);
    bool was_marked = noting && slot_read_marked (ss, slot);
    r = load_contents (store, slot, &c, true, ahead, page);
    if (r == 0 && noting)
      writeback_note_read (store->writeback, slot, was_marked);
    slot_unlock (ss, slot);
  } while (r == LOOK_AGAIN);
  return r;
}

/* One try of a write to SLOT: takes and drops the slot's lock, and
 * returns install_page's result and the room it wants.
 */
typedef int write_try (struct store *store, uint64_t slot, void *arg,
                       struct room_wanted *want);

/* Runs TRY until it is done or refused for good: at the pool's limit it
 * waits for writeback to make room, at its area's limit it writes back
 * the area's own pages.  Writers in one area may take the room one made
 * before it retries: a few rounds of that, not forever.  The result,
 * with a refusal counted.
 */
static int
write_with_room (struct store *store, uint64_t slot, write_try *try,
                 void *arg)
{
  struct room_wanted want = { 0 };
  uint64_t room_deadline_ns = 0;        /* one bound for all the tries */
  int r;

  for (unsigned area_tries = 0;;) {
    r = try (store, slot, arg, &want);
    /* A try may make a chunk and retire it, refused: not many. */
    slot_state_reclaim (&store->slots, false);
    if (r == -EAGAIN
        && (r = make_room (store, &want, &room_deadline_ns)) == 0)
      continue;
    if (r != -EDQUOT || ++area_tries > AREA_ROOM_TRIES
        || (r = store_area_make_room (store, slot, want.area_bytes)) != 0)
      break;
  }
  return count_refusal (store, slot, r);
}

/* write_try of a prepared page (ARG). */
static int
try_install (struct store *store, uint64_t slot, void *arg,
             struct room_wanted *want)
{
  slot_lock (&store->slots, slot);
  int r = install_page (store, slot, arg, want);
  slot_unlock (&store->slots, slot);
  return r;
}

static int
write_page (struct store *store, uint64_t slot, const void *page)
{
  struct prepared_page p;
  struct room_wanted want;

  if (prepare_deferred (store, slot, page, &p)) {
    slot_lock (&store->slots, slot);
    int r = install_page (store, slot, &p, &want);
    slot_unlock (&store->slots, slot);
    deferred_push (store->deferred, r == 0 ? slot : DEFERRED_SLOT_NONE);
    if (r == 0 || r == -ENOMEM)
      return count_refusal (store, slot, r);
    /* No room for the queued copy: a smaller one may still fit. */
  }
  prepare_page (store, page, &p);
  return write_with_room (store, slot, try_install, &p);
}

static int
zero_page (struct store *store, uint64_t slot)
{
  if (!slot_exists (&store->slots, slot))
    return 0;                   /* never written: already zero */
  slot_lock (&store->slots, slot);
  slot_release (&store->slots, slot);
  slot_unlock (&store->slots, slot);
  return 0;
}

/* Part of one page to write: SRC NULL means zeroes. */
struct page_part {
  const void *src;
  uint32_t count, offset;
};

/* write_try of a part of a page (ARG): read-modify-write under the
 * slot's lock, so that two partial writes to one page cannot lose each
 * other's bytes.  Zeroes in a page that holds none need nothing.
 */
static int
try_modify (struct store *store, uint64_t slot, void *arg,
            struct room_wanted *want)
{
  const struct page_part *part = arg;
  unsigned char page[CSWAP_PAGE_SIZE];
  struct prepared_page p;
  struct slot_contents c;
  int r;

  slot_lock (&store->slots, slot);
  slot_get (&store->slots, slot, &c);
  if (part->src == NULL && c.type == SLOT_ABSENT)
    r = 0;
  else if ((r = load_contents (store, slot, &c, false, NULL, page)) == 0) {
    if (part->src)
      memcpy (page + part->offset, part->src, part->count);
    else
      memset (page + part->offset, 0, part->count);
    prepare_page (store, page, &p);
    r = install_page (store, slot, &p, want);
  }
  slot_unlock (&store->slots, slot);
  return r;
}

static int
modify_page (struct store *store, uint64_t slot, const void *src,
             uint32_t count, uint32_t offset)
{
  struct page_part part = { .src = src, .count = count, .offset = offset };

  if (src == NULL && !slot_exists (&store->slots, slot))
    return 0;                   /* never written: already zero */
  return write_with_room (store, slot, try_modify, &part);
}

static bool
range_is_valid (struct store *store, uint64_t count, uint64_t offset)
{
  return offset <= store->size_bytes && count <= store->size_bytes - offset;
}

/* The counter of OP's pages in COUNT. */
static atomic_uint_fast64_t *
op_counter (struct store_counters *count, enum store_op op)
{
  return op == OP_READ ? &count->reads
    : op == OP_WRITE ? &count->writes : &count->trims;
}

/* One page of OP at SLOT, counted in the store and in its area. */
static void
count_page_op (struct store *store, enum store_op op, uint64_t slot)
{
  struct store_counters *area = slot_area_counters (&store->slots, slot);

  counter_add (op_counter (&store->count, op), 1);
  if (area)
    counter_add (op_counter (area, op), 1);
}

/* OP on the N bytes of BUF at IN_PAGE of SLOT's page: whole pages
 * directly, partial ones through a bounce page or modify_page.
 */
static int
page_op (struct store *store, enum store_op op, unsigned char *buf,
         uint64_t slot, uint32_t in_page, uint32_t n,
         const struct cold_read_ahead *ahead)
{
  if (n == CSWAP_PAGE_SIZE)
    return op == OP_READ ? read_page (store, slot, ahead, buf)
      : op == OP_WRITE ? write_page (store, slot, buf)
      : zero_page (store, slot);
  if (op != OP_READ)
    return modify_page (store, slot, op == OP_WRITE ? buf : NULL, n, in_page);
  unsigned char page[CSWAP_PAGE_SIZE];
  int r = read_page (store, slot, ahead, page);
  if (r == 0)
    memcpy (buf, page + in_page, n);
  return r;
}

/* Walks the pages of [OFFSET, OFFSET+COUNT) and applies OP to each. */
static int
for_each_page (struct store *store, enum store_op op, unsigned char *buf,
               uint64_t count, uint64_t offset)
{
  struct cold_read_ahead ahead = { 0 };
  int r = 0;

  if (!range_is_valid (store, count, offset))
    return -EINVAL;
  /* Only where some page is on the file: else the look-up is waste. */
  if (op == OP_READ && store->writeback && count > 0
      && counter_get (&store->count.tiered_pages) > 0)
    cold_read_ahead_start (&store->read_ahead, &store->slots,
                           offset / CSWAP_PAGE_SIZE,
                           (round_up (offset + count, CSWAP_PAGE_SIZE)
                            - round_down (offset, CSWAP_PAGE_SIZE))
                           / CSWAP_PAGE_SIZE, &ahead);
  while (count > 0) {
    uint32_t in_page = offset % CSWAP_PAGE_SIZE;
    uint32_t n = CSWAP_PAGE_SIZE - in_page;

    if (n > count)
      n = count;
    r = page_op (store, op, buf, offset / CSWAP_PAGE_SIZE, in_page, n,
                 &ahead);
    if (r)
      break;
    count_page_op (store, op, offset / CSWAP_PAGE_SIZE);
    if (buf)
      buf += n;
    offset += n;
    count -= n;
  }
  cold_read_ahead_end (&store->read_ahead, &ahead);
  return r;
}

/* for_each_page, and then the chunks it retired freed: at once after
 * zeroes of a chunk or more (a drop), else when a batch has gathered.
 */
static int
for_each_page_reclaim (struct store *store, enum store_op op,
                       unsigned char *buf, uint64_t count, uint64_t offset)
{
  int r = for_each_page (store, op, buf, count, offset);

  slot_state_reclaim (&store->slots, op == OP_ZERO
                      && count >= SLOTS_PER_CHUNK * CSWAP_PAGE_SIZE);
  return r;
}

/* Whether SLOT reads as zeros without holding memory. */
static bool
page_is_hole (struct store *store, uint64_t slot)
{
  if (!slot_exists (&store->slots, slot))
    return true;
  slot_lock (&store->slots, slot);
  bool hole = slot_is_hole (&store->slots, slot);
  slot_unlock (&store->slots, slot);
  return hole;
}

/* The recompressor's visit of SLOT (recompress.h): a page idle since the
 * last pass is compressed again with COLD and replaced by that copy when
 * it is smaller.  The new object is allocated before the old one is
 * freed: at the pool limit there is no room for it, and the page stays as
 * it was.
 */
static bool
recompress_visit (void *owner, uint64_t slot, const struct codec_config *cold)
{
  struct store *store = owner;
  unsigned char page_bytes[CSWAP_PAGE_SIZE];
  struct prepared_page p = { .type = SLOT_STORED, .codec = cold->id };
  struct slot_contents c;
  struct slot_page page;
  bool done = false;

  slot_lock (&store->slots, slot);
  if (slot_take_cold (&store->slots, slot, cold->id)) {
    slot_get (&store->slots, slot, &c);
    if (decode_page (store, c.codec, c.object, c.length, page_bytes) == 0) {
      /* Kept only if below the current length: codec_compress_page
       * returns 0 for a page that does not compress below its bound.
       */
      p.length = codec_compress_page (cold, page_bytes, p.compressed, c.length);
      p.bytes = p.compressed;
      if (p.length && store_object (store, slot, &p, &page) == 0) {
        slot_publish_compressed (&store->slots, slot, &page);
        counter_add (&store->count.recompressed_pages, 1);
        counter_add (&store->count.recompressed_saved_bytes, c.length - p.length);
        done = true;
      }
    }
  }
  slot_unlock (&store->slots, slot);
  return done;
}

const struct recompress_ops store_recompress_ops = {
  .visit = recompress_visit,
};
