/* cswap: a ublk device's queues (ublk-queue.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io-queues.h"
#include "page.h"
#include "ublk-abi.h"
#include "ublk-queue.h"

#define SECTOR_SHIFT 9

struct ublk_queue {
  struct ublk_queues *owner;
  unsigned qid;
  const struct ublk_io_desc *descs;     /* mapped from /dev/ublkcN */
  size_t descs_bytes;
  unsigned char *buffer;                /* max_io_bytes, faulted in */
};

struct ublk_queues {
  int char_fd;
  unsigned depth;
  uint32_t max_io_bytes;
  bool ioctl_encode;                    /* I/O commands ioctl-encoded */
  const struct blockdev *window;        /* sector 0 is its byte 0 */
  struct io_queues *engine;             /* the threads and their rings */
  unsigned count;
  struct ublk_queue queues[];
};

/* Where queue QID's descriptors are mapped from: each queue's array has
 * room for the driver's largest depth, whatever the depth asked.
 */
static off_t
descs_offset (unsigned qid)
{
  size_t page = sysconf (_SC_PAGESIZE);
  size_t max_bytes = UBLK_MAX_QUEUE_DEPTH * sizeof (struct ublk_io_desc);

  return UBLK_DESCS_OFFSET + (off_t) qid * ((max_bytes + page - 1) / page * page);
}

/* Queues the command for TAG: FETCH_REQ the first time, then
 * COMMIT_AND_FETCH_REQ with RESULT.
 */
static void
queue_command (struct ublk_queue *queue, struct io_queue *ring, unsigned tag,
               unsigned op, int32_t result)
{
  struct io_uring_sqe *sqe = io_queue_sqe (ring);
  struct ublk_io_cmd cmd = {
    .q_id = queue->qid,
    .tag = tag,
    .result = result,           /* no addr: the data moves by user copy */
  };

  memset (sqe, 0, sizeof *sqe);
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = queue->owner->char_fd;
  sqe->cmd_op = queue->owner->ioctl_encode ? UBLK_IOCTL_IO (op) : op;
  memcpy (sqe->cmd, &cmd, sizeof cmd);
  sqe->user_data = tag;
}

/* A read: the store's bytes into the queue's buffer, then into the
 * request (pwrite on the char device): the bytes done or -errno.
 */
static int32_t
serve_read (const struct ublk_queue *queue, unsigned tag, uint64_t offset,
            uint64_t bytes)
{
  const struct ublk_queues *owner = queue->owner;
  int64_t done = blockdev_read (owner->window, queue->buffer, bytes, offset);

  if (done <= 0)
    return done;
  if (pwrite (owner->char_fd, queue->buffer, done,
              ublk_user_copy_offset (queue->qid, tag)) != done)
    return -EIO;
  return done;
}

/* A write: the request's bytes into the queue's buffer (pread on the
 * char device), then into the store: the bytes done or -errno.
 */
static int32_t
serve_write (const struct ublk_queue *queue, unsigned tag, uint64_t offset,
             uint64_t bytes)
{
  const struct ublk_queues *owner = queue->owner;

  if (pread (owner->char_fd, queue->buffer, bytes,
             ublk_user_copy_offset (queue->qid, tag)) != (ssize_t) bytes)
    return -EIO;
  return blockdev_write (owner->window, queue->buffer, bytes, offset);
}

/* The request in TAG's descriptor, served: the bytes done (reads and
 * writes) or 0, or a negative errno.
 */
static int32_t
serve_request (const struct ublk_queue *queue, unsigned tag)
{
  const struct ublk_queues *owner = queue->owner;
  const struct ublk_io_desc *desc = &queue->descs[tag];
  uint64_t offset = desc->start_sector << SECTOR_SHIFT;
  uint64_t bytes = (uint64_t) desc->nr_sectors << SECTOR_SHIFT;

  switch (desc->op_flags & 0xff) {
  case UBLK_IO_OP_READ:
    return bytes > owner->max_io_bytes ? -EIO : serve_read (queue, tag, offset, bytes);
  case UBLK_IO_OP_WRITE:
    return bytes > owner->max_io_bytes ? -EIO : serve_write (queue, tag, offset, bytes);
  case UBLK_IO_OP_FLUSH:
    return 0;                   /* no volatile cache: every write is done */
  case UBLK_IO_OP_DISCARD:
  case UBLK_IO_OP_WRITE_ZEROES:
    return blockdev_zero (owner->window, bytes, offset);
  default:
    return -EOPNOTSUPP;
  }
}

/* The engine's arm, on the queue's thread: its buffer faulted in (and
 * locked by mlockall: never an allocation while serving), its
 * descriptors mapped, a FETCH_REQ for each tag.  0, or a negative errno
 * with *WHY.
 */
static int
arm_queue (void *front, struct io_queue *ring, const char **why)
{
  struct ublk_queues *owner = front;
  struct ublk_queue *queue = &owner->queues[io_queue_id (ring)];
  size_t page = sysconf (_SC_PAGESIZE);

  memset (queue->buffer, 0, owner->max_io_bytes);
  queue->descs_bytes = (owner->depth * sizeof (struct ublk_io_desc) + page - 1)
                       / page * page;
  queue->descs = mmap (NULL, queue->descs_bytes, PROT_READ,
                       MAP_SHARED | MAP_POPULATE, owner->char_fd,
                       descs_offset (queue->qid));
  if (queue->descs == MAP_FAILED) {
    queue->descs = NULL;
    *why = "mmap of the queue's descriptors";
    return -errno;
  }
  for (unsigned tag = 0; tag < owner->depth; tag++)
    queue_command (queue, ring, tag, UBLK_IO_FETCH_REQ, -1);
  return 0;
}

/* The engine's complete: UBLK_IO_RES_OK is a request in the tag, served
 * and answered with COMMIT_AND_FETCH_REQ; UBLK_IO_RES_ABORT (-ENODEV)
 * is the device stopping or gone, and anything else the driver refusing
 * the command: either way the tag's end.
 */
static enum io_queue_step
complete_tag (void *front, struct io_queue *ring,
              const struct io_uring_cqe *cqe)
{
  struct ublk_queues *owner = front;
  struct ublk_queue *queue = &owner->queues[io_queue_id (ring)];
  unsigned tag = cqe->user_data;

  if (cqe->res == UBLK_IO_RES_OK) {
    queue_command (queue, ring, tag, UBLK_IO_COMMIT_AND_FETCH_REQ,
                   serve_request (queue, tag));
    return IO_QUEUE_SERVED;
  }
  if (cqe->res != -ENODEV)
    fprintf (stderr, "cswap-ublk: queue %u tag %u: %s\n", queue->qid, tag,
             strerror (-cqe->res));
  return IO_QUEUE_ENTRY_OVER;
}

static const struct io_queue_ops ublk_queue_ops = {
  .arm = arm_queue,
  .complete = complete_tag,
};

struct ublk_queues *
ublk_queues_start (int char_fd, unsigned nr_queues, unsigned depth,
                   uint32_t max_io_bytes, const struct blockdev *window,
                   int ended_fd, bool ioctl_encode, const char **why)
{
  struct ublk_queues *queues;
  int r;

  queues = calloc (1, sizeof *queues + nr_queues * sizeof queues->queues[0]);
  if (queues == NULL) {
    *why = "calloc";
    return NULL;
  }
  queues->char_fd = char_fd;
  queues->depth = depth;
  queues->max_io_bytes = max_io_bytes;
  queues->ioctl_encode = ioctl_encode;
  queues->window = window;
  queues->count = nr_queues;
  for (unsigned q = 0; q < nr_queues; q++) {
    struct ublk_queue *queue = &queues->queues[q];

    queue->owner = queues;
    queue->qid = q;
    r = posix_memalign ((void **) &queue->buffer, CSWAP_PAGE_SIZE,
                        max_io_bytes);
    if (r != 0) {
      errno = r;
      *why = "posix_memalign of the queue's buffer";
      goto fail;
    }
  }
  queues->engine = io_queues_create (&(struct io_queues_config) {
      .program = "cswap-ublk", .thread_prefix = "cswap-ublk",
      .count = nr_queues, .entries = depth,
      .ops = &ublk_queue_ops, .front = queues,
    }, why);
  if (queues->engine == NULL)
    goto fail;
  r = io_queues_start (queues->engine, ended_fd, why);
  if (r < 0) {
    errno = -r;
    goto fail;
  }
  return queues;

 fail:
  {
    int saved = errno;
    ublk_queues_stop (queues);
    errno = saved;
  }
  return NULL;
}

void
ublk_queues_stop (struct ublk_queues *queues)
{
  if (queues == NULL)
    return;
  io_queues_destroy (queues->engine);
  for (unsigned q = 0; q < queues->count; q++) {
    struct ublk_queue *queue = &queues->queues[q];

    if (queue->descs)
      munmap ((void *) queue->descs, queue->descs_bytes);
    free (queue->buffer);
  }
  free (queues);
}
