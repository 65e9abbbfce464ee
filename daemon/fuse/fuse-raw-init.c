/* cswap: the FUSE_INIT negotiation of the raw transports (fuse-raw-init.h).
 *
 * The connection asked for is libfuse's for cswap (fuse-ops.c's init),
 * plus what libfuse 3.14 cannot say:
 *  - max_write and max_pages of 256 pages, so that a swap-out cluster is
 *    one request (the io_uring payload buffers are that big, too);
 *  - max_background 64, congestion_threshold 48 instead of the kernel's
 *    12 and 9: a loop device's direct I/O is all background requests, so
 *    12 would cap the whole device, reads and writes together, at 12
 *    requests in flight.  (On a busy 2-CPU machine fio could not tell 12
 *    from 64 at a queue depth of 17; the cap matters deeper.)
 *  - FUSE_OVER_IO_URING when the caller has rings ready.
 * Asked for and taken only where the kernel offers them: ASYNC_READ and
 * ASYNC_DIO (several requests of one file in flight, a loop device's
 * asynchronous I/O stays so), ATOMIC_O_TRUNC (open sees O_TRUNC and
 * refuses it, as with libfuse), BIG_WRITES, MAX_PAGES and INIT_EXT.  No
 * writeback cache, no readahead (swap readahead decides what comes in),
 * no splice.
 *
 * Locking: none; single-threaded by contract.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cleanup.h"
#include "device.h"
#include "fuse-raw-init.h"
#include "fuse-uring-abi.h"

#define MAX_BACKGROUND 64
#define CONGESTION_THRESHOLD 48

static char why_buffer[128];

int
raw_init_read (int fd, struct raw_init *init, const char **why)
{
  /* The kernel wants room for a whole write even for INIT. */
  const size_t buf_size = BLOCKDEV_MAX_IO_BYTES + 4096;
  CLEANUP_FREE char *buf = malloc (buf_size);
  const struct fuse_in_header *in = (const void *) buf;
  const struct fuse_init_in *arg = (const void *) (in + 1);
  ssize_t n;

  if (buf == NULL) {
    *why = "out of memory";
    return -1;
  }
  do
    n = read (fd, buf, buf_size);
  while (n == -1 && (errno == EINTR || errno == ENOENT));
  if (n == -1) {
    snprintf (why_buffer, sizeof why_buffer, "reading FUSE_INIT: %m");
    *why = why_buffer;
    return -1;
  }
  /* The first message of a new connection is always INIT; its fixed
   * part grew over time (flags2 since 7.36), so take what came.
   */
  if ((size_t) n < sizeof *in + offsetof (struct fuse_init_in, flags2)
      || in->opcode != FUSE_INIT) {
    *why = "the kernel's first message is not a FUSE_INIT";
    return -1;
  }
  *init = (struct raw_init) {
    .unique = in->unique,
    .major = arg->major,
    .minor = arg->minor,
    .flags = arg->flags,
  };
  if ((size_t) n >= sizeof *in + sizeof *arg && (arg->flags & FUSE_INIT_EXT))
    init->flags |= (uint64_t) arg->flags2 << 32;
  if (init->major != FUSE_KERNEL_VERSION) {
    snprintf (why_buffer, sizeof why_buffer,
              "FUSE protocol %u.%u: only major version %d is spoken",
              init->major, init->minor, FUSE_KERNEL_VERSION);
    *why = why_buffer;
    return -1;
  }
  return 0;
}

bool
raw_init_offers_uring (const struct raw_init *init)
{
  return init->flags & FUSE_URING_FLAG_OVER_IO_URING;
}

int
raw_init_reply (int fd, const struct raw_init *init, bool over_io_uring,
                const char **why)
{
  uint64_t wanted = FUSE_ASYNC_READ | FUSE_ASYNC_DIO | FUSE_ATOMIC_O_TRUNC
                    | FUSE_BIG_WRITES | FUSE_MAX_PAGES | FUSE_INIT_EXT;
  uint64_t flags;
  struct fuse_out_header out = {
    .len = sizeof out + sizeof (struct fuse_init_out),
    .unique = init->unique,
  };
  struct fuse_init_out arg = {
    .major = FUSE_KERNEL_VERSION,
    .minor = MIN (init->minor, FUSE_URING_MINOR_VERSION),
    .max_readahead = 0,
    .max_background = MAX_BACKGROUND,
    .congestion_threshold = CONGESTION_THRESHOLD,
    .max_write = BLOCKDEV_MAX_IO_BYTES,
    .time_gran = 1,
    .max_pages = BLOCKDEV_MAX_IO_BYTES / CSWAP_PAGE_SIZE,
  };
  struct iovec iov[] = {
    { &out, sizeof out },
    { &arg, sizeof arg },
  };

  if (over_io_uring)
    wanted |= FUSE_URING_FLAG_OVER_IO_URING;
  flags = wanted & init->flags;
  arg.flags = flags;
  arg.flags2 = flags >> 32;
  if (writev (fd, iov, 2) != (ssize_t) out.len) {
    snprintf (why_buffer, sizeof why_buffer, "answering FUSE_INIT: %m");
    *why = why_buffer;
    return -1;
  }
  return 0;
}
