/* cswap: a ublk device's queues (ublk-queue.h). */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io-thread.h"
#include "memory-safety.h"
#include "page.h"
#include "ublk-abi.h"
#include "ublk-queue.h"

/* The stop poll's user_data; a tag's is its number. */
#define STOP_TAG UINT64_MAX

#define SECTOR_SHIFT 9

struct ublk_queue {
  struct ublk_queues *owner;
  unsigned qid;
  pthread_t thread;
  bool started;
  struct io_uring ring;
  bool ring_made;
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
  int stop_fd;                          /* eventfd: readable once stopping */
  int ended_fd;                         /* the caller's */
  pthread_mutex_t lock;
  pthread_cond_t reported;
  unsigned reports;                     /* threads that fetched, or failed */
  int first_error;                      /* negative, or 0 */
  const char *first_why;
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

/* A free SQE.  The ring has room for every tag and the stop poll, and a
 * round prepares at most one command per completion it reaps, so one is
 * always there; were it not, what is queued is submitted first.
 */
static struct io_uring_sqe *
next_sqe (struct io_uring *ring)
{
  struct io_uring_sqe *sqe = io_uring_get_sqe (ring);

  if (sqe == NULL) {
    io_uring_submit (ring);
    sqe = io_uring_get_sqe (ring);
    if (sqe == NULL)
      abort ();
  }
  return sqe;
}

/* Queues the command for TAG: FETCH_REQ the first time, then
 * COMMIT_AND_FETCH_REQ with RESULT.
 */
static void
queue_command (struct ublk_queue *queue, unsigned tag, unsigned op,
               int32_t result)
{
  struct io_uring_sqe *sqe = next_sqe (&queue->ring);
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

/* The thread's ring, descriptors and first fetches: 0, or a negative
 * errno with *WHY.
 */
static int
prepare (struct ublk_queue *queue, const char **why)
{
  struct ublk_queues *owner = queue->owner;
  size_t page = sysconf (_SC_PAGESIZE);
  struct io_uring_params params = {
    /* One submitter, this thread; the driver's task work runs inside its
     * io_uring_enter, not as an interruption.
     */
    .flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
  };
  struct io_uring_sqe *sqe;
  int r;

  r = io_uring_queue_init_params (owner->depth + 1, &queue->ring, &params);
  if (r < 0) {
    /* Before 6.1 neither flag exists; the ring works without them. */
    params.flags = 0;
    r = io_uring_queue_init_params (owner->depth + 1, &queue->ring, &params);
  }
  if (r < 0) {
    *why = "io_uring_queue_init";
    return r;
  }
  queue->ring_made = true;
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
    queue_command (queue, tag, UBLK_IO_FETCH_REQ, -1);
  sqe = next_sqe (&queue->ring);
  io_uring_prep_poll_add (sqe, owner->stop_fd, POLLIN);
  sqe->user_data = STOP_TAG;
  r = io_uring_submit (&queue->ring);
  if (r < 0) {
    *why = "io_uring_submit of the first fetches";
    return r;
  }
  return 0;
}

/* Serves until every tag has ended or the stop poll fires. */
static void
serve (struct ublk_queue *queue)
{
  struct ublk_queues *owner = queue->owner;
  unsigned live_tags = owner->depth;
  bool stopping = false;

  while (!stopping && live_tags > 0) {
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    int r = io_uring_submit_and_wait (&queue->ring, 1);

    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
      fprintf (stderr, "cswap-ublk: queue %u: io_uring_submit_and_wait: %s\n",
               queue->qid, strerror (-r));
      break;
    }
    io_uring_for_each_cqe (&queue->ring, head, cqe) {
      seen++;
      if (cqe->user_data == STOP_TAG) {
        stopping = true;
        continue;
      }
      unsigned tag = cqe->user_data;
      if (cqe->res == UBLK_IO_RES_OK) {
        int32_t result = serve_request (queue, tag);
        queue_command (queue, tag, UBLK_IO_COMMIT_AND_FETCH_REQ, result);
      }
      else {
        /* UBLK_IO_RES_ABORT (-ENODEV): the device is stopping or gone;
         * anything else is the driver refusing the command.
         */
        if (cqe->res != -ENODEV)
          fprintf (stderr, "cswap-ublk: queue %u tag %u: %s\n", queue->qid,
                   tag, strerror (-cqe->res));
        live_tags--;
      }
    }
    io_uring_cq_advance (&queue->ring, seen);
  }
  if (!stopping) {
    uint64_t one = 1;
    (void) !write (owner->ended_fd, &one, sizeof one);
  }
}

static void *
queue_thread_main (void *arg)
{
  struct ublk_queue *queue = arg;
  struct ublk_queues *owner = queue->owner;
  const char *why = NULL;
  int r;

  io_thread_name_and_pin ("cswap-ublk", queue->qid);
  memory_safety_mark_io_thread ();
  /* Faulted in now, and locked by mlockall: never an allocation while
   * serving.
   */
  memset (queue->buffer, 0, owner->max_io_bytes);
  r = prepare (queue, &why);
  pthread_mutex_lock (&owner->lock);
  if (r < 0 && owner->first_error == 0) {
    owner->first_error = r;
    owner->first_why = why;
  }
  owner->reports++;
  pthread_cond_signal (&owner->reported);
  pthread_mutex_unlock (&owner->lock);
  if (r == 0)
    serve (queue);
  return NULL;
}

struct ublk_queues *
ublk_queues_start (int char_fd, unsigned nr_queues, unsigned depth,
                   uint32_t max_io_bytes, const struct blockdev *window,
                   int ended_fd,
                   bool ioctl_encode, const char **why)
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
  queues->ended_fd = ended_fd;
  queues->count = nr_queues;
  pthread_mutex_init (&queues->lock, NULL);
  pthread_cond_init (&queues->reported, NULL);
  queues->stop_fd = eventfd (0, EFD_CLOEXEC);
  if (queues->stop_fd == -1) {
    *why = "eventfd";
    goto fail;
  }
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
  for (unsigned q = 0; q < nr_queues; q++) {
    r = pthread_create (&queues->queues[q].thread, NULL, queue_thread_main,
                        &queues->queues[q]);
    if (r != 0) {
      errno = r;
      *why = "pthread_create";
      goto fail;
    }
    queues->queues[q].started = true;
  }
  pthread_mutex_lock (&queues->lock);
  while (queues->reports < nr_queues)
    pthread_cond_wait (&queues->reported, &queues->lock);
  r = queues->first_error;
  *why = queues->first_why;
  pthread_mutex_unlock (&queues->lock);
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
  uint64_t one = 1;

  if (queues == NULL)
    return;
  if (queues->stop_fd != -1)
    (void) !write (queues->stop_fd, &one, sizeof one);
  for (unsigned q = 0; q < queues->count; q++) {
    struct ublk_queue *queue = &queues->queues[q];

    if (queue->started)
      pthread_join (queue->thread, NULL);
    if (queue->ring_made)
      io_uring_queue_exit (&queue->ring);
    if (queue->descs)
      munmap ((void *) queue->descs, queue->descs_bytes);
    free (queue->buffer);
  }
  if (queues->stop_fd != -1)
    close (queues->stop_fd);
  pthread_mutex_destroy (&queues->lock);
  pthread_cond_destroy (&queues->reported);
  free (queues);
}
