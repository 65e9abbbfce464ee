/* cswap: the request layer every front end calls — a block device's
 * reads, writes, zeroes and extents over a window of the store.
 *
 * A front end decodes its protocol (FUSE messages, NBD through nbdkit,
 * ublk descriptors), calls one of these, and encodes the answer.  What is
 * the same for every request of every front end is done here, once:
 *   - the range: an offset within the window, turned into the store's
 *     (base_bytes + offset) and clipped to the window's end;
 *   - the request's time, noted in the store's latency histogram of its
 *     kind (store_note_request: the daemon's part of the request, not
 *     the transport's receive and reply);
 *   - a write's result, passed to the full warning (full-warning.h), and
 *     its length to the ladder's follower (ladder_note_write: swap fills
 *     by writes);
 *   - on a device taken over from a killed daemon, its lost pages
 *     (lost-pages.h): a read that starts on one fails with EIO, one that
 *     reaches one is short (the kernel sends the rest again), and a
 *     write, discard or zero of whole pages finds them again.
 * What differs stays in the front end: the FUSE file's fallocate modes
 * and EFBIG for a growing zero (fuse/device.c), an export's quota
 * (nbdkit/nbd-exports.h), ublk's user copy.
 *
 *   front end ──> blockdev_read/write/zero/extent ──> store_* (store.h)
 *                       │ write: full_warning_note, ladder_note_write
 *
 * Locking: none.  A window is set before serving starts and never
 * changed while it runs; requests on any number of threads share only the
 * store, which is thread-safe, and the ladder's count of written bytes,
 * which is atomic.
 */
#ifndef CSWAP_BLOCKDEV_H
#define CSWAP_BLOCKDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ladder-follow.h"
#include "lost-pages.h"
#include "page.h"
#include "store.h"

/* The largest request a front end takes: 32 pages (FUSE's max_write and
 * max_pages, ublk's max_sectors).  Every FUSE-over-io_uring entry and
 * every classic worker holds a buffer this large, and a buffer once touched stays resident: at the kernel's
 * cap of 256 pages, the 16 entries' 16 MiB of buffers added 5.9 MiB to
 * the daemon's peak under stress-ng (its pool peaked at 11 MiB).  Swap
 * writes average 5 to 43 KiB (bench/real-programs), so the few larger
 * ones are split into 128 KiB requests.  The cost, same session: 256
 * pages against 32, stress-ng ran 2.67-2.92 s against 3.17-4.70 with a
 * peak of 17.0 MiB against 11.3-11.9, python-heap 25.7-28.0 s against
 * 23.8-25.4 with 41.5-41.9 MiB against 35.6-36.7.
 */
#define BLOCKDEV_MAX_IO_BYTES (32 * CSWAP_PAGE_SIZE)

/* A part of the store served as one block device. */
struct blockdev {
  struct store *store;
  struct ladder *ladder;        /* told of every write; NULL: none */
  uint64_t base_bytes;          /* where the window starts in the store */
  uint64_t size_bytes;          /* its length: the device's size */
  struct lost_pages *lost;      /* by the window's pages; NULL: none */
};

/* Reads up to SIZE bytes at OFFSET into BUF: returns the bytes read
 * (short at the end of the window, 0 past it, short before a lost page)
 * or a negative errno (-EIO when it starts on a lost page).
 */
extern int64_t blockdev_read (const struct blockdev *bdev, void *buf,
                              size_t size, uint64_t offset);

/* Writes SIZE bytes at OFFSET: returns the bytes written (short across
 * the end), -EFBIG ("File too large") at or past the end, distinct from
 * the store's -ENOSPC when its pool is full, or the store's error.
 */
extern int64_t blockdev_write (const struct blockdev *bdev, const void *buf,
                               size_t size, uint64_t offset);

/* Zeroes LENGTH bytes at OFFSET, clipped to the window's end: whole
 * pages are freed at once.  This is trim too (discards and write-zeroes
 * alike read back as zeros).  0 or a negative errno.
 */
extern int blockdev_zero (const struct blockdev *bdev, uint64_t length,
                          uint64_t offset);

/* From OFFSET, the longest run of at most LENGTH bytes (clipped to the
 * window) whose pages all read as zeros and hold no memory (*ZERO) or
 * all do not (store_extent), its length in *RUN_BYTES.  0 or a negative
 * errno; past the end, -ERANGE.
 */
extern int blockdev_extent (const struct blockdev *bdev, uint64_t offset,
                            uint64_t length, bool *zero,
                            uint64_t *run_bytes);

#endif /* CSWAP_BLOCKDEV_H */
