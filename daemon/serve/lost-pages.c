/* cswap: the pages a killed daemon took with it (lost-pages.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lost-pages.h"

#define WORD_BITS 64

struct lost_pages {
  uint64_t pages;
  uint64_t first;                       /* page P is bit first + P */
  _Atomic uint64_t *words;              /* bit B of word B / 64: lost */
  bool own;                             /* words are ours to free */
  _Atomic uint64_t left;                /* bits set */
  _Atomic uint64_t reads_refused;
};

static bool
is_lost (const struct lost_pages *lost, uint64_t page)
{
  uint64_t bit = lost->first + page;

  return page < lost->pages
         && (atomic_load_explicit (&lost->words[bit / WORD_BITS],
                                   memory_order_acquire)
             >> (bit % WORD_BITS) & 1);
}

struct lost_pages *
lost_pages_over (_Atomic uint64_t *words, uint64_t first, uint64_t pages)
{
  struct lost_pages *lost = malloc (sizeof *lost);
  uint64_t left = 0;

  if (lost == NULL)
    return NULL;
  *lost = (struct lost_pages) { .pages = pages, .first = first,
                                .words = words };
  for (uint64_t page = 0; page < pages; page++)
    left += is_lost (lost, page);
  atomic_init (&lost->left, left);
  atomic_init (&lost->reads_refused, 0);
  return lost;
}

struct lost_pages *
lost_pages_create (uint64_t pages)
{
  uint64_t words = (pages + WORD_BITS - 1) / WORD_BITS;
  _Atomic uint64_t *map;
  struct lost_pages *lost;

  if (words > SIZE_MAX / sizeof *map) {
    errno = ENOMEM;
    return NULL;
  }
  map = malloc (words * sizeof *map);
  if (map == NULL)
    return NULL;
  for (uint64_t w = 0; w < words; w++) {
    uint64_t bits = pages - w * WORD_BITS;

    /* The last word's bits past the end stay clear: never lost. */
    atomic_init (&map[w], bits >= WORD_BITS ? UINT64_MAX
                          : (UINT64_C (1) << bits) - 1);
  }
  lost = lost_pages_over (map, 0, pages);
  if (lost == NULL)
    free (map);
  else
    lost->own = true;
  return lost;
}

void
lost_pages_destroy (struct lost_pages *lost)
{
  if (lost && lost->own)
    free (lost->words);
  free (lost);
}

uint64_t
lost_pages_kept_run (const struct lost_pages *lost, uint64_t first,
                     uint64_t count)
{
  /* Requests are at most 32 pages: a bit at a time is cheap enough. */
  for (uint64_t i = 0; i < count; i++)
    if (is_lost (lost, first + i))
      return i;
  return count;
}

void
lost_pages_found (struct lost_pages *lost, uint64_t first, uint64_t count)
{
  uint64_t end = first >= lost->pages ? first
                 : count > lost->pages - first ? lost->pages : first + count;

  /* Bits from here on: the map's first page need not start a word. */
  first += lost->first;
  end += lost->first;
  for (uint64_t page = first; page < end; ) {
    uint64_t w = page / WORD_BITS, bit = page % WORD_BITS;
    uint64_t n = end - page < WORD_BITS - bit ? end - page : WORD_BITS - bit;
    uint64_t mask = (n == WORD_BITS ? UINT64_MAX : (UINT64_C (1) << n) - 1)
                    << bit;
    uint64_t was = atomic_fetch_and_explicit (&lost->words[w], ~mask,
                                              memory_order_release);

    /* Only the bits this call cleared: two writers of one page count
     * it once.
     */
    atomic_fetch_sub_explicit (&lost->left, __builtin_popcountll (was & mask),
                               memory_order_relaxed);
    page += n;
  }
}

void
lost_pages_note_refused (struct lost_pages *lost)
{
  atomic_fetch_add_explicit (&lost->reads_refused, 1, memory_order_relaxed);
}

uint64_t
lost_pages_left (const struct lost_pages *lost)
{
  return atomic_load_explicit (&lost->left, memory_order_relaxed);
}

uint64_t
lost_pages_reads_refused (const struct lost_pages *lost)
{
  return atomic_load_explicit (&lost->reads_refused, memory_order_relaxed);
}
