/* cswap: memory touched when it is made, so that it is there when used.
 *
 * The daemon runs under mlockall (MCL_ONFAULT, daemon/serve/memory-safety.h):
 * a page of its memory is made, and locked, the first time it is touched.
 * Memory that a thread the kernel's swap-outs wait on fills later — a
 * writeback batch, the cleaner's segment, the read-ahead buffers — is
 * touched when it is made instead: a first touch later would be a page
 * fault that needs a new page, at the moment memory is shortest, and a
 * new page then means direct reclaim, which waits for swap-outs that this
 * very daemon must store.  In a 256 MiB VM the writeback thread, sealing
 * its first batch into a buffer never touched, sat in reclaim that way
 * while a queue thread waited for a lock it held, and every swap-out of
 * the machine waited behind them (issue 63).
 */
#ifndef CSWAP_PREFAULT_H
#define CSWAP_PREFAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include "page.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  /* Linux 5.14; older headers lack it */
#endif

/* Makes the pages of the BYTES at P, writable, without writing a byte
 * (madvise MADV_POPULATE_WRITE): safe on memory another thread is
 * filling.  False where the kernel cannot (before 5.14).
 */
static inline bool
prefault_populate (void *p, size_t bytes)
{
  uintptr_t first = (uintptr_t) p & ~(uintptr_t) (CSWAP_PAGE_SIZE - 1);
  uintptr_t end = ((uintptr_t) p + bytes + CSWAP_PAGE_SIZE - 1)
                  & ~(uintptr_t) (CSWAP_PAGE_SIZE - 1);

  return p && bytes
         && madvise ((void *) first, end - first, MADV_POPULATE_WRITE) == 0;
}

/* The same for memory no other thread uses yet, whose contents do not
 * matter or are zeros: where the kernel cannot populate, each page is
 * touched by writing a zero to its first byte (through a volatile
 * pointer, so that the compiler keeps the writes after calloc).
 */
static inline void
prefault_bytes (void *p, size_t bytes)
{
  volatile unsigned char *b = p;

  if (p == NULL || bytes == 0 || prefault_populate (p, bytes))
    return;
  for (size_t i = 0; i < bytes; i += CSWAP_PAGE_SIZE)
    b[i] = 0;
  b[bytes - 1] = 0;
}

#endif /* CSWAP_PREFAULT_H */
