/* cswap tier: the backing file's first asynchronous direct write, made
 * at open, so that what the kernel sets up for it lazily is set up while
 * memory is plentiful, not under the pressure that makes writeback run.
 *
 * The first asynchronous O_DIRECT write to a file system that uses iomap
 * (ext4, XFS) makes the file system's completion workqueue
 * (sb_init_dio_done_wq), whose rescuer thread kthreadd creates; and
 * kthreadd allocates as any task does, with I/O allowed.  Under pressure
 * that allocation reclaims by swapping out to the device this daemon
 * serves, while the daemon's writer waits for the thread to exist: a
 * deadlock, seen in a 256 MiB VM on 6.12 (issue 63) with the default
 * backing file on ext4: kthreadd, kswapd, jbd2 and the workload in
 * wbt_wait under swap_writepage, cswap-ublk's writer in
 * __kthread_create_on_node under io_uring_enter.  A synchronous write
 * would not do: it waits for itself and needs no workqueue.  So one
 * asynchronous write, through a ring of its own (the tier's ring is made
 * in the process that writes, after nbdkit's fork: ring.h), of the
 * file's first block as it was read.  The workqueue lives as long as the
 * file system is mounted.
 *
 * Threads: called once, from tier_open.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <unistd.h>

#include "dio-warm.h"
#include "tier.h"

int
dio_warm (int fd)
{
  struct io_uring ring;
  struct io_uring_sqe *sqe;
  struct io_uring_cqe *cqe;
  void *block;
  int r;

  if (posix_memalign (&block, TIER_BLOCK_BYTES, TIER_BLOCK_BYTES) != 0)
    return -ENOMEM;
  if (pread (fd, block, TIER_BLOCK_BYTES, 0) != TIER_BLOCK_BYTES) {
    r = -EIO;
    goto out_free;
  }
  r = io_uring_queue_init (1, &ring, 0);
  if (r < 0)
    goto out_free;
  sqe = io_uring_get_sqe (&ring);
  io_uring_prep_write (sqe, fd, block, TIER_BLOCK_BYTES, 0);
  r = io_uring_submit (&ring);
  if (r == 1) {
    r = io_uring_wait_cqe (&ring, &cqe);
    if (r == 0) {
      r = cqe->res == TIER_BLOCK_BYTES ? 0 : cqe->res < 0 ? cqe->res : -EIO;
      io_uring_cqe_seen (&ring, cqe);
    }
  }
  else if (r >= 0)
    r = -EIO;
  io_uring_queue_exit (&ring);
out_free:
  free (block);
  return r;
}
