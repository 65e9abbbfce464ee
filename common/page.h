/* cswap: the unit everything is measured in.
 *
 * The kernel swaps in 4 KiB pages and cswap stores exactly that unit,
 * whatever the host's page size (it is 4 KiB on every platform the kernel's
 * swap-over-block-device path is used on in practice).
 */
#ifndef CSWAP_PAGE_H
#define CSWAP_PAGE_H

#include <stddef.h>
#include <stdint.h>

#define CSWAP_PAGE_SHIFT 12
#define CSWAP_PAGE_SIZE ((size_t)1 << CSWAP_PAGE_SHIFT)

static inline uint64_t
bytes_to_pages_round_up (uint64_t bytes)
{
  return (bytes + CSWAP_PAGE_SIZE - 1) >> CSWAP_PAGE_SHIFT;
}

#endif /* CSWAP_PAGE_H */
