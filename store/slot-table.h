/* cswap: the store's slot table — one slot per 4 KiB page of the device.
 *
 * A slot is 9 bytes: an 8-byte word and a flags byte, kept in two arrays
 * of a chunk so that neither is padded.  The word is the same-filled value
 * of a same-filled page, or the allocator handle and compressed length of
 * a stored page, or the disk offset and length of a page written back to
 * the backing file (tier/); the flags byte says which, with which codec,
 * and how recently the page was used.
 *
 *   word (SLOT_STORED):  handle << SLOT_LENGTH_BITS | length (1..4096)
 *   word (SLOT_TIERED):  (disk offset / 16) << SLOT_LENGTH_BITS | length;
 *                        objects start on TIER_OFFSET_UNIT (16-byte)
 *                        boundaries, so 51 bits
 *                        of offset/16 address 32 PiB (44 would do for the
 *                        256 TiB an 8 TiB device could ever need)
 *   flags:               bits 0-1 type, bit 2 codec, bit 3 referenced,
 *                        bits 4-5 idle age, bit 6 under writeback,
 *                        bit 7 deferred (stored raw, to be compressed:
 *                        deferred.c)
 *
 * Referenced (CLOCK's second chance) is set by every read and write and
 * cleared by the writeback hand (and by a read's mark for read
 * writeback, with the age at its top); the idle age (0..3) is reset by every
 * access and advanced by the periodic idle sweep.  Under-writeback is set
 * when the writer copies the object into a batch; any access clears it,
 * which is how the writer learns, when the batch completes, that the page
 * was touched meanwhile and must stay in memory.
 *
 * Chunks of SLOTS_PER_CHUNK slots are made on first write, so an unused
 * 64 GiB device costs its chunk directory (8 bytes per 2 MiB) and nothing
 * more.  Chunks are never freed: swap reuses its slots, and a chunk that
 * held data once is likely to again.
 *
 * Locking: slots are protected by striped mutexes (slot_lock()), slot i by
 * stripe i % SLOT_LOCK_STRIPES, so that neighbouring pages, which the
 * kernel writes together, fall on different stripes.  A stripe costs no
 * byte per slot, where a lock bit would need a futex word per slot.  The
 * chunk directory is filled with compare-and-swap and read without a lock.
 */
#ifndef CSWAP_SLOT_TABLE_H
#define CSWAP_SLOT_TABLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "compress.h"
#include "tier.h"
#include "zsmalloc.h"

enum slot_type {
  SLOT_ABSENT = 0,              /* reads as zeros */
  SLOT_SAME_FILLED = 1,         /* word: the repeated 8-byte value */
  SLOT_STORED = 2,              /* word: handle and length */
  SLOT_TIERED = 3,              /* word: disk offset and length */
};

#define SLOT_TYPE_MASK 0x3u
#define SLOT_CODEC_SHIFT 2
#define SLOT_CODEC_MASK (0x1u << SLOT_CODEC_SHIFT)
#define SLOT_REFERENCED 0x08u
#define SLOT_AGE_SHIFT 4
#define SLOT_AGE_MASK (0x3u << SLOT_AGE_SHIFT)
#define SLOT_AGE_MAX 3u
#define SLOT_WRITEBACK 0x40u
#define SLOT_DEFERRED 0x80u
#define SLOT_LENGTH_BITS 13     /* lengths 1..4096 */
#define SLOTS_PER_CHUNK 512
#define SLOT_LOCK_STRIPES 1024

_Static_assert (CODEC_COUNT <= 2, "the slot has one bit for the codec");
_Static_assert (ZS_HANDLE_BITS + SLOT_LENGTH_BITS <= 64,
                "a handle and a length fit in a slot word");

struct slot_chunk {
  uint64_t word[SLOTS_PER_CHUNK];
  uint8_t flags[SLOTS_PER_CHUNK];
};

/* A mutex on its own cache line, so stripes do not share one. */
struct slot_lock_stripe {
  pthread_mutex_t mutex;
} __attribute__ ((aligned (64)));

struct slot_table {
  uint64_t slots;
  uint64_t chunks;
  _Atomic (struct slot_chunk *) *directory;
  atomic_uint_fast64_t chunks_made;
  struct slot_lock_stripe *stripes;
};

extern int slot_table_init (struct slot_table *table, uint64_t slots);
extern void slot_table_destroy (struct slot_table *table);
/* Bytes of slot table in use: the directory, the locks, and every chunk made. */
extern uint64_t slot_table_bytes (struct slot_table *table);

/* The chunk holding SLOT, or NULL if none was made yet (all absent). */
static inline struct slot_chunk *
slot_chunk (struct slot_table *table, uint64_t slot)
{
  return atomic_load_explicit (&table->directory[slot / SLOTS_PER_CHUNK],
                               memory_order_acquire);
}

/* The chunk holding SLOT, made if needed; NULL when out of memory. */
extern struct slot_chunk *slot_chunk_make (struct slot_table *table,
                                           uint64_t slot);

static inline pthread_mutex_t *
slot_lock (struct slot_table *table, uint64_t slot)
{
  return &table->stripes[slot % SLOT_LOCK_STRIPES].mutex;
}

static inline enum slot_type
slot_flags_type (uint8_t flags)
{
  return flags & SLOT_TYPE_MASK;
}

static inline enum codec_id
slot_flags_codec (uint8_t flags)
{
  return (flags & SLOT_CODEC_MASK) >> SLOT_CODEC_SHIFT;
}

static inline uint8_t
slot_flags_make (enum slot_type type, enum codec_id codec)
{
  return type | (codec << SLOT_CODEC_SHIFT);
}

static inline unsigned
slot_flags_age (uint8_t flags)
{
  return (flags & SLOT_AGE_MASK) >> SLOT_AGE_SHIFT;
}

static inline uint8_t
slot_flags_with_age (uint8_t flags, unsigned age)
{
  return (flags & ~SLOT_AGE_MASK) | age << SLOT_AGE_SHIFT;
}

/* An access: referenced, age 0, and no longer safe to drop from memory. */
static inline uint8_t
slot_flags_touch (uint8_t flags)
{
  return (flags & ~(SLOT_AGE_MASK | SLOT_WRITEBACK)) | SLOT_REFERENCED;
}

/* A read the kernel made, marked for read writeback (writeback-reads.c):
 * idle age at the top and referenced clear, a pair every access undoes.
 */
static inline uint8_t
slot_flags_mark_read (uint8_t flags)
{
  return slot_flags_with_age (flags, SLOT_AGE_MAX) & ~SLOT_REFERENCED;
}

static inline bool
slot_flags_read_marked (uint8_t flags)
{
  return slot_flags_age (flags) == SLOT_AGE_MAX && !(flags & SLOT_REFERENCED);
}

static inline uint64_t
slot_word_tier_offset (uint64_t word)
{
  return (word >> SLOT_LENGTH_BITS) * TIER_OFFSET_UNIT;
}

static inline uint64_t
slot_word_make_tiered (uint64_t offset, uint32_t length)
{
  return offset / TIER_OFFSET_UNIT << SLOT_LENGTH_BITS | length;
}

static inline zs_handle
slot_word_handle (uint64_t word)
{
  return word >> SLOT_LENGTH_BITS;
}

static inline uint32_t
slot_word_length (uint64_t word)
{
  return word & ((1u << SLOT_LENGTH_BITS) - 1);
}

static inline uint64_t
slot_word_make (zs_handle handle, uint32_t length)
{
  return (uint64_t) handle << SLOT_LENGTH_BITS | length;
}

#endif /* CSWAP_SLOT_TABLE_H */
