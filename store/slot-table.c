/* cswap: the slot table's chunks and lock stripes (see slot-table.h). */
#include <errno.h>
#include <stdlib.h>

#include "slot-table.h"

int
slot_table_init (struct slot_table *table, uint64_t slots)
{
  table->slots = slots;
  table->chunks = (slots + SLOTS_PER_CHUNK - 1) / SLOTS_PER_CHUNK;
  atomic_init (&table->chunks_made, 0);
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
  return 0;
}

void
slot_table_destroy (struct slot_table *table)
{
  for (uint64_t c = 0; c < table->chunks; c++)
    free (atomic_load (&table->directory[c]));
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
    + atomic_load_explicit (&table->chunks_made, memory_order_relaxed)
      * sizeof (struct slot_chunk);
}

struct slot_chunk *
slot_chunk_make (struct slot_table *table, uint64_t slot)
{
  struct slot_chunk *chunk = slot_chunk (table, slot);
  struct slot_chunk *expected = NULL;

  if (chunk)
    return chunk;
  /* calloc: every slot starts SLOT_ABSENT.  Two threads may race to make
   * the same chunk; the loser frees its copy and uses the winner's.
   */
  chunk = calloc (1, sizeof *chunk);
  if (chunk == NULL)
    return NULL;
  if (!atomic_compare_exchange_strong_explicit (
        &table->directory[slot / SLOTS_PER_CHUNK], &expected, chunk,
        memory_order_acq_rel, memory_order_acquire)) {
    free (chunk);
    return expected;
  }
  atomic_fetch_add_explicit (&table->chunks_made, 1, memory_order_relaxed);
  return chunk;
}
