/* cswap: the store's slot table — one slot per 4 KiB page of the device.
 *
 * A slot is 9 bytes: an 8-byte word and a flags byte, kept in two arrays
 * of a chunk so that neither is padded.  What the two hold (same-filled
 * value, allocator handle, disk offset; type, codec, CLOCK and idle bits)
 * is slot-state.c's, drawn there: this file is only where slots live, and
 * nothing but slot-state.c reads or writes a slot's word or flags.
 *
 * Chunks of SLOTS_PER_CHUNK slots are made on first write, so an unused
 * 64 GiB device costs its chunk directory (8 bytes per 2 MiB) and nothing
 * more.  Chunks are never freed: swap reuses its slots, and a chunk that
 * held data once is likely to again.
 *
 * Locking: slots are protected by striped mutexes (slot_table_stripe()),
 * slot i by stripe i % SLOT_LOCK_STRIPES, so that neighbouring pages,
 * which the kernel writes together, fall on different stripes.  A stripe
 * costs no byte per slot, where a lock bit would need a futex word per
 * slot.  The chunk directory is filled with compare-and-swap and read
 * without a lock.  The stripes' place in the lock order: lock-order.h
 * (the slot lock).
 */
#ifndef CSWAP_SLOT_TABLE_H
#define CSWAP_SLOT_TABLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define SLOTS_PER_CHUNK 512
#define SLOT_LOCK_STRIPES 1024

/* Slot I's word and flags: protected by slot_table_stripe (slot). */
struct slot_chunk {
  uint64_t word[SLOTS_PER_CHUNK];
  uint8_t flags[SLOTS_PER_CHUNK];
};

/* A mutex on its own cache line, so stripes do not share one. */
struct slot_lock_stripe {
  pthread_mutex_t mutex;
} __attribute__ ((aligned (64)));

struct slot_table {
  uint64_t slots;                       /* set at init */
  uint64_t chunks;                      /* set at init */
  _Atomic (struct slot_chunk *) *directory;     /* no lock: CAS, acquire */
  atomic_uint_fast64_t chunks_made;     /* relaxed atomic */
  struct slot_lock_stripe *stripes;     /* set at init */
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

/* The stripe lock of SLOT. */
static inline pthread_mutex_t *
slot_table_stripe (struct slot_table *table, uint64_t slot)
{
  return &table->stripes[slot % SLOT_LOCK_STRIPES].mutex;
}

#endif /* CSWAP_SLOT_TABLE_H */
