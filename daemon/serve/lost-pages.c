/* cswap: the pages a killed daemon took with it (lost-pages.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lost-pages.h"

#define WORD_BITS 64

struct lost_pages {
  uint64_t pages;
  _Atomic uint64_t left;                /* bits set */
  _Atomic uint64_t reads_refused;
  _Atomic uint64_t words[];             /* bit P of word P / 64: page P lost */
};

static uint64_t
words_for (uint64_t pages)
{
  return (pages + WORD_BITS - 1) / WORD_BITS;
}

struct lost_pages *
lost_pages_create (uint64_t pages)
{
  uint64_t words = words_for (pages);
  struct lost_pages *lost;

  if (words > (SIZE_MAX - sizeof *lost) / sizeof lost->words[0]) {
    errno = ENOMEM;
    return NULL;
  }
  lost = malloc (sizeof *lost + words * sizeof lost->words[0]);
  if (lost == NULL)
    return NULL;
  lost->pages = pages;
  atomic_init (&lost->left, pages);
  atomic_init (&lost->reads_refused, 0);
  for (uint64_t w = 0; w < words; w++) {
    uint64_t bits = pages - w * WORD_BITS;

    /* The last word's bits past the end stay clear: never lost. */
    atomic_init (&lost->words[w], bits >= WORD_BITS ? UINT64_MAX
                                  : (UINT64_C (1) << bits) - 1);
  }
  return lost;
}

void
lost_pages_destroy (struct lost_pages *lost)
{
  free (lost);
}

static bool
is_lost (const struct lost_pages *lost, uint64_t page)
{
  return page < lost->pages
         && (atomic_load_explicit (&lost->words[page / WORD_BITS],
                                   memory_order_acquire)
             >> (page % WORD_BITS) & 1);
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
