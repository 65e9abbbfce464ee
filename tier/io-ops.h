/* cswap: the system calls the tier's I/O makes, as a table of functions.
 *
 * The tier reaches io_uring and pread only through a struct tier_io_ops,
 * so that a test can put faults between the tier and the kernel.  In
 * service the table is tier_io_plain: liburing and pread, one indirect
 * call each.  CTX is the table's own state (NULL for the plain table).
 *
 * Which table a tier gets is decided at link time, not by the
 * environment: a test program that links the fault layer (io-fault.c,
 * tier_faults_dep in tier/meson.build) has it install itself with
 * tier_io_set_layer() from a constructor, before main().  The installed
 * programs link no layer, so every tier they open uses tier_io_plain and
 * no variable can change that.
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

/* A layer in front of tier_io_plain: OPEN returns the table a new tier
 * uses and sets *CTX to its state, CLOSE frees that state (NULL-safe).
 */
struct tier_io_layer {
  const struct tier_io_ops *(*open) (void **ctx);
  void (*close) (void *ctx);
};

/* Installs LAYER for every tier opened from now on.  Call it before any
 * tier is opened (a constructor does): it is read without a lock.
 */
extern void tier_io_set_layer (const struct tier_io_layer *layer);

/* The table for a tier being opened, and in *CTX its state: the layer's,
 * or tier_io_plain (*CTX NULL) with none installed.
 */
extern const struct tier_io_ops *tier_io_open (void **ctx);
/* Frees what tier_io_open made. */
extern void tier_io_close (void *ctx);

#endif /* CSWAP_TIER_IO_OPS_H */
