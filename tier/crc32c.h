/* cswap: CRC-32C (Castagnoli), the checksum of objects on disk.
 *
 * SSE 4.2's crc32 instruction where the CPU has it, else a byte-wise
 * table (about 400 MB/s); no dependency either way.  crc32c ("123456789") =
 * 0xe3069283.
 */
#ifndef CSWAP_CRC32C_H
#define CSWAP_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues CRC (0 to start) over LEN bytes at DATA. */
extern uint32_t crc32c (uint32_t crc, const void *data, size_t len);

#endif /* CSWAP_CRC32C_H */
