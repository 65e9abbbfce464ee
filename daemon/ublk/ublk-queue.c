/* cswap: the ublk devices' queues (ublk-queue.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon-log.h"
#include "io-queues.h"
#include "page.h"
#include "ublk-abi.h"
#include "ublk-queue.h"

#define SECTOR_SHIFT 9

/* A command's user_data: the device's index above, the tag below. */
#define DEVICE_SHIFT 32
#define TAG_MASK 0xffffffffu

/* One device's queue QID, on thread QID. */
struct device_queue {
  const struct ublk_io_desc *descs;     /* mapped from its /dev/ublkcN */
  size_t descs_bytes;
  unsigned tags_ended;
};

/* Thread QID's: its buffer and queue QID of every device. */
struct ublk_queue {
  struct ublk_queues *owner;
  unsigned qid;
  unsigned char *buffer;                /* max_io_bytes, faulted in */
  struct device_queue devices[UBLK_QUEUES_MAX_DEVICES];
};

struct ublk_queues {
  struct ublk_queue_device devices[UBLK_QUEUES_MAX_DEVICES];
  unsigned nr_devices;
  uint32_t max_io_bytes;                /* the largest device's */
  bool ioctl_encode;                    /* I/O commands ioctl-encoded */
  int ended_fd;                         /* the caller's */
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

/* Queues the command for DEVICE's TAG: FETCH_REQ the first time, then
 * COMMIT_AND_FETCH_REQ with RESULT.
 */
static void
queue_command (struct ublk_queue *queue, struct io_queue *ring,
               unsigned device, unsigned tag, unsigned op, int32_t result)
{
  const struct ublk_queues *owner = queue->owner;
  struct io_uring_sqe *sqe = io_queue_sqe (ring);
  struct ublk_io_cmd cmd = {
    .q_id = queue->qid,
    .tag = tag,
    .result = result,           /* no addr: the data moves by user copy */
  };

  memset (sqe, 0, sizeof *sqe);
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = owner->devices[device].char_fd;
  sqe->cmd_op = owner->ioctl_encode ? UBLK_IOCTL_IO (op) : op;
  memcpy (sqe->cmd, &cmd, sizeof cmd);
  sqe->user_data = (uint64_t) device << DEVICE_SHIFT | tag;
}

/* A read: the store's bytes into the thread's buffer, then into the
 * request (pwrite on the char device): the bytes done or -errno.
 */
static int32_t
serve_read (const struct ublk_queue *queue, const struct ublk_queue_device *dev,
            unsigned tag, uint64_t offset, uint64_t bytes)
{
  int64_t done = blockdev_read (dev->window, queue->buffer, bytes, offset);

  if (done <= 0)
    return done;
  if (pwrite (dev->char_fd, queue->buffer, done,
              ublk_user_copy_offset (queue->qid, tag)) != done)
    return -EIO;
  return done;
}

/* A write: the request's bytes into the thread's buffer (pread on the
 * char device), then into the store: the bytes done or -errno.
 */
static int32_t
serve_write (const struct ublk_queue *queue, const struct ublk_queue_device *dev,
             unsigned tag, uint64_t offset, uint64_t bytes)
{
  if (pread (dev->char_fd, queue->buffer, bytes,
             ublk_user_copy_offset (queue->qid, tag)) != (ssize_t) bytes)
    return -EIO;
  return blockdev_write (dev->window, queue->buffer, bytes, offset);
}

/* The request in DEVICE's TAG, served: the bytes done (reads and
 * writes) or 0, or a negative errno.
 */
static int32_t
serve_request (const struct ublk_queue *queue, unsigned device, unsigned tag)
{
  const struct ublk_queue_device *dev = &queue->owner->devices[device];
  const struct ublk_io_desc *desc = &queue->devices[device].descs[tag];
  uint64_t offset = desc->start_sector << SECTOR_SHIFT;
  uint64_t bytes = (uint64_t) desc->nr_sectors << SECTOR_SHIFT;

  switch (desc->op_flags & 0xff) {
  case UBLK_IO_OP_READ:
    return bytes > dev->max_io_bytes ? -EIO
           : serve_read (queue, dev, tag, offset, bytes);
  case UBLK_IO_OP_WRITE:
    return bytes > dev->max_io_bytes ? -EIO
           : serve_write (queue, dev, tag, offset, bytes);
  case UBLK_IO_OP_FLUSH:
    return 0;                   /* no volatile cache: every write is done */
  case UBLK_IO_OP_DISCARD:
  case UBLK_IO_OP_WRITE_ZEROES:
    return blockdev_zero (dev->window, bytes, offset);
  default:
    return -EOPNOTSUPP;
  }
}

/* The engine's arm, on the queue's thread: its buffer faulted in (and
 * locked by mlockall: never an allocation while serving), each device's
 * descriptors mapped, a FETCH_REQ for each of its tags.  0, or a
 * negative errno with *WHY.
 */
static int
arm_queue (void *front, struct io_queue *ring, const char **why)
{
  struct ublk_queues *owner = front;
  struct ublk_queue *queue = &owner->queues[io_queue_id (ring)];
  size_t page = sysconf (_SC_PAGESIZE);

  memset (queue->buffer, 0, owner->max_io_bytes);
  for (unsigned d = 0; d < owner->nr_devices; d++) {
    const struct ublk_queue_device *dev = &owner->devices[d];
    struct device_queue *dq = &queue->devices[d];

    dq->descs_bytes = (dev->depth * sizeof (struct ublk_io_desc) + page - 1)
                      / page * page;
    dq->descs = mmap (NULL, dq->descs_bytes, PROT_READ,
                      MAP_SHARED | MAP_POPULATE, dev->char_fd,
                      descs_offset (queue->qid));
    if (dq->descs == MAP_FAILED) {
      dq->descs = NULL;
      *why = "mmap of the queue's descriptors";
      return -errno;
    }
    for (unsigned tag = 0; tag < dev->depth; tag++)
      queue_command (queue, ring, d, tag, UBLK_IO_FETCH_REQ, -1);
  }
  return 0;
}

/* The engine's complete: UBLK_IO_RES_OK is a request in the tag, served
 * and answered with COMMIT_AND_FETCH_REQ; UBLK_IO_RES_ABORT (-ENODEV)
 * is the device stopping or gone, and anything else the driver refusing
 * the command: either way the tag's end, and once every tag of the
 * device's queue has ended, the caller hears of it.
 */
static enum io_queue_step
complete_tag (void *front, struct io_queue *ring,
              const struct io_uring_cqe *cqe)
{
  struct ublk_queues *owner = front;
  struct ublk_queue *queue = &owner->queues[io_queue_id (ring)];
  unsigned device = cqe->user_data >> DEVICE_SHIFT;
  unsigned tag = cqe->user_data & TAG_MASK;
  struct device_queue *dq = &queue->devices[device];

  if (cqe->res == UBLK_IO_RES_OK) {
    queue_command (queue, ring, device, tag, UBLK_IO_COMMIT_AND_FETCH_REQ,
                   serve_request (queue, device, tag));
    return IO_QUEUE_SERVED;
  }
  if (cqe->res != -ENODEV)
    daemon_log ("cswap-ublk: device %u queue %u tag %u: %s\n", device,
                queue->qid, tag, strerror (-cqe->res));
  if (++dq->tags_ended == owner->devices[device].depth)
    eventfd_write (owner->ended_fd, 1);
  return IO_QUEUE_ENTRY_OVER;
}

static const struct io_queue_ops ublk_queue_ops = {
  .arm = arm_queue,
  .complete = complete_tag,
};

/* Whether the COUNT DEVICES can share queues: as many queues each, tags
 * in range, and not too many of them.
 */
static bool
devices_fit (const struct ublk_queue_device *devices, unsigned count)
{
  if (count == 0 || count > UBLK_QUEUES_MAX_DEVICES)
    return false;
  for (unsigned d = 0; d < count; d++)
    if (devices[d].nr_queues != devices[0].nr_queues
        || devices[d].depth == 0 || devices[d].depth > UBLK_MAX_QUEUE_DEPTH)
      return false;
  return true;
}

struct ublk_queues *
ublk_queues_start (const struct ublk_queue_device *devices, unsigned count,
                   int ended_fd, bool ioctl_encode, const char **why)
{
  unsigned nr_queues, entries = 0;
  struct ublk_queues *queues;
  int r;

  if (!devices_fit (devices, count)) {
    errno = EINVAL;
    *why = "devices with different numbers of queues, or too many";
    return NULL;
  }
  nr_queues = devices[0].nr_queues;
  queues = calloc (1, sizeof *queues + nr_queues * sizeof queues->queues[0]);
  if (queues == NULL) {
    *why = "calloc";
    return NULL;
  }
  memcpy (queues->devices, devices, count * sizeof *devices);
  queues->nr_devices = count;
  for (unsigned d = 0; d < count; d++) {
    entries += devices[d].depth;
    if (devices[d].max_io_bytes > queues->max_io_bytes)
      queues->max_io_bytes = devices[d].max_io_bytes;
  }
  queues->ioctl_encode = ioctl_encode;
  queues->ended_fd = ended_fd;
  queues->count = nr_queues;
  for (unsigned q = 0; q < nr_queues; q++) {
    struct ublk_queue *queue = &queues->queues[q];

    queue->owner = queues;
    queue->qid = q;
    r = posix_memalign ((void **) &queue->buffer, CSWAP_PAGE_SIZE,
                        queues->max_io_bytes);
    if (r != 0) {
      errno = r;
      *why = "posix_memalign of the queue's buffer";
      goto fail;
    }
  }
  queues->engine = io_queues_create (&(struct io_queues_config) {
      .program = "cswap-ublk", .thread_prefix = "cswap-ublk",
      .count = nr_queues, .entries = entries,
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

    for (unsigned d = 0; d < queues->nr_devices; d++)
      if (queue->devices[d].descs)
        munmap ((void *) queue->devices[d].descs,
                queue->devices[d].descs_bytes);
    free (queue->buffer);
  }
  free (queues);
}
