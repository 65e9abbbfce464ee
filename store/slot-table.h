/* cswap: the store's slot table — one slot per 4 KiB page of the device.
 *
 * A slot is 9 bytes: an 8-byte word and a flags byte, kept in two arrays
 * of a chunk so that neither is padded.  What the two hold (same-filled
 * value, allocator handle, disk offset; type, codec, CLOCK and idle bits)
 * is slot-state.c's, drawn there: this file is only where slots live, and
 * nothing but slot-state.c reads or writes a slot's word or flags.
 *
 * Chunks of SLOTS_PER_CHUNK slots (SLOT_CHUNK_BYTES, about 4.5 KiB per
 * 2 MiB of device) are made for a write, so an unused 64 GiB device costs
 * its chunk directory (8 bytes per 2 MiB) and its lock stripes, and
 * nothing more; reads, trims and zeroes of a page never written make
 * none.  A chunk counts its users: the slots of it that hold a page, and
 * the writers that hold it for a slot about to (slot_chunk_hold).  The
 * last user gone, the chunk retires (slot_chunk_put): it is marked dead
 * (its count CHUNK_DEAD, after which no one can hold it), taken out of
 * the directory, and put in limbo; slot_table_reclaim frees what is in
 * limbo once no thread can still be looking at it.  So a chunk that holds
 * nothing is given back, and an export dropped gives all of its back.
 *
 * Locking: slots are protected by striped mutexes (slot_table_stripe()),
 * slot i by stripe i % SLOT_LOCK_STRIPES, so that neighbouring pages,
 * which the kernel writes together, fall on different stripes.  A stripe
 * costs no byte per slot, where a lock bit would need a futex word per
 * slot.  The stripes' place in the lock order: lock-order.h (the slot
 * lock).  The chunk directory is filled and emptied with compare-and-swap
 * and read without a lock, but a chunk is looked into only under the lock
 * of one of its slots: that is what makes freeing one safe.  A retired
 * chunk is out of the directory before it goes to limbo, so a thread that
 * takes a stripe after that finds it no more; slot_table_reclaim takes
 * and drops every stripe in turn (one at a time, with no slot lock held)
 * before it frees, which waits out every thread that found it before.  A
 * thread that still sees a dead chunk sees only absent slots in it (its
 * count was 0), and a writer that finds one helps take it out and makes a
 * new one.  The limbo is a lock-free stack, taken whole by the reclaimer.
 */
#ifndef CSWAP_SLOT_TABLE_H
#define CSWAP_SLOT_TABLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define SLOTS_PER_CHUNK 512
#define SLOT_LOCK_STRIPES 1024
/* Retired chunks that wait for a reclaim before one is due: their memory
 * is the slot table's only overhead beyond its live chunks, directory and
 * stripes (SLOT_LIMBO_CHUNKS * SLOT_CHUNK_BYTES, 72 KiB).
 */
#define SLOT_LIMBO_CHUNKS 16

/* Slot I's word and flags: protected by slot_table_stripe (slot). */
struct slot_chunk {
  uint64_t word[SLOTS_PER_CHUNK];
  uint8_t flags[SLOTS_PER_CHUNK];
  _Atomic uint32_t users;       /* atomic: slots holding a page, and
                                   writers holding it; CHUNK_DEAD: retired */
  uint32_t tag;                 /* set when made: the maker's (slot-state.c:
                                   the area charged) */
  struct slot_chunk *next;      /* in limbo */
};
#define SLOT_CHUNK_BYTES ((uint32_t) sizeof (struct slot_chunk))

/* A mutex on its own cache line, so stripes do not share one. */
struct slot_lock_stripe {
  pthread_mutex_t mutex;
} __attribute__ ((aligned (64)));

struct slot_table {
  uint64_t slots;                       /* set at init */
  uint64_t chunks;                      /* set at init */
  _Atomic (struct slot_chunk *) *directory;     /* no lock: CAS, acquire */
  atomic_uint_fast64_t chunks_allocated;        /* relaxed atomic: live,
                                                   and in limbo */
  _Atomic (struct slot_chunk *) limbo;  /* lock-free stack */
  atomic_uint limbo_chunks;             /* relaxed atomic */
  struct slot_lock_stripe *stripes;     /* set at init */
  struct slot_chunk *homes;             /* set before the first chunk is
                                           made; NULL: chunks are allocated */
  pthread_mutex_t make_lock;            /* with homes: one maker at a time */
  unsigned char *home_resident;         /* during adoption: mincore's */
};

extern int slot_table_init (struct slot_table *table, uint64_t slots);
extern void slot_table_destroy (struct slot_table *table);
/* The bytes the homes of a table of SLOTS slots take. */
extern size_t slot_table_homes_bytes (uint64_t slots);
/* Chunks live at HOMES (slot_table_homes_bytes long, zero-filled or a
 * dead process's) from now on.  Before any chunk is made.
 */
extern void slot_table_set_homes (struct slot_table *table, void *homes);
/* Adoption, before any other use: begin (0, or -1 with errno), then
 * chunk K's home to look into (NULL where no page of it was ever
 * touched: reading it would make the kernel fill those pages with
 * zeros), its return to the directory with USERS slots that hold a page
 * and TAG, and the end.
 */
extern int slot_table_adopt_begin (struct slot_table *table);
extern struct slot_chunk *slot_table_home (struct slot_table *table,
                                           uint64_t k);
extern void slot_table_adopt_end (struct slot_table *table);
extern void slot_table_adopt_chunk (struct slot_table *table, uint64_t k,
                                    uint32_t users, uint32_t tag);
/* Bytes of slot table in use: the directory, the locks, and every chunk
 * allocated (live, or in limbo).
 */
extern uint64_t slot_table_bytes (struct slot_table *table);

/* The chunk holding SLOT, or NULL if none (all absent).  To look into it,
 * hold SLOT's lock; without, a snapshot of whether there is one.
 */
static inline struct slot_chunk *
slot_chunk (struct slot_table *table, uint64_t slot)
{
  return atomic_load_explicit (&table->directory[slot / SLOTS_PER_CHUNK],
                               memory_order_acquire);
}

/* Under SLOT's lock: one more user of SLOT's chunk, for a write to SLOT.
 * False, and nothing held, when there is no live chunk.
 */
extern bool slot_chunk_hold (struct slot_table *table, uint64_t slot);
/* Under SLOT's lock: makes SLOT's chunk, tagged TAG, with one user (the
 * caller).  1 when made, 0 when another thread made one meanwhile (then
 * held as slot_chunk_hold does; TAG is that one's), -1 when out of
 * memory.
 */
extern int slot_chunk_make (struct slot_table *table, uint64_t slot,
                            uint32_t tag);
/* Under SLOT's lock: one user fewer of SLOT's chunk.  The last one gone,
 * the chunk retires, and is returned (it stays readable while SLOT's lock
 * is held: its tag says what was charged for it); else NULL.
 */
extern struct slot_chunk *slot_chunk_put (struct slot_table *table,
                                          uint64_t slot);
/* With no slot lock held: frees the chunks in limbo, when
 * SLOT_LIMBO_CHUNKS are there or, with ALL, when any is.
 */
extern void slot_table_reclaim (struct slot_table *table, bool all);

/* The stripe lock of SLOT. */
static inline pthread_mutex_t *
slot_table_stripe (struct slot_table *table, uint64_t slot)
{
  return &table->stripes[slot % SLOT_LOCK_STRIPES].mutex;
}

#endif /* CSWAP_SLOT_TABLE_H */
