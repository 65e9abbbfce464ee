/* cswap: the store's memory in a segment that outlives the process.
 *
 * A ublk device added with user recovery outlives a daemon that is
 * killed: the kernel holds its requests until a new daemon takes it over
 * (ublk-main.c, --recover).  Its pages outlive the daemon only if the
 * store's memory does: its slot table and its allocator's zspages.  So
 * such a store keeps them in a System V shared-memory segment:
 *
 *  - it belongs to no process: killed, the daemon leaves it whole, with
 *    every byte it had written (a store to memory is done once the
 *    instruction is; nothing is buffered in the process);
 *  - it is locked (SHM_LOCK): no process need map it for its pages to
 *    stay in memory, so none of them can go to swap, and so to the very
 *    device whose daemon is being replaced;
 *  - it is found again by a key made from the number of the first ublk
 *    device it serves (store_segment_key), which the next daemon is given
 *    (--recover ID,…) and the leftover cleaners know.
 *
 * Layout, all offsets page-aligned:
 *
 *   [ header, note: one page ][ slot chunks: one home per chunk ][ zspages ]
 *
 * The header says what made the segment (layout version, sizes, the
 * allocator's geometry); a daemon adopts a segment only if everything in
 * it is what its own configuration would make.  The note is the front
 * end's: what it must find again after a kill besides the pages (the
 * ladder's hand-over, ladder-record.h), zero in a new segment.  The slot
 * chunks and the zspage area hold no pointers, only numbers
 * (slot-table.h, allocator/zs-internal.h), so the segment may be mapped
 * anywhere.
 * Everything else (the allocator's descriptors and lists, the counters,
 * the queues) is the process's own, and is rebuilt from the slots when a
 * segment is adopted (store-adopt.c).
 *
 * The segment is removed when its daemon stops after deleting its
 * devices, and by whatever deletes a dead daemon's devices
 * (store_segment_remove_key); a segment no process has attached and no
 * device uses otherwise stays, locked, until the next boot.
 */
#ifndef CSWAP_STORE_SEGMENT_H
#define CSWAP_STORE_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a segment holds, and where.  Filled by the caller (sizes) and by
 * store_segment_make / store_segment_adopt (the mapping).
 */
struct store_segment {
  int shmid;                    /* -1: none */
  int key;
  unsigned char *base;          /* the mapping */
  size_t bytes;
  /* The geometry: what the header records and an adopter must match. */
  uint64_t size_bytes;          /* the store's device size */
  unsigned max_pages_per_zspage;
  uint64_t reserve_bytes;
  size_t chunks_bytes;          /* the slot chunks' homes */
  size_t area_bytes;            /* the allocator's zspage area */
};

/* The note's size, the end of the header page. */
#define STORE_SEGMENT_NOTE_BYTES 3072

/* The segment key of a store whose first ublk device is DEV_ID. */
extern int store_segment_key (uint32_t dev_id);

/* A new segment for SEG's geometry at SEG->key, locked, attached,
 * zero-filled; a stale one at that key that no process has attached is
 * removed first.  0, or -1 with errno and *WHY set (which call).
 */
extern int store_segment_make (struct store_segment *seg, const char **why);
/* The segment at SEG->key, attached, if its header matches SEG's
 * geometry: 0; else -1 with errno (ENOENT: none; EBUSY: a live process
 * has it attached; EINVAL: made for another geometry or layout) and *WHY.
 */
extern int store_segment_adopt (struct store_segment *seg, const char **why);
/* The note (STORE_SEGMENT_NOTE_BYTES), the slot chunks' homes and the
 * zspage area, in an attached segment.
 */
extern void *store_segment_note (const struct store_segment *seg);
extern void *store_segment_chunks (const struct store_segment *seg);
extern void *store_segment_area (const struct store_segment *seg);
/* After the daemon locks its memory (mlockall): unlocks the segment's
 * mapping, which SHM_LOCK keeps in memory anyway, so that the allocator
 * may give pages back (MADV_REMOVE refuses a locked mapping).
 */
extern void store_segment_unlock_mapping (const struct store_segment *seg);
/* Detaches; with REMOVE, removes the segment too (its pages are freed
 * once no process has it attached).
 */
extern void store_segment_close (struct store_segment *seg, bool remove);
/* Removes the segment at KEY if no live process has it attached: 1 when
 * removed, 0 when there is none, -1 with errno otherwise (EBUSY:
 * attached).
 */
extern int store_segment_remove_key (int key);

#endif /* CSWAP_STORE_SEGMENT_H */
