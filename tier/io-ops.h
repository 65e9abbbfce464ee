/* cswap: the system calls the tier's I/O makes, as a table of functions.
 *
 * The tier reaches io_uring and pread only through a struct tier_io_ops,
 * so that a test can put faults between the tier and the kernel
 * (io-fault.c, selected by CSWAP_TIER_FAULT).  In service the table is
 * tier_io_plain: liburing and pread, one indirect call each.  CTX is the
 * table's own state (NULL for the plain table).
 *
 * Return conventions are liburing's (a negative errno) for the ring calls
 * and the system call's (-1 and errno) for pread.
 */
#ifndef CSWAP_TIER_IO_OPS_H
#define CSWAP_TIER_IO_OPS_H

#include <liburing.h>
#include <sys/types.h>

struct tier_io_ops {
  int (*queue_init) (void *ctx, unsigned entries, struct io_uring *ring);
  void (*queue_exit) (void *ctx, struct io_uring *ring);
  struct io_uring_sqe *(*get_sqe) (void *ctx, struct io_uring *ring);
  int (*submit_and_wait) (void *ctx, struct io_uring *ring, unsigned wait_nr);
  int (*wait_cqe) (void *ctx, struct io_uring *ring, struct io_uring_cqe **cqe);
  ssize_t (*pread) (void *ctx, int fd, void *buf, size_t count, off_t offset);
};

extern const struct tier_io_ops tier_io_plain;

#endif /* CSWAP_TIER_IO_OPS_H */
