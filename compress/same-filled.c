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

/* Pages come straight from the front end's buffer, which need not be
 * 8-byte aligned (an unaligned FUSE or NBD request): every access goes
 * through memcpy, which the compiler turns into a plain load or store.
 */
static inline uint64_t
load_word (const unsigned char *page, size_t i)
{
  uint64_t word;
  memcpy (&word, page + i * sizeof word, sizeof word);
  return word;
}

bool
page_is_same_filled (const void *page, uint64_t *value)
{
  const unsigned char *bytes = page;
  uint64_t first = load_word (bytes, 0);

  /* Most pages differ early: test the last word first.  Then the page
   * repeats its first word if and only if it equals itself shifted by one
   * word, which libc's vectorised memcmp checks far faster than a loop.
   */
  if (load_word (bytes, WORDS_PER_PAGE - 1) != first
      || memcmp (bytes, bytes + sizeof first, CSWAP_PAGE_SIZE - sizeof first))
    return false;
  *value = first;
  return true;
}

void
page_fill (void *page, uint64_t value)
{
  unsigned char *bytes = page;

  if (value == 0) {
    memset (page, 0, CSWAP_PAGE_SIZE);
    return;
  }
  for (size_t i = 0; i < WORDS_PER_PAGE; i++)
    memcpy (bytes + i * sizeof value, &value, sizeof value);
}
