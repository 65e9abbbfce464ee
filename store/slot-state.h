/* cswap: a slot's state — the one place that changes what a slot holds.
 *
 * A slot is absent (reads as zeros), same-filled, stored in the pool, or
 * tiered (written back to the backing file), with a codec, CLOCK's
 * referenced bit, an idle age, and two marks: under writeback and
 * deferred (stored raw, to be compressed).  Every change goes through
 * here, each a verb with its inverse:
 *
 *   slot_claim(_new) / slot_unclaim      a chunk held for a write
 *   slot_publish / slot_release          a page written / trimmed
 *   slot_take_deferred,
 *     slot_publish_compressed            the compressor's turn (deferred.c)
 *   slot_to_tier / slot_promote          writeback settles a copied page /
 *                                        a page read from disk comes back
 *   slot_mark_writeback                  the page is copied into a batch
 *   slot_touch, slot_age,
 *     slot_select, slot_mark_read        CLOCK, idle ages, read marks
 *   slot_take_cold                       the recompressor's sweep
 *
 * and each keeps the store's page counters (store_counters: same-filled,
 * huge, compressed, tiered pages, compressed bytes, and the slot table's
 * chunks) in step, and those of the slot's area when the store has
 * several, so that no caller counts by hand.  A chunk made is charged to
 * the pool limit and to the area of the slot it was made for, until it
 * retires (slot-table.h): whether there is room for it is the caller's
 * question, asked before slot_claim_new.
 *
 * The owner lock is the slot's stripe (slot-table.h): the data path's,
 * compaction's (slot_zs_owner_ops) and the tier cleaner's (through
 * writeback-clean.c).  Every function below but slot_lock, slot_unlock,
 * slot_exists and slot_state_reclaim is called with the slot's lock held,
 * which debug builds assert; the lock order is lock-order.h's.
 */
#ifndef CSWAP_SLOT_STATE_H
#define CSWAP_SLOT_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "compress.h"
#include "lock-order.h"
#include "pool-limit.h"
#include "slot-table.h"
#include "store-counters.h"
#include "tier.h"
#include "zsmalloc.h"

enum slot_type {
  SLOT_ABSENT = 0,              /* reads as zeros */
  SLOT_SAME_FILLED = 1,         /* the repeated 8-byte value */
  SLOT_STORED = 2,              /* an object in the pool */
  SLOT_TIERED = 3,              /* an object on the backing file */
};

/* Idle ages run 0..SLOT_AGE_MAX: one step a sweep, 0 again on access. */
#define SLOT_AGE_MAX 3u

struct slot_state {
  struct slot_table table;      /* each slot under its stripe lock */
  struct zs_pool *pool;         /* set at creation */
  struct tier *tier;            /* set at creation; NULL: no backing file */
  struct pool_limit *limit;     /* set at creation: charged for chunks */
  struct store_counters *count; /* the store's; relaxed atomics */
  /* Areas (store.h): slot I counts into area_count[I / area_slots] as
   * well.  NULL: the store has one area, its own count.  Set at
   * creation.
   */
  struct store_counters *area_count;
  uint64_t area_slots;
};

/* The counters of SLOT's area, or NULL when the store is one area. */
static inline struct store_counters *
slot_area_counters (struct slot_state *ss, uint64_t slot)
{
  return ss->area_count ? &ss->area_count[slot / ss->area_slots] : NULL;
}

/* The slot table for SLOTS slots, counting into COUNT; 0 or -1 with
 * errno.  POOL and TIER are set by the caller when it has made them.
 */
extern int slot_state_init (struct slot_state *ss, uint64_t slots,
                            struct store_counters *count);
extern void slot_state_destroy (struct slot_state *ss);

/* The allocator's owner contract (zsmalloc.h); its owner is the
 * slot_state.
 */
extern const struct zs_owner_ops slot_zs_owner_ops;

static inline void
slot_lock (struct slot_state *ss, uint64_t slot)
{
  lock_acquire (slot_table_stripe (&ss->table, slot), LOCK_RANK_SLOT);
}

static inline void
slot_unlock (struct slot_state *ss, uint64_t slot)
{
  lock_release (slot_table_stripe (&ss->table, slot));
}

/* Whether SLOT's chunk was made (else it and its chunk are absent).  No
 * lock: a snapshot.
 */
static inline bool
slot_exists (struct slot_state *ss, uint64_t slot)
{
  return slot_chunk (&ss->table, slot) != NULL;
}

/* Before a write to SLOT: true when its chunk is there for it (the slot
 * holds a page, or the chunk is held for it until slot_publish or
 * slot_unclaim); false, and nothing held, when a chunk must be made
 * first (slot_claim_new).
 */
extern bool slot_claim (struct slot_state *ss, uint64_t slot);
/* Makes SLOT's chunk, held for it, charged to SLOT's area and the pool
 * limit (SLOT_CHUNK_BYTES; one made meanwhile by another slot's writer is
 * held instead).  0, or -ENOMEM with nothing held.
 */
extern int slot_claim_new (struct slot_state *ss, uint64_t slot);
/* After a write to SLOT that slot_claim or slot_claim_new held its chunk
 * for: if the slot holds no page (the write was refused), the hold goes,
 * and a chunk left holding nothing retires.
 */
extern void slot_unclaim (struct slot_state *ss, uint64_t slot);
/* Frees retired chunks (slot-table.h): a batch of them, or with ALL any.
 * With no slot lock held.
 */
extern void slot_state_reclaim (struct slot_state *ss, bool all);

/* What a slot holds, decoded. */
struct slot_contents {
  enum slot_type type;
  enum codec_id codec;
  uint64_t value;               /* SLOT_SAME_FILLED */
  const void *object;           /* SLOT_STORED: the object in the pool */
  uint64_t tier_offset;         /* SLOT_TIERED */
  uint32_t length;              /* STORED, TIERED: 1..4096, 4096 raw */
  uint64_t word;                /* for slot_unchanged only */
};
/* Fills *C; an access does not change it (slot_touch does). */
extern void slot_get (struct slot_state *ss, uint64_t slot,
                      struct slot_contents *c);
/* Whether SLOT still holds what slot_get put in *C. */
extern bool slot_unchanged (struct slot_state *ss, uint64_t slot,
                            const struct slot_contents *c);
/* Reads as zeros and holds no memory: absent, or same-filled with 0. */
extern bool slot_is_hole (struct slot_state *ss, uint64_t slot);

/* A page for a slot to hold: same-filled VALUE, or the pool object
 * HANDLE of LENGTH bytes (4096: raw) in CODEC.
 */
struct slot_page {
  enum slot_type type;          /* SLOT_SAME_FILLED or SLOT_STORED */
  enum codec_id codec;
  uint64_t value;
  zs_handle handle;
  uint32_t length;
};
/* A write: SLOT (claimed) now holds PAGE, raw for the compressor when
 * DEFERRED, and what it held is freed.  An access.
 */
extern void slot_publish (struct slot_state *ss, uint64_t slot,
                          const struct slot_page *page, bool deferred);
/* Empties SLOT, freeing its object or disk copy (no-op when absent); a
 * chunk left holding nothing retires.
 */
extern void slot_release (struct slot_state *ss, uint64_t slot);
/* The compressor's turn: if SLOT is still deferred, clears the mark and
 * returns true (its object is then read with slot_get); else false.
 */
extern bool slot_take_deferred (struct slot_state *ss, uint64_t slot);
/* The compressed copy PAGE replaces the queued object of a slot just taken
 * by slot_take_deferred.  Not an access: CLOCK and age bits stay.
 */
extern void slot_publish_compressed (struct slot_state *ss, uint64_t slot,
                                     const struct slot_page *page);

/* An access: referenced, age 0, and a writeback in flight cancelled. */
extern void slot_touch (struct slot_state *ss, uint64_t slot);
/* A tiered SLOT, just read from disk into OBJECT (LENGTH bytes), comes
 * back into the pool, and its disk copy is freed.  False (nothing
 * changed) when the pool has no room.
 */
extern bool slot_promote (struct slot_state *ss, uint64_t slot,
                          const void *object, uint32_t length);

/* Which pages a writeback sweep takes (writeback-select.c). */
enum slot_pick {
  SLOT_PICK_CLOCK,              /* referenced bit clear; clears set ones */
  SLOT_PICK_IDLE,               /* idle age at least min_age */
  SLOT_PICK_ALL,
  SLOT_PICK_READ_MARKED,        /* read and untouched since (slot_mark_read) */
};
struct slot_selection {
  enum slot_pick pick;
  unsigned min_age;             /* SLOT_PICK_IDLE */
  bool include_huge;            /* raw pages too */
  uint64_t first, end;          /* the slots swept, [first, end) (one
                                   area's); end 0: the whole table */
};
/* Whether SEL takes SLOT: a stored page, neither deferred nor already in
 * a batch.  CLOCK gives a referenced page its second chance here.
 */
extern bool slot_select (struct slot_state *ss, uint64_t slot,
                         const struct slot_selection *sel);
/* The stored object of SLOT, and its *LENGTH. */
extern const void *slot_object (struct slot_state *ss, uint64_t slot,
                                uint32_t *length);
/* SLOT's object was copied into a batch: any access from now on
 * cancels (slot_touch clears the mark).
 */
extern void slot_mark_writeback (struct slot_state *ss, uint64_t slot);
/* The batch that copied SLOT is done, WRITTEN or failed: the slot moves
 * to its disk copy at OFFSET of LENGTH if untouched meanwhile (true),
 * else the disk copy is freed (false).  The mark is cleared either way.
 */
extern bool slot_to_tier (struct slot_state *ss, uint64_t slot, bool written,
                          uint64_t offset, uint32_t length);
/* The idle sweep: a stored page grows one age older, to SLOT_AGE_MAX. */
extern void slot_age (struct slot_state *ss, uint64_t slot);

/* The recompressor's sweep (recompress.c): whether SLOT holds a
 * compressed page (not raw, deferred or in a writeback batch) in another
 * codec than COLD that has been idle since the sweep before; one not idle
 * that long is aged for the next sweep.
 */
extern bool slot_take_cold (struct slot_state *ss, uint64_t slot,
                            enum codec_id cold);

/* Read writeback (writeback-reads.c): whether SLOT carries a read mark,
 * whether it may take one (stored, not deferred), and the marking.
 */
extern bool slot_read_marked (struct slot_state *ss, uint64_t slot);
extern bool slot_read_markable (struct slot_state *ss, uint64_t slot);
extern void slot_mark_read (struct slot_state *ss, uint64_t slot);

/* The tier cleaner's questions (tier_owner_ops): whether slot COOKIE
 * holds the record at OFFSET of LENGTH, and its move to TO, taken only
 * if it still does.
 */
extern bool slot_owns_record (struct slot_state *ss, uint32_t cookie,
                              uint64_t offset, uint32_t length);
extern bool slot_retarget_record (struct slot_state *ss, uint32_t cookie,
                                  uint64_t from, uint64_t to,
                                  uint32_t length);

/* Adoption (store-persist.c): the slots of a dead process's store, in the
 * homes the table was given (slot_table_set_homes), taken as they are,
 * before any other use and before the allocator's own adoption ends.
 * Every slot is made whole (slot-state.c's top comment: its flags agree
 * with its word), counted, and its chunk hooked back if it holds a page.
 * OPS->object is asked to take each stored page's object (false: it
 * cannot be one, and the page is lost), OPS->tiered each page's record
 * on the backing file (false: the file's records are not this store's
 * to read, or it cannot be one); OPS->lost is told of every page lost
 * (either refused), which then reads as absent in the store, and so
 * must be refused by the front end; OPS->deferred of every page still
 * waiting for the compressor (raw or lz4, readable as it is).
 */
struct slot_adopt_ops {
  bool (*object) (void *arg, zs_handle handle, uint32_t length,
                  uint64_t slot);
  bool (*tiered) (void *arg, uint64_t offset, uint32_t length);
  void (*lost) (void *arg, uint64_t slot);
  void (*deferred) (void *arg, uint64_t slot);
};
struct slot_adoption {
  uint64_t pages;               /* adopted */
  uint64_t lost;
};
/* 0, or -1 with errno (nothing adopted). */
extern int slot_state_adopt (struct slot_state *ss,
                             const struct slot_adopt_ops *ops, void *arg,
                             struct slot_adoption *result);

#endif /* CSWAP_SLOT_STATE_H */
