/* cswap: the request layer over a window of the store (blockdev.h). */
#include <errno.h>
#include <sys/param.h>

#include "blockdev.h"
#include "full-warning.h"
#include "monotonic.h"

/* The bytes of a request of SIZE at OFFSET that lie within BDEV: 0 at
 * or past its end.
 */
static uint64_t
clipped (const struct blockdev *bdev, uint64_t size, uint64_t offset)
{
  if (offset >= bdev->size_bytes)
    return 0;
  return MIN (size, bdev->size_bytes - offset);
}

/* Of a request of BYTES (not 0) at OFFSET, the bytes before its first
 * lost page: BYTES when none is, 0 when it starts on one.
 */
static uint64_t
before_lost (const struct blockdev *bdev, uint64_t bytes, uint64_t offset)
{
  uint64_t first = offset / CSWAP_PAGE_SIZE;
  uint64_t pages = (offset + bytes - 1) / CSWAP_PAGE_SIZE - first + 1;
  uint64_t kept;

  if (bdev->lost == NULL)
    return bytes;
  kept = lost_pages_kept_run (bdev->lost, first, pages);
  if (kept == pages)
    return bytes;
  return kept == 0 ? 0 : (first + kept) * CSWAP_PAGE_SIZE - offset;
}

/* The whole pages of BYTES at OFFSET have contents again. */
static void
found (const struct blockdev *bdev, uint64_t bytes, uint64_t offset)
{
  uint64_t first = (offset + CSWAP_PAGE_SIZE - 1) / CSWAP_PAGE_SIZE;
  uint64_t end = (offset + bytes) / CSWAP_PAGE_SIZE;

  if (bdev->lost != NULL && end > first)
    lost_pages_found (bdev->lost, first, end - first);
}

/* R, after noting the request's time since START_NS in the store's
 * latency histogram for KIND (store.h).
 */
static int64_t
timed (const struct blockdev *bdev, enum store_request kind,
       uint64_t start_ns, int64_t r)
{
  store_note_request (bdev->store, kind, monotonic_ns () - start_ns);
  return r;
}

int64_t
blockdev_read (const struct blockdev *bdev, void *buf, size_t size,
               uint64_t offset)
{
  uint64_t start_ns = monotonic_ns ();
  uint64_t bytes = clipped (bdev, size, offset);
  int r;

  if (bytes == 0)
    return 0;
  bytes = before_lost (bdev, bytes, offset);
  if (bytes == 0) {
    lost_pages_note_refused (bdev->lost);
    return -EIO;
  }
  r = store_read (bdev->store, buf, bytes, bdev->base_bytes + offset);
  return timed (bdev, STORE_REQUEST_READ, start_ns,
                r < 0 ? r : (int64_t) bytes);
}

int64_t
blockdev_write (const struct blockdev *bdev, const void *buf, size_t size,
                uint64_t offset)
{
  uint64_t start_ns = monotonic_ns ();
  uint64_t bytes = clipped (bdev, size, offset);
  int r;

  if (offset >= bdev->size_bytes)
    return -EFBIG;
  r = store_write (bdev->store, buf, bytes, bdev->base_bytes + offset);
  full_warning_note (bdev->store, r);
  ladder_note_write (bdev->ladder, bytes);
  if (r >= 0)
    found (bdev, bytes, offset);
  return timed (bdev, STORE_REQUEST_WRITE, start_ns,
                r < 0 ? r : (int64_t) bytes);
}

int
blockdev_zero (const struct blockdev *bdev, uint64_t length, uint64_t offset)
{
  uint64_t start_ns = monotonic_ns ();
  uint64_t bytes = clipped (bdev, length, offset);
  int r;

  if (bytes == 0)
    return 0;
  r = store_zero (bdev->store, bytes, bdev->base_bytes + offset);
  if (r >= 0)
    found (bdev, bytes, offset);
  return timed (bdev, STORE_REQUEST_TRIM, start_ns, r);
}

int
blockdev_extent (const struct blockdev *bdev, uint64_t offset,
                 uint64_t length, bool *zero, uint64_t *run_bytes)
{
  uint64_t bytes = clipped (bdev, length, offset);

  if (bytes == 0)
    return -ERANGE;
  return store_extent (bdev->store, bdev->base_bytes + offset, bytes, zero,
                       run_bytes);
}
