/* cswap: same-filled pages.
 *
 * A page that repeats one 8-byte value (zeroes above all, but also the
 * poison patterns and fill values programs use) is kept as that value in
 * the page table and costs no allocation at all.
 */
#include <stdint.h>
#include <string.h>

#include "page.h"
#include "compress.h"

#define WORDS_PER_PAGE (CSWAP_PAGE_SIZE / sizeof (uint64_t))

bool
page_is_same_filled (const void *page, uint64_t *value)
{
  const uint64_t *word = page;
  uint64_t first = word[0];

  /* Most pages differ early: test the last word first, then the rest. */
  if (word[WORDS_PER_PAGE - 1] != first)
    return false;
  for (size_t i = 1; i < WORDS_PER_PAGE - 1; i++)
    if (word[i] != first)
      return false;
  *value = first;
  return true;
}

void
page_fill (void *page, uint64_t value)
{
  uint64_t *word = page;

  if (value == 0) {
    memset (page, 0, CSWAP_PAGE_SIZE);
    return;
  }
  for (size_t i = 0; i < WORDS_PER_PAGE; i++)
    word[i] = value;
}
