/* cswap: a slot's state (see slot-state.h) — its bits, and every change.
 *
 * A slot is an 8-byte word and a flags byte (slot-table.h keeps them).
 * The word is the same-filled value of a same-filled page, or the
 * allocator handle and compressed length of a stored page, or the disk
 * offset and length of a page written back to the backing file (tier/);
 * the flags byte says which, with which codec, and how recently the page
 * was used.
 *
 *   word (SLOT_STORED):  kind | handle << SLOT_LENGTH_BITS | length
 *                        (1..4096)
 *   word (SLOT_TIERED):  kind | (disk offset / 16) << SLOT_LENGTH_BITS |
 *                        length; objects start on TIER_OFFSET_UNIT
 *                        (16-byte) boundaries, so 48 bits of offset/16
 *                        address 4 PiB (44 would do for the 256 TiB an
 *                        8 TiB device could ever need)
 *   kind (bits 61-63):   WORD_OBJECT, WORD_TIERED for a tiered one, and
 *                        the codec: the type and codec the flags say too
 *   flags:               bits 0-1 type, bit 2 codec, bit 3 referenced,
 *                        bits 4-5 idle age, bit 6 under writeback,
 *                        bit 7 deferred (stored raw or in lz4, to be
 *                        compressed again: deferred.c)
 *
 * Referenced (CLOCK's second chance) is set by every read and write and
 * cleared by the writeback hand (and by a read's mark for read
 * writeback, with the age at its top); the idle age (0..3) is reset by every
 * access and advanced by the periodic idle sweep.  Under-writeback is set
 * when the writer copies the object into a batch; any access clears it,
 * which is how the writer learns, when the batch completes, that the page
 * was touched meanwhile and must stay in memory.
 *
 * Only this file masks or shifts the bits: everything else asks through
 * slot-state.h.  Every change of type goes through set_slot(), which
 * uncounts what the slot held and counts what it holds.
 *
 * A store that outlives its process (store-segment.h) may be killed
 * between any two instructions, and a new process must then find every
 * page the kernel was told is written.  So:
 *  - a slot's word is written before its flags, and the word of a page
 *    object says by itself what it is (its kind bits): a change the
 *    daemon makes on its own (the compressor's, the recompressor's,
 *    writeback's, a promotion) changes the word alone in one store, and
 *    the flags only to agree with it.  A half-made change of the kernel's
 *    own (a write or a trim, whose flags may still be the old page's) is
 *    one it was never told is done: it sends it again (ublk's
 *    REISSUE), and it is made whole then.
 *  - what a slot held is freed after the slot names what it holds now,
 *    never before: a kill in between leaves an object no slot names,
 *    which adoption frees (slot_state_adopt), never a slot naming memory
 *    given back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "page.h"
#include "slot-state.h"

#define SLOT_TYPE_MASK 0x3u
#define SLOT_CODEC_SHIFT 2
#define SLOT_CODEC_MASK (0x1u << SLOT_CODEC_SHIFT)
#define SLOT_REFERENCED 0x08u
#define SLOT_AGE_SHIFT 4
#define SLOT_AGE_MASK (0x3u << SLOT_AGE_SHIFT)
#define SLOT_WRITEBACK 0x40u
#define SLOT_DEFERRED 0x80u
#define SLOT_LENGTH_BITS 13     /* lengths 1..4096 */
#define WORD_OBJECT (UINT64_C (1) << 61)        /* stored or tiered */
#define WORD_TIERED (UINT64_C (1) << 62)
#define WORD_CODEC_SHIFT 63
#define WORD_KIND_MASK (UINT64_C (7) << 61)
#define WORD_OFFSET_BITS 48

_Static_assert (CODEC_COUNT <= 2, "the slot has one bit for the codec");
_Static_assert (ZS_HANDLE_BITS + SLOT_LENGTH_BITS <= 61,
                "a handle and a length fit below a slot word's kind");
_Static_assert (WORD_OFFSET_BITS + SLOT_LENGTH_BITS <= 61,
                "an offset and a length fit below a slot word's kind");
_Static_assert (SLOT_AGE_MAX == SLOT_AGE_MASK >> SLOT_AGE_SHIFT,
                "the idle age fills its bits");

/* ---------------------------------------------------------- the bits -- */

static inline enum slot_type
flags_type (uint8_t flags)
{
  return flags & SLOT_TYPE_MASK;
}

static inline enum codec_id
flags_codec (uint8_t flags)
{
  return (flags & SLOT_CODEC_MASK) >> SLOT_CODEC_SHIFT;
}

static inline uint8_t
flags_make (enum slot_type type, enum codec_id codec)
{
  return type | (codec << SLOT_CODEC_SHIFT);
}

/* FLAGS with another type and codec, its CLOCK, age and marks kept. */
static inline uint8_t
flags_retype (uint8_t flags, enum slot_type type, enum codec_id codec)
{
  return (flags & ~(SLOT_TYPE_MASK | SLOT_CODEC_MASK)) | flags_make (type, codec);
}

static inline unsigned
flags_age (uint8_t flags)
{
  return (flags & SLOT_AGE_MASK) >> SLOT_AGE_SHIFT;
}

static inline uint8_t
flags_with_age (uint8_t flags, unsigned age)
{
  return (flags & ~SLOT_AGE_MASK) | age << SLOT_AGE_SHIFT;
}

/* An access: referenced, age 0, and no longer safe to drop from memory. */
static inline uint8_t
flags_touch (uint8_t flags)
{
  return (flags & ~(SLOT_AGE_MASK | SLOT_WRITEBACK)) | SLOT_REFERENCED;
}

/* A read the kernel made, marked for read writeback (writeback-reads.c):
 * idle age at the top and referenced clear, a pair every access undoes.
 */
static inline uint8_t
flags_mark_read (uint8_t flags)
{
  return flags_with_age (flags, SLOT_AGE_MAX) & ~SLOT_REFERENCED;
}

static inline bool
flags_read_marked (uint8_t flags)
{
  return flags_age (flags) == SLOT_AGE_MAX && !(flags & SLOT_REFERENCED);
}

static inline uint64_t
word_kind (enum codec_id codec, bool tiered)
{
  return WORD_OBJECT | (tiered ? WORD_TIERED : 0)
    | (uint64_t) codec << WORD_CODEC_SHIFT;
}

static inline uint64_t
word_tier_offset (uint64_t word)
{
  return (word >> SLOT_LENGTH_BITS
          & ((UINT64_C (1) << WORD_OFFSET_BITS) - 1)) * TIER_OFFSET_UNIT;
}

static inline uint64_t
word_make_tiered (uint64_t offset, uint32_t length, enum codec_id codec)
{
  return word_kind (codec, true)
    | offset / TIER_OFFSET_UNIT << SLOT_LENGTH_BITS | length;
}

static inline zs_handle
word_handle (uint64_t word)
{
  return word >> SLOT_LENGTH_BITS & ((UINT64_C (1) << ZS_HANDLE_BITS) - 1);
}

static inline uint32_t
word_length (uint64_t word)
{
  return word & ((1u << SLOT_LENGTH_BITS) - 1);
}

static inline uint64_t
word_make (zs_handle handle, uint32_t length, enum codec_id codec)
{
  return word_kind (codec, false)
    | (uint64_t) handle << SLOT_LENGTH_BITS | length;
}

/* WORD with another handle: compaction moved its object. */
static inline uint64_t
word_moved (uint64_t word, zs_handle handle)
{
  return (word & (WORD_KIND_MASK | ((1u << SLOT_LENGTH_BITS) - 1)))
    | (uint64_t) handle << SLOT_LENGTH_BITS;
}

/* ------------------------------------------------- where a slot lives -- */

/* A slot's chunk and index in it, its lock asserted (debug builds). */
struct slot_ref {
  struct slot_chunk *chunk;     /* NULL: never made, absent */
  unsigned i;
  uint64_t slot;
};

static inline struct slot_ref
slot_ref (struct slot_state *ss, uint64_t slot)
{
  lock_assert_held (slot_table_stripe (&ss->table, slot));
  return (struct slot_ref) { .chunk = slot_chunk (&ss->table, slot),
                             .i = slot % SLOTS_PER_CHUNK, .slot = slot };
}

static inline uint8_t
ref_flags (struct slot_ref r)
{
  return r.chunk ? r.chunk->flags[r.i] : SLOT_ABSENT;
}

/* Counts (SIGN +1) or uncounts (-1) what FLAGS and WORD hold. */
static void
count_slot (struct store_counters *count, uint8_t flags, uint64_t word,
            int sign)
{
  switch (flags_type (flags)) {
  case SLOT_ABSENT:
    break;
  case SLOT_SAME_FILLED:
    counter_add (&count->same_filled_pages, sign);
    break;
  case SLOT_STORED:
    counter_add (word_length (word) == CSWAP_PAGE_SIZE
                 ? &count->huge_pages : &count->compressed_pages, sign);
    counter_add (&count->compressed_bytes,
                 sign * (int64_t) word_length (word));
    break;
  case SLOT_TIERED:
    counter_add (&count->tiered_pages, sign);
    break;
  }
}

/* The one change of what a slot holds: uncount, set, count.  Frees
 * nothing: the callers free what the slot held when it is theirs to.
 */
static void
set_slot (struct slot_state *ss, struct slot_ref r, uint64_t word,
          uint8_t flags)
{
  struct store_counters *area = slot_area_counters (ss, r.slot);

  count_slot (ss->count, r.chunk->flags[r.i], r.chunk->word[r.i], -1);
  if (area)
    count_slot (area, r.chunk->flags[r.i], r.chunk->word[r.i], -1);
  /* The word first, in program order: what a kill between the two
   * leaves is the file's top comment's.
   */
  r.chunk->word[r.i] = word;
  atomic_signal_fence (memory_order_release);
  r.chunk->flags[r.i] = flags;
  count_slot (ss->count, flags, word, +1);
  if (area)
    count_slot (area, flags, word, +1);
}

/* What a slot held, kept to be freed once it holds something else. */
struct slot_old {
  uint8_t flags;
  uint64_t word;
};

static inline struct slot_old
slot_old (struct slot_ref r)
{
  return (struct slot_old) { r.chunk->flags[r.i], r.chunk->word[r.i] };
}

/* Frees the object or disk copy OLD names, which no slot names now. */
static void
free_old (struct slot_state *ss, struct slot_old old)
{
  if (flags_type (old.flags) == SLOT_STORED)
    zs_free (ss->pool, word_handle (old.word));
  else if (flags_type (old.flags) == SLOT_TIERED)
    tier_free (ss->tier, word_tier_offset (old.word), word_length (old.word));
}

int
slot_state_init (struct slot_state *ss, uint64_t slots,
                 struct store_counters *count)
{
  *ss = (struct slot_state) { .count = count };
  return slot_table_init (&ss->table, slots);
}

void
slot_state_destroy (struct slot_state *ss)
{
  slot_table_destroy (&ss->table);
}

/* The chunk's bytes, counted (SIGN +1) or uncounted (-1): the store's,
 * area TAG's, and the pool limit's charge.
 */
static void
count_chunk (struct slot_state *ss, uint32_t tag, int sign)
{
  int64_t bytes = sign * (int64_t) SLOT_CHUNK_BYTES;

  counter_add (&ss->count->slot_chunk_bytes, bytes);
  if (ss->area_count)
    counter_add (&ss->area_count[tag].slot_chunk_bytes, bytes);
  pool_limit_charge (ss->limit, bytes);
}

bool
slot_claim (struct slot_state *ss, uint64_t slot)
{
  struct slot_ref r = slot_ref (ss, slot);

  return flags_type (ref_flags (r)) != SLOT_ABSENT
    || slot_chunk_hold (&ss->table, slot);
}

int
slot_claim_new (struct slot_state *ss, uint64_t slot)
{
  lock_assert_held (slot_table_stripe (&ss->table, slot));
  uint32_t tag = ss->area_count ? slot / ss->area_slots : 0;
  int made = slot_chunk_make (&ss->table, slot, tag);

  if (made < 0)
    return -ENOMEM;
  if (made)
    count_chunk (ss, tag, +1);
  return 0;
}

/* SLOT, holding no page, gives up its hold of its chunk. */
static void
put_chunk (struct slot_state *ss, uint64_t slot)
{
  struct slot_chunk *retired = slot_chunk_put (&ss->table, slot);

  if (retired)
    count_chunk (ss, retired->tag, -1);
}

void
slot_unclaim (struct slot_state *ss, uint64_t slot)
{
  struct slot_ref r = slot_ref (ss, slot);

  if (flags_type (ref_flags (r)) == SLOT_ABSENT)
    put_chunk (ss, slot);
}

void
slot_state_reclaim (struct slot_state *ss, bool all)
{
  slot_table_reclaim (&ss->table, all);
}

/* -------------------------------------------------------- the owner -- */

static void
owner_lock (void *owner, uint32_t slot)
{
  slot_lock (owner, slot);
}

static void
owner_unlock (void *owner, uint32_t slot)
{
  slot_unlock (owner, slot);
}

/* Compaction moved SLOT's object from FROM to TO (owner lock held). */
static bool
owner_retarget (void *owner, uint32_t slot, zs_handle from, zs_handle to)
{
  struct slot_ref r = slot_ref (owner, slot);

  if (r.chunk == NULL || flags_type (r.chunk->flags[r.i]) != SLOT_STORED
      || word_handle (r.chunk->word[r.i]) != from)
    return false;
  r.chunk->word[r.i] = word_moved (r.chunk->word[r.i], to);
  return true;
}

const struct zs_owner_ops slot_zs_owner_ops = {
  .lock = owner_lock,
  .unlock = owner_unlock,
  .retarget = owner_retarget,
};

/* The chunk of slot COOKIE if it holds the record at OFFSET of LENGTH. */
static struct slot_chunk *
chunk_if_owned (struct slot_state *ss, uint32_t cookie, uint64_t offset,
                uint32_t length)
{
  if (cookie >= ss->table.slots)
    return NULL;
  struct slot_ref r = slot_ref (ss, cookie);

  if (r.chunk == NULL || flags_type (r.chunk->flags[r.i]) != SLOT_TIERED
      || word_tier_offset (r.chunk->word[r.i]) != offset
      || word_length (r.chunk->word[r.i]) != length)
    return NULL;
  return r.chunk;
}

bool
slot_owns_record (struct slot_state *ss, uint32_t cookie, uint64_t offset,
                  uint32_t length)
{
  return chunk_if_owned (ss, cookie, offset, length) != NULL;
}

bool
slot_retarget_record (struct slot_state *ss, uint32_t cookie, uint64_t from,
                      uint64_t to, uint32_t length)
{
  struct slot_chunk *chunk = chunk_if_owned (ss, cookie, from, length);

  if (chunk == NULL)
    return false;
  unsigned i = cookie % SLOTS_PER_CHUNK;
  chunk->word[i] = word_make_tiered (to, length, flags_codec (chunk->flags[i]));
  return true;
}

/* ------------------------------------------------------- the data path -- */

void
slot_get (struct slot_state *ss, uint64_t slot, struct slot_contents *c)
{
  struct slot_ref r = slot_ref (ss, slot);
  uint8_t flags = ref_flags (r);
  uint64_t word = r.chunk ? r.chunk->word[r.i] : 0;

  *c = (struct slot_contents) { .type = flags_type (flags),
                                .codec = flags_codec (flags), .word = word };
  switch (c->type) {
  case SLOT_ABSENT:
    break;
  case SLOT_SAME_FILLED:
    c->value = word;
    break;
  case SLOT_STORED:
    c->object = zs_object (ss->pool, word_handle (word));
    c->length = word_length (word);
    break;
  case SLOT_TIERED:
    c->tier_offset = word_tier_offset (word);
    c->length = word_length (word);
    break;
  }
}

bool
slot_unchanged (struct slot_state *ss, uint64_t slot,
                const struct slot_contents *c)
{
  struct slot_ref r = slot_ref (ss, slot);

  return flags_type (ref_flags (r)) == c->type
    && (r.chunk == NULL || r.chunk->word[r.i] == c->word);
}

bool
slot_is_hole (struct slot_state *ss, uint64_t slot)
{
  struct slot_ref r = slot_ref (ss, slot);
  enum slot_type type = flags_type (ref_flags (r));

  return type == SLOT_ABSENT
    || (type == SLOT_SAME_FILLED && r.chunk->word[r.i] == 0);
}

static uint64_t
page_word (const struct slot_page *page)
{
  return page->type == SLOT_SAME_FILLED ? page->value
    : word_make (page->handle, page->length, page->codec);
}

void
slot_publish (struct slot_state *ss, uint64_t slot,
              const struct slot_page *page, bool deferred)
{
  struct slot_ref r = slot_ref (ss, slot);
  struct slot_old old = slot_old (r);

  set_slot (ss, r, page_word (page),
            flags_touch (flags_make (page->type, page->codec))
            | (deferred ? SLOT_DEFERRED : 0));
  free_old (ss, old);
}

void
slot_release (struct slot_state *ss, uint64_t slot)
{
  struct slot_ref r = slot_ref (ss, slot);

  if (flags_type (ref_flags (r)) == SLOT_ABSENT)
    return;
  struct slot_old old = slot_old (r);
  set_slot (ss, r, 0, SLOT_ABSENT);
  free_old (ss, old);
  put_chunk (ss, slot);
}

bool
slot_take_deferred (struct slot_state *ss, uint64_t slot)
{
  struct slot_ref r = slot_ref (ss, slot);
  uint8_t flags = ref_flags (r);

  if (!(flags & SLOT_DEFERRED) || flags_type (flags) != SLOT_STORED)
    return false;
  r.chunk->flags[r.i] = flags & ~SLOT_DEFERRED;
  return true;
}

void
slot_publish_compressed (struct slot_state *ss, uint64_t slot,
                         const struct slot_page *page)
{
  struct slot_ref r = slot_ref (ss, slot);
  struct slot_old old = slot_old (r);

  set_slot (ss, r, page_word (page),
            flags_retype (old.flags, page->type, page->codec));
  free_old (ss, old);
}

void
slot_touch (struct slot_state *ss, uint64_t slot)
{
  struct slot_ref r = slot_ref (ss, slot);

  r.chunk->flags[r.i] = flags_touch (r.chunk->flags[r.i]);
}

bool
slot_promote (struct slot_state *ss, uint64_t slot, const void *object,
              uint32_t length)
{
  struct slot_ref r = slot_ref (ss, slot);
  uint8_t flags = r.chunk->flags[r.i];
  zs_handle handle = zs_malloc (ss->pool, length, slot);

  if (handle == ZS_HANDLE_NONE)
    return false;
  memcpy (zs_object (ss->pool, handle), object, length);
  struct slot_old old = slot_old (r);
  set_slot (ss, r, word_make (handle, length, flags_codec (flags)),
            flags_retype (flags, SLOT_STORED, flags_codec (flags)));
  free_old (ss, old);
  return true;
}

/* ------------------------------------------------------- writeback -- */

bool
slot_select (struct slot_state *ss, uint64_t slot,
             const struct slot_selection *sel)
{
  struct slot_ref r = slot_ref (ss, slot);
  uint8_t flags = ref_flags (r);

  /* A deferred page is about to shrink: write it when it has.  A page
   * already in this batch (the hand's second lap) must not go twice: the
   * bit is the quick test, writeback_batch_add the exact one, for a page
   * touched since it was copied.
   */
  if (flags_type (flags) != SLOT_STORED
      || (flags & (SLOT_DEFERRED | SLOT_WRITEBACK))
      || (!sel->include_huge
          && word_length (r.chunk->word[r.i]) == CSWAP_PAGE_SIZE))
    return false;
  switch (sel->pick) {
  case SLOT_PICK_CLOCK:
    if (flags & SLOT_REFERENCED) {
      r.chunk->flags[r.i] = flags & ~SLOT_REFERENCED;
      return false;
    }
    return true;
  case SLOT_PICK_IDLE:
    return flags_age (flags) >= sel->min_age;
  case SLOT_PICK_ALL:
    return true;
  case SLOT_PICK_READ_MARKED:
    return flags_read_marked (flags);
  }
  return false;
}

const void *
slot_object (struct slot_state *ss, uint64_t slot, uint32_t *length)
{
  struct slot_ref r = slot_ref (ss, slot);
  uint64_t word = r.chunk->word[r.i];

  *length = word_length (word);
  return zs_object (ss->pool, word_handle (word));
}

void
slot_mark_writeback (struct slot_state *ss, uint64_t slot)
{
  struct slot_ref r = slot_ref (ss, slot);

  r.chunk->flags[r.i] |= SLOT_WRITEBACK;
}

bool
slot_to_tier (struct slot_state *ss, uint64_t slot, bool written,
              uint64_t offset, uint32_t length)
{
  struct slot_ref r = slot_ref (ss, slot);
  uint8_t flags = ref_flags (r);

  /* Trimmed meanwhile, its chunk may be gone with it. */
  if (flags_type (flags) == SLOT_ABSENT) {
    tier_free (ss->tier, offset, length);
    return false;
  }
  if (written && (flags & SLOT_WRITEBACK)
      && flags_type (flags) == SLOT_STORED) {
    struct slot_old old = slot_old (r);
    set_slot (ss, r, word_make_tiered (offset, length, flags_codec (flags)),
              flags_retype (flags & ~SLOT_WRITEBACK, SLOT_TIERED,
                            flags_codec (flags)));
    free_old (ss, old);
    return true;
  }
  r.chunk->flags[r.i] = flags & ~SLOT_WRITEBACK;
  tier_free (ss->tier, offset, length);
  return false;
}

void
slot_age (struct slot_state *ss, uint64_t slot)
{
  struct slot_ref r = slot_ref (ss, slot);
  uint8_t flags = ref_flags (r);

  if (flags_type (flags) == SLOT_STORED && flags_age (flags) < SLOT_AGE_MAX)
    r.chunk->flags[r.i] = flags_with_age (flags, flags_age (flags) + 1);
}

bool
slot_take_cold (struct slot_state *ss, uint64_t slot, enum codec_id cold)
{
  struct slot_ref r = slot_ref (ss, slot);
  uint8_t flags = ref_flags (r);

  if (flags_type (flags) != SLOT_STORED
      || (flags & (SLOT_DEFERRED | SLOT_WRITEBACK))
      || flags_codec (flags) == cold
      || word_length (r.chunk->word[r.i]) == CSWAP_PAGE_SIZE)
    return false;
  if (flags_age (flags) >= 1)
    return true;
  r.chunk->flags[r.i] = flags_with_age (flags, 1);
  return false;
}

bool
slot_read_marked (struct slot_state *ss, uint64_t slot)
{
  return flags_read_marked (ref_flags (slot_ref (ss, slot)));
}

bool
slot_read_markable (struct slot_state *ss, uint64_t slot)
{
  uint8_t flags = ref_flags (slot_ref (ss, slot));

  return flags_type (flags) == SLOT_STORED && !(flags & SLOT_DEFERRED);
}

void
slot_mark_read (struct slot_state *ss, uint64_t slot)
{
  struct slot_ref r = slot_ref (ss, slot);

  r.chunk->flags[r.i] = flags_mark_read (r.chunk->flags[r.i]);
}

/* ------------------------------------------------------- adoption -- */

/* Slot I of CHUNK (slot SLOT) made whole after a kill: its flags agree
 * with its word where the word names a page object, and no mark of the
 * dead process's (a writeback batch) is left.  Returns its flags.
 */
static uint8_t
adopt_flags (struct slot_chunk *chunk, unsigned i)
{
  uint8_t flags = chunk->flags[i] & ~SLOT_WRITEBACK;
  uint64_t word = chunk->word[i];
  enum slot_type type = flags_type (flags);

  if (type == SLOT_STORED || type == SLOT_TIERED) {
    if (!(word & WORD_OBJECT))
      return SLOT_ABSENT;       /* cannot be: treated as a lost page */
    flags = flags_retype (flags, word & WORD_TIERED ? SLOT_TIERED
                          : SLOT_STORED, word >> WORD_CODEC_SHIFT);
  }
  if (flags_type (flags) != SLOT_STORED)
    flags &= ~SLOT_DEFERRED;
  return flags;
}

int
slot_state_adopt (struct slot_state *ss, const struct slot_adopt_ops *ops,
                  void *arg, struct slot_adoption *result)
{
  *result = (struct slot_adoption) { 0 };
  if (slot_table_adopt_begin (&ss->table))
    return -1;
  for (uint64_t k = 0; k < ss->table.chunks; k++) {
    struct slot_chunk *chunk = slot_table_home (&ss->table, k);
    uint64_t first = k * SLOTS_PER_CHUNK;
    uint32_t users = 0;

    if (chunk == NULL)
      continue;

    for (unsigned i = 0; i < SLOTS_PER_CHUNK && first + i < ss->table.slots;
         i++) {
      uint64_t slot = first + i;
      uint8_t was = chunk->flags[i], flags = adopt_flags (chunk, i);
      uint64_t word = chunk->word[i];
      bool lost = (flags_type (was) == SLOT_STORED
                   || flags_type (was) == SLOT_TIERED)
                  && flags_type (flags) == SLOT_ABSENT;

      if (flags_type (flags) == SLOT_TIERED
          && !ops->tiered (arg, word_tier_offset (word), word_length (word)))
        lost = true;
      else if (flags_type (flags) == SLOT_STORED
               && !ops->object (arg, word_handle (word), word_length (word),
                                slot))
        lost = true;
      if (lost) {
        chunk->word[i] = 0;
        chunk->flags[i] = SLOT_ABSENT;
        result->lost++;
        ops->lost (arg, slot);
        continue;
      }
      chunk->flags[i] = flags;
      if (flags_type (flags) == SLOT_ABSENT) {
        chunk->word[i] = 0;
        continue;
      }
      users++;
      result->pages++;
      count_slot (ss->count, flags, word, +1);
      if (ss->area_count)
        count_slot (&ss->area_count[slot / ss->area_slots], flags, word, +1);
      if (flags & SLOT_DEFERRED)
        ops->deferred (arg, slot);
    }
    if (users) {
      uint32_t tag = ss->area_count ? first / ss->area_slots : 0;

      slot_table_adopt_chunk (&ss->table, k, users, tag);
      count_chunk (ss, tag, +1);
    }
  }
  slot_table_adopt_end (&ss->table);
  return 0;
}
