/* cswap: the lost pages' numbers (see the header). */
#include <stddef.h>

#include "lost-pages-numbers.h"

static const struct control_extension_number numbers[] = {
  { "lost_reads", true,
    "Reads refused (EIO) because their page was lost with a killed daemon "
    "whose store could not be adopted." },
  { "lost_pages_unwritten", false,
    "Pages lost with a killed daemon that the kernel has not written, "
    "discarded or zeroed since." },
};

static void
read_numbers (void *arg, uint64_t *values)
{
  const struct lost_pages_numbers *n = arg;

  values[0] = values[1] = 0;
  for (unsigned i = 0; i < n->count; i++) {
    values[0] += lost_pages_reads_refused (n->maps[i]);
    values[1] += lost_pages_left (n->maps[i]);
  }
}

const struct control_extension *
lost_pages_numbers_init (struct lost_pages_numbers *n)
{
  *n = (struct lost_pages_numbers) {
    .extension = {
      .numbers = numbers, .number_count = sizeof numbers / sizeof numbers[0],
      .read_numbers = read_numbers, .arg = n,
    },
  };
  return &n->extension;
}

void
lost_pages_numbers_add (struct lost_pages_numbers *n, struct lost_pages *map)
{
  if (map && n->count < LOST_PAGES_NUMBERS_MAX_MAPS)
    n->maps[n->count++] = map;
}
