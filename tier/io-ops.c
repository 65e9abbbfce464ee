/* cswap: the tier's I/O calls as they are in service: liburing and pread
 * (see io-ops.h), and the one hook through which a test program's fault
 * layer replaces them.
 */
#include <unistd.h>

#include "io-ops.h"

static int
plain_queue_init (void *ctx, unsigned entries, struct io_uring *ring)
{
  (void) ctx;
  return io_uring_queue_init (entries, ring, 0);
}

static void
plain_queue_exit (void *ctx, struct io_uring *ring)
{
  (void) ctx;
  io_uring_queue_exit (ring);
}

static struct io_uring_sqe *
plain_get_sqe (void *ctx, struct io_uring *ring)
{
  (void) ctx;
  return io_uring_get_sqe (ring);
}

static int
plain_submit_and_wait (void *ctx, struct io_uring *ring, unsigned wait_nr)
{
  (void) ctx;
  return io_uring_submit_and_wait (ring, wait_nr);
}

static int
plain_wait_cqe (void *ctx, struct io_uring *ring, struct io_uring_cqe **cqe)
{
  (void) ctx;
  return io_uring_wait_cqe (ring, cqe);
}

static ssize_t
plain_pread (void *ctx, int fd, void *buf, size_t count, off_t offset)
{
  (void) ctx;
  return pread (fd, buf, count, offset);
}

const struct tier_io_ops tier_io_plain = {
  .queue_init = plain_queue_init,
  .queue_exit = plain_queue_exit,
  .get_sqe = plain_get_sqe,
  .submit_and_wait = plain_submit_and_wait,
  .wait_cqe = plain_wait_cqe,
  .pread = plain_pread,
};

/* Set before main() in a test program that links a layer; NULL in the
 * installed programs.
 */
static const struct tier_io_layer *installed_layer;

void
tier_io_set_layer (const struct tier_io_layer *layer)
{
  installed_layer = layer;
}

const struct tier_io_ops *
tier_io_open (void **ctx)
{
  *ctx = NULL;
  return installed_layer ? installed_layer->open (ctx) : &tier_io_plain;
}

void
tier_io_close (void *ctx)
{
  if (installed_layer)
    installed_layer->close (ctx);
}
