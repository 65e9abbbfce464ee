/* cswap: the tier's on-disk record — one object's bytes in the file.
 *
 *   plain  (backing-encrypt=no)   sealed (the default)
 *   ---------------------------   --------------------------------------
 *   magic u16, length u16         magic u16, length u16
 *   cookie u32                    cookie u32
 *   run id u32                    run id u32     \  the nonce
 *   crc32c u32                    count u64      /
 *   payload (LENGTH)              ciphertext (LENGTH)
 *                                 tag (16)
 *   zeros to TIER_OFFSET_UNIT     zeros to TIER_OFFSET_UNIT
 *
 * Host order: the file is scratch space for this process only.  The
 * first 8 bytes (the head) are in the clear in both forms, so that a walk
 * of a segment finds the records and the cleaner their owners: a sealed
 * record hides its payload, not its length or its slot.
 *
 * The run id is drawn at random when the tier opens, so a record written
 * before a restart is told apart (RECORD_STALE) whatever else it holds.
 * The check binds a record to its place in the file and to the write
 * that put it there: the place is the disk offset and the generation of
 * its segment (tier.c bumps it each time the segment is written afresh,
 * so no two records of a run share a place).  The crc32c covers the
 * head, the run id, the payload and the place; the seal (seal.h)
 * encrypts the payload with the head and the place as additional data,
 * under the nonce run id + count, where count is the records sealed so
 * far, so no nonce repeats under the key.  The generation is not stored:
 * the reader brings the one it expects, so an older record put back at
 * the same offset (a replay, or bytes read before the segment was
 * reused) fails its check like a corrupted one.
 *
 * Threads: record_write is the batching caller's (it counts); the rest
 * only reads the format and may run on any thread.
 */
#ifndef CSWAP_TIER_RECORD_H
#define CSWAP_TIER_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seal.h"
#include "tier.h"

#define RECORD_HEAD_BYTES 8
#define RECORD_PLAIN_HEADER_BYTES 16
#define RECORD_SEALED_HEADER_BYTES (RECORD_HEAD_BYTES + SEAL_NONCE_BYTES)
/* The most bytes a record takes, in either form. */
#define RECORD_MAX_BYTES                                                \
  ((RECORD_SEALED_HEADER_BYTES + TIER_MAX_OBJECT_BYTES + SEAL_TAG_BYTES \
    + TIER_OFFSET_UNIT - 1) / TIER_OFFSET_UNIT * TIER_OFFSET_UNIT)

/* Where a record lives: its disk offset in its segment's generation. */
struct record_place {
  uint64_t offset;
  uint32_t generation;
};

struct record_format {
  struct tier_seal *seal;       /* NULL: plain records */
  uint32_t run_id;
  uint64_t sealed;              /* records sealed: the nonce's count */
  /* Kept for a successor (record_format_keep): no count below it may be
   * used again under this key.  NULL: not kept.
   */
  uint64_t *reserved;
};

/* Draws the run id and, when ENCRYPT, makes the key.  Returns 0, or -1
 * with *WHY and errno set.
 */
extern int record_format_init (struct record_format *format, bool encrypt,
                               const char **why);
extern void record_format_destroy (struct record_format *format);
/* seal_lock_key, for a sealed format; 0 for a plain one. */
extern int record_format_lock_key (struct record_format *format);

/* Keeping the format for a successor (keep.c): from now on the nonce
 * counts this format may use are reserved in *RESERVED, in memory that
 * outlives the process, a block at a time and before any is used.
 */
extern void record_format_keep (struct record_format *format,
                                uint64_t *reserved);
/* Takes over a killed daemon's format: its RUN_ID, its form (KEY: sealed
 * under that key; NULL: plain) and its count, *RESERVED, kept from now
 * on.  Returns 0, or -1 with *WHY and errno set (no sealing context).
 */
extern int record_format_adopt (struct record_format *format,
                                uint32_t run_id,
                                const unsigned char *key,
                                uint64_t *reserved, const char **why);

/* Bytes a record of LENGTH payload bytes takes, padding included. */
extern uint32_t record_bytes (const struct record_format *format,
                              uint32_t length);

/* Writes the record of COOKIE and the LENGTH bytes at PAYLOAD, to live at
 * PLACE, into OUT (record_bytes long).  Returns false if it could not be
 * sealed: OUT must not go to disk then.
 */
extern bool record_write (struct record_format *format, unsigned char *out,
                          struct record_place place, uint32_t cookie,
                          const void *payload, uint32_t length);

enum record_status {
  RECORD_OK,
  RECORD_NONE,                  /* not a record here (padding, junk) */
  RECORD_CORRUPT,               /* a record whose check fails */
  RECORD_STALE,                 /* a record from before the tier opened */
};

struct record {
  uint32_t cookie, length;
  const void *payload;
};

/* The record at IN, with AVAIL bytes readable there, read from PLACE
 * (RECORD_CORRUPT if it was written for another).  On RECORD_OK, *RECORD describes it, its payload in the
 * clear at PAYLOAD (TIER_MAX_OBJECT_BYTES) or, if PAYLOAD is NULL, in
 * place in IN.
 */
extern enum record_status record_read (const struct record_format *format,
                                       unsigned char *in, size_t avail,
                                       struct record_place place,
                                       void *payload, struct record *record);

#endif /* CSWAP_TIER_RECORD_H */
