/* cswap: load a page file for tests and benchmarks.
 *
 * A page file is 4 KiB pages back to back, either raw or compressed with
 * zstd (recognised by its magic number, not its name).  The whole file is
 * decompressed into one buffer: the corpus is 144 MiB, well within what a
 * test may hold.
 */
#ifndef CSWAP_PAGEFILE_H
#define CSWAP_PAGEFILE_H

#include <stddef.h>

struct pagefile {
  unsigned char *data;          /* pages back to back */
  size_t pages;
};

/* Returns 0, or -1 with a message on stderr naming the file and the
 * failing call.  A trailing partial page is dropped.
 */
extern int pagefile_load (const char *path, struct pagefile *pf);
extern void pagefile_free (struct pagefile *pf);

static inline const unsigned char *
pagefile_page (const struct pagefile *pf, size_t i)
{
  return pf->data + i * 4096;
}

#endif /* CSWAP_PAGEFILE_H */
