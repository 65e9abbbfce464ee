/* cswap: the slot table's chunks and lock stripes (see slot-table.h): a
 * chunk's users, its retirement, and the reclaim of retired chunks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lock-order.h"
#include "page.h"
#include "slot-table.h"

/* A chunk's count once retired: no user can be added to it. */
#define CHUNK_DEAD UINT32_MAX

int
slot_table_init (struct slot_table *table, uint64_t slots)
{
  table->slots = slots;
  table->chunks = (slots + SLOTS_PER_CHUNK - 1) / SLOTS_PER_CHUNK;
  atomic_init (&table->chunks_allocated, 0);
  atomic_init (&table->limbo, NULL);
  atomic_init (&table->limbo_chunks, 0);
  table->directory = calloc (table->chunks, sizeof *table->directory);
  table->stripes = aligned_alloc (64, SLOT_LOCK_STRIPES * sizeof *table->stripes);
  if (table->directory == NULL || table->stripes == NULL) {
    free (table->directory);
    free (table->stripes);
    errno = ENOMEM;
    return -1;
  }
  for (unsigned i = 0; i < SLOT_LOCK_STRIPES; i++)
    pthread_mutex_init (&table->stripes[i].mutex, NULL);
  table->homes = NULL;
  pthread_mutex_init (&table->make_lock, NULL);
  return 0;
}

size_t
slot_table_homes_bytes (uint64_t slots)
{
  return (slots + SLOTS_PER_CHUNK - 1) / SLOTS_PER_CHUNK
    * sizeof (struct slot_chunk);
}

void
slot_table_set_homes (struct slot_table *table, void *homes)
{
  table->homes = homes;
}

/* Whether any page of chunk K's home is in memory (RESIDENT: mincore's
 * vector over the homes).
 */
static bool
home_resident (struct slot_table *table, const unsigned char *resident,
               uint64_t k)
{
  uintptr_t base = (uintptr_t) table->homes & ~(uintptr_t) (CSWAP_PAGE_SIZE - 1);
  uintptr_t first = (uintptr_t) &table->homes[k];
  uintptr_t last = first + sizeof (struct slot_chunk) - 1;

  for (uintptr_t p = first / CSWAP_PAGE_SIZE; p <= last / CSWAP_PAGE_SIZE; p++)
    if (resident[p - base / CSWAP_PAGE_SIZE] & 1)
      return true;
  return false;
}

int
slot_table_adopt_begin (struct slot_table *table)
{
  uintptr_t base = (uintptr_t) table->homes & ~(uintptr_t) (CSWAP_PAGE_SIZE - 1);
  size_t bytes = (uintptr_t) table->homes + slot_table_homes_bytes (table->slots)
    - base;
  size_t pages = (bytes + CSWAP_PAGE_SIZE - 1) / CSWAP_PAGE_SIZE;

  table->home_resident = malloc (pages ? pages : 1);
  if (table->home_resident == NULL)
    return -1;
  if (mincore ((void *) base, pages * CSWAP_PAGE_SIZE, table->home_resident)) {
    free (table->home_resident);
    table->home_resident = NULL;
    return -1;
  }
  return 0;
}

struct slot_chunk *
slot_table_home (struct slot_table *table, uint64_t k)
{
  return home_resident (table, table->home_resident, k) ? &table->homes[k]
    : NULL;
}

void
slot_table_adopt_end (struct slot_table *table)
{
  free (table->home_resident);
  table->home_resident = NULL;
}

void
slot_table_adopt_chunk (struct slot_table *table, uint64_t k, uint32_t users,
                        uint32_t tag)
{
  struct slot_chunk *chunk = &table->homes[k];

  atomic_init (&chunk->users, users);
  chunk->tag = tag;
  chunk->next = NULL;
  atomic_store_explicit (&table->directory[k], chunk, memory_order_release);
  atomic_fetch_add_explicit (&table->chunks_allocated, 1,
                             memory_order_relaxed);
}

static void
free_chunk (struct slot_table *table, struct slot_chunk *chunk)
{
  free (chunk);
  atomic_fetch_sub_explicit (&table->chunks_allocated, 1,
                             memory_order_relaxed);
}

/* Frees the chunks of the list from HEAD. */
static void
free_list (struct slot_table *table, struct slot_chunk *head)
{
  while (head) {
    struct slot_chunk *next = head->next;
    free_chunk (table, head);
    head = next;
  }
}

void
slot_table_destroy (struct slot_table *table)
{
  if (table->homes == NULL) {
    for (uint64_t c = 0; c < table->chunks; c++)
      free (atomic_load (&table->directory[c]));
    free_list (table, atomic_load (&table->limbo));
  }
  pthread_mutex_destroy (&table->make_lock);
  for (unsigned i = 0; i < SLOT_LOCK_STRIPES; i++)
    pthread_mutex_destroy (&table->stripes[i].mutex);
  free (table->directory);
  free (table->stripes);
}

uint64_t
slot_table_bytes (struct slot_table *table)
{
  return table->chunks * sizeof *table->directory
    + SLOT_LOCK_STRIPES * sizeof *table->stripes
    + atomic_load_explicit (&table->chunks_allocated, memory_order_relaxed)
      * sizeof (struct slot_chunk);
}

/* Takes a dead CHUNK out of SLOT's place in the directory, if it is still
 * there.  Its retirer does, and so may a writer that finds it first.
 */
static void
unhook (struct slot_table *table, uint64_t slot, struct slot_chunk *chunk)
{
  atomic_compare_exchange_strong_explicit (
    &table->directory[slot / SLOTS_PER_CHUNK], &chunk, NULL,
    memory_order_acq_rel, memory_order_relaxed);
}

/* One more user of CHUNK, unless it is dead. */
static bool
add_user (struct slot_chunk *chunk)
{
  uint32_t users = atomic_load_explicit (&chunk->users, memory_order_relaxed);

  do
    if (users == CHUNK_DEAD)
      return false;
  while (!atomic_compare_exchange_weak_explicit (&chunk->users, &users,
                                                 users + 1,
                                                 memory_order_acq_rel,
                                                 memory_order_relaxed));
  return true;
}

bool
slot_chunk_hold (struct slot_table *table, uint64_t slot)
{
  lock_assert_held (slot_table_stripe (table, slot));
  struct slot_chunk *chunk = slot_chunk (table, slot);

  if (chunk == NULL)
    return false;
  if (add_user (chunk))
    return true;
  unhook (table, slot, chunk);
  return false;
}

/* slot_chunk_make with homes: the chunk at its home, made once. */
static int
make_at_home (struct slot_table *table, uint64_t slot, uint32_t tag)
{
  uint64_t k = slot / SLOTS_PER_CHUNK;
  struct slot_chunk *chunk = &table->homes[k];
  int made = 0;

  lock_acquire (&table->make_lock, LOCK_RANK_LEAF);
  if (atomic_load_explicit (&table->directory[k], memory_order_acquire))
    atomic_fetch_add_explicit (&chunk->users, 1, memory_order_acq_rel);
  else {
    /* A dead process's bytes may be here (adoption hooks only the
     * chunks that hold a page): every slot starts SLOT_ABSENT.
     */
    memset (chunk, 0, sizeof *chunk);
    atomic_init (&chunk->users, 1);
    chunk->tag = tag;
    atomic_store_explicit (&table->directory[k], chunk, memory_order_release);
    atomic_fetch_add_explicit (&table->chunks_allocated, 1,
                               memory_order_relaxed);
    made = 1;
  }
  lock_release (&table->make_lock);
  return made;
}

int
slot_chunk_make (struct slot_table *table, uint64_t slot, uint32_t tag)
{
  lock_assert_held (slot_table_stripe (table, slot));
  if (table->homes)
    return make_at_home (table, slot, tag);
  /* calloc: every slot starts SLOT_ABSENT. */
  struct slot_chunk *chunk = calloc (1, sizeof *chunk);

  if (chunk == NULL)
    return -1;
  atomic_fetch_add_explicit (&table->chunks_allocated, 1,
                             memory_order_relaxed);
  atomic_init (&chunk->users, 1);
  chunk->tag = tag;
  for (;;) {
    struct slot_chunk *expected = NULL;
    if (atomic_compare_exchange_strong_explicit (
          &table->directory[slot / SLOTS_PER_CHUNK], &expected, chunk,
          memory_order_acq_rel, memory_order_acquire))
      return 1;
    /* Another thread's, made meanwhile: held instead of ours.  A dead
     * one is taken out, and ours goes in its place.
     */
    if (add_user (expected)) {
      free_chunk (table, chunk);
      return 0;
    }
    unhook (table, slot, expected);
  }
}

struct slot_chunk *
slot_chunk_put (struct slot_table *table, uint64_t slot)
{
  lock_assert_held (slot_table_stripe (table, slot));
  struct slot_chunk *chunk = slot_chunk (table, slot);
  uint32_t none = 0;

  if (table->homes) {           /* never retires: see the header */
    atomic_fetch_sub_explicit (&chunk->users, 1, memory_order_acq_rel);
    return NULL;
  }
  if (atomic_fetch_sub_explicit (&chunk->users, 1, memory_order_acq_rel) != 1
      || !atomic_compare_exchange_strong_explicit (&chunk->users, &none,
                                                   CHUNK_DEAD,
                                                   memory_order_acq_rel,
                                                   memory_order_relaxed))
    return NULL;                /* used still, or held again meanwhile */
  unhook (table, slot, chunk);
  /* Counted first: the count is never below what limbo holds. */
  atomic_fetch_add_explicit (&table->limbo_chunks, 1, memory_order_relaxed);
  chunk->next = atomic_load_explicit (&table->limbo, memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit (&table->limbo, &chunk->next,
                                                 chunk, memory_order_release,
                                                 memory_order_relaxed))
    ;
  return chunk;
}

void
slot_table_reclaim (struct slot_table *table, bool all)
{
  unsigned waiting = atomic_load_explicit (&table->limbo_chunks,
                                           memory_order_relaxed);

  if (waiting == 0 || (!all && waiting < SLOT_LIMBO_CHUNKS))
    return;
  struct slot_chunk *head = atomic_exchange_explicit (&table->limbo, NULL,
                                                      memory_order_acquire);
  unsigned taken = 0;

  for (struct slot_chunk *c = head; c; c = c->next)
    taken++;
  atomic_fetch_sub_explicit (&table->limbo_chunks, taken,
                             memory_order_relaxed);
  if (head == NULL)
    return;                     /* another reclaimer took them */
  /* Every thread that found these chunks in the directory holds the lock
   * of one of their slots while it looks: once each stripe has been
   * taken and dropped, none is still looking, and none can find them.
   */
  for (unsigned i = 0; i < SLOT_LOCK_STRIPES; i++) {
    lock_acquire (&table->stripes[i].mutex, LOCK_RANK_SLOT);
    lock_release (&table->stripes[i].mutex);
  }
  free_list (table, head);
}
