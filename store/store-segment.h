/* cswap: the store's memory in a segment that outlives the process.
 *
 * A ublk device added with user recovery outlives a daemon that is
 * killed: the kernel holds its requests until a new daemon takes it over
 * (ublk-take-over.c, --recover).  Its pages outlive the daemon only if the
 * store's memory does: its slot table and its allocator's zspages.  So
 * such a store keeps them in a System V shared-memory segment:
 *
 *  - it belongs to no process: killed, the daemon leaves it whole, with
 *    every byte it had written (a store to memory is done once the
 *    instruction is; nothing is buffered in the process);
 *  - it is locked (SHM_LOCK): no process need map it for its pages to
 *    stay in memory, so none of them can go to swap, and so to the very
 *    device whose daemon is being replaced;
 *  - it is found again by the number of the first ublk device it
 *    serves, which its header records and the next daemon is given
 *    (--recover ID,…): made with IPC_PRIVATE, it has no key another user
 *    could take first, and a daemon looks only at segments that are its
 *    own (store_segment_each_own: created and owned by its effective uid,
 *    mode 0600), so no other user can keep it from starting, nor have it
 *    adopt or remove a segment that user made.  Of several for one
 *    device, the newest (made_ns) is the store: the others are older
 *    stores of a device since taken over anew.
 *
 * Layout, all offsets page-aligned:
 *
 *   [ header, note: one page ][ lost map ][ backing file's state ]
 *   [ slot chunks: one home per chunk ][ zspages ]
 *
 * The header says what made the segment (layout version, its device,
 * sizes, the allocator's geometry).  A daemon adopts a segment of its
 * own layout and device size; the allocator's geometry (reserve,
 * max-zspage-pages) it takes from the header, whatever its own
 * configuration says (store-persist.c).  The lost map is a bit per slot:
 * set for a page a take-over lost (its store could not be adopted, or
 * the page not), clear once the kernel writes, discards or zeroes it;
 * kept here so that a page lost stays lost across any number of
 * take-overs (lost-pages.h reads and clears it).  The backing file's
 * state is what a successor needs to read the records the dead daemon
 * wrote there (tier.h, tier_keep_state: its key among them, which is
 * why the segment must stay locked and out of core dumps); a store
 * without a backing file has none (and is laid out as layout 3 was).  The note is the front
 * end's: what it must find again after a kill besides the pages (the
 * ladder's hand-over, ladder-record.h), zero in a new segment.  The slot
 * chunks and the zspage area hold no pointers, only numbers
 * (slot-table.h, allocator/zs-internal.h), so the segment may be mapped
 * anywhere.
 * Everything else (the allocator's descriptors and lists, the counters,
 * the queues) is the process's own, and is rebuilt from the slots when a
 * segment is adopted (store-persist.c).
 *
 * The segment is removed when its daemon stops after deleting its
 * devices, and by whatever deletes a dead daemon's devices
 * (store_segment_remove_device); a segment no process has attached and
 * no device uses otherwise stays, locked, until the next boot.  With
 * kernel.shm_rmid_forced=1 the kernel removes it as soon as no process
 * has it attached and its creator is gone: a killed daemon's store dies
 * with it (store_segment_forced_removal; the daemon says so at start).
 *
 * Layout 2 (before the lost map, found by a key made from the device's
 * number) is not adopted: such a store is refused, named, and kept
 * unless the daemon is told to discard it.
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
  uint32_t dev_id;              /* the first device it serves */
  unsigned char *base;          /* the mapping */
  size_t bytes;
  /* The geometry: what the header records.  An adopter must match the
   * size and layout; store_segment_adopt sets the rest from the header.
   */
  uint64_t size_bytes;          /* the store's device size */
  unsigned max_pages_per_zspage;
  uint64_t reserve_bytes;
  size_t lost_map_bytes;        /* a bit per slot */
  size_t tier_state_bytes;      /* the backing file's (tier.h); 0: none */
  size_t chunks_bytes;          /* the slot chunks' homes */
  size_t area_bytes;            /* the allocator's zspage area */
};

/* The note's size, the end of the header page. */
#define STORE_SEGMENT_NOTE_BYTES 3072

/* A new segment for SEG's geometry and device, locked, attached,
 * zero-filled; stale ones of the device that no process has attached are
 * removed first (the device is new: nothing will ask for their pages).
 * 0, or -1 with errno and *WHY set (which call).
 */
extern int store_segment_make (struct store_segment *seg, const char **why);
/* Why a segment is not adopted, for store_segment_adopt's caller. */
struct store_segment_refusal {
  const char *why;
  uint64_t size_bytes;          /* EINVAL: the size the store was made with */
  uint32_t layout;              /* EPROTO: the layout it was made with */
  int pid;                      /* EBUSY: the last process to attach it */
};
/* The newest segment of SEG->dev_id, attached, its allocator geometry
 * set in SEG from its header, if it is of this layout and SEG's size:
 * 0; else -1 with errno (ENOENT: none; EBUSY: a live process has it
 * attached; EINVAL: made for another size; EPROTO: by another version of
 * cswap) and *REFUSAL.  Older segments of the device are removed once
 * the newest is adopted.
 */
extern int store_segment_adopt (struct store_segment *seg,
                                struct store_segment_refusal *refusal);
/* The layout this cswap makes and adopts. */
extern uint32_t store_segment_layout (void);
/* The note (STORE_SEGMENT_NOTE_BYTES), the lost map (lost_map_bytes),
 * the slot chunks' homes and the zspage area, in an attached segment.
 */
extern void *store_segment_note (const struct store_segment *seg);
extern void *store_segment_lost_map (const struct store_segment *seg);
/* The backing file's state (tier_state_bytes); NULL when it has none. */
extern void *store_segment_tier_state (const struct store_segment *seg);
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
/* Removes this process's own segments of device DEV_ID (of any layout)
 * that no live process has attached: how many, or -1 with errno.
 */
extern int store_segment_remove_device (uint32_t dev_id);
/* The segments this process may call its own: created and owned by its
 * effective uid, mode 0600, not being removed, and starting with a
 * cswap header.  EACH is called with each one's id, its device (its
 * header's, or the one its layout-2 key names; UINT32_MAX: none) and
 * its layout.  0, or -1 with errno.
 */
extern int store_segment_each_own (void (*each) (int shmid, uint32_t dev_id,
                                                 uint32_t layout, void *arg),
                                   void *arg);
/* kernel.shm_rmid_forced is 1: a segment is destroyed once no process
 * has it attached and its creator is gone, so a store does not outlive
 * a killed daemon.
 */
extern bool store_segment_forced_removal (void);

#endif /* CSWAP_STORE_SEGMENT_H */
