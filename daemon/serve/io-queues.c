/* cswap: the io_uring queue engine (io-queues.h). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon-log.h"
#include "io-queues.h"
#include "io-thread.h"
#include "memory-safety.h"
#include "uring-fault.h"

struct io_queue {
  struct io_queues *owner;
  unsigned qid;
  struct io_uring ring;
  bool ring_made;
  pthread_t thread;
  bool started;
  unsigned long resent;         /* commands sent again after an error */
};

struct io_queues {
  struct io_queues_config config;
  int stop_fd;                  /* eventfd: readable once stopping */
  int ended_fd;                 /* the caller's */
  atomic_bool failed;           /* a queue gave up (io_queues_failed) */
  pthread_mutex_t lock;
  pthread_cond_t reported;
  unsigned reports;             /* protected by lock: threads that armed,
                                   or failed to */
  int first_error;              /* protected by lock: negative, or 0 */
  const char *first_why;        /* protected by lock: its step */
  struct io_queue queues[];
};

static char why_buffer[160];

unsigned
io_queue_id (const struct io_queue *queue)
{
  return queue->qid;
}

struct io_uring_sqe *
io_queue_sqe (struct io_queue *queue)
{
  struct io_uring_sqe *sqe = io_uring_get_sqe (&queue->ring);

  if (sqe == NULL) {
    io_uring_submit (&queue->ring);
    sqe = io_uring_get_sqe (&queue->ring);
    if (sqe == NULL)
      abort ();
  }
  return sqe;
}

/* Makes the calling thread the ring's one submitter.  liburing 2.3
 * declares io_uring_enable_rings() but its library lacks it, so this is
 * the system call.
 */
static int
enable_ring (struct io_queue *queue)
{
  if (syscall (__NR_io_uring_register, queue->ring.ring_fd,
               IORING_REGISTER_ENABLE_RINGS, NULL, 0) == -1)
    return -errno;
  return 0;
}

/* The stop poll and the front end's first commands, submitted: 0, or
 * the kernel's refusal (negative) with *WHY.
 */
static int
arm (struct io_queue *queue, const char **why)
{
  const struct io_queues_config *config = &queue->owner->config;
  struct io_uring_sqe *sqe = io_queue_sqe (queue);
  struct io_uring_cqe *cqe;
  unsigned head;
  int r;

  io_uring_prep_poll_add (sqe, queue->owner->stop_fd, POLLIN);
  sqe->user_data = IO_QUEUE_STOP_TAG;
  r = config->ops->arm (config->front, queue, why);
  if (r < 0)
    return r;
  *why = "io_uring_submit of the first commands";
  r = io_uring_submit (&queue->ring);
  if (r < 0)
    return r;
  if ((unsigned) r != config->entries + 1)
    return -EAGAIN;
  /* Refusals complete during the submit.  Requests that already came
   * stay in the CQ for the serving loop.
   */
  *why = "the first commands";
  io_uring_for_each_cqe (&queue->ring, head, cqe)
    if (cqe->user_data != IO_QUEUE_STOP_TAG && cqe->res < 0)
      return cqe->res;
  return 0;
}

/* io_uring_submit_and_wait: 0 (go on), or -1 once it has failed
 * IO_QUEUE_MAX_RETRIES times in a row (*FAILURES counts).
 */
static int
submit_and_wait (struct io_queue *queue, unsigned *failures)
{
  const char *program = queue->owner->config.program;
  int r = uring_fault_strikes (URING_FAULT_SUBMIT_ERROR)
          ? -EFAULT : io_uring_submit_and_wait (&queue->ring, 1);

  if (r >= 0 || r == -EINTR) {
    *failures = 0;
    return 0;
  }
  if (++*failures > IO_QUEUE_MAX_RETRIES) {
    daemon_log ("%s: io_uring queue %u: io_uring_enter failed %u "
                "times in a row: %s\n", program, queue->qid,
                IO_QUEUE_MAX_RETRIES, strerror (-r));
    return -1;
  }
  if (*failures == 1 && r != -EAGAIN && r != -EBUSY)
    daemon_log ("%s: io_uring queue %u: %s (trying again)\n", program,
                queue->qid, strerror (-r));
  usleep (1000);                /* a moment for whatever it was to clear */
  return 0;
}

/* Serves until the stop poll fires, every entry is over, or the queue
 * cannot go on (io-queues.h says why it then stops the daemon).
 */
static void
serve (struct io_queue *queue)
{
  struct io_queues *owner = queue->owner;
  const struct io_queues_config *config = &owner->config;
  unsigned live_entries = config->entries, submit_failures = 0;
  bool stopping = false, failed = false;

  while (!stopping && !failed && live_entries > 0) {
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;

    if (submit_and_wait (queue, &submit_failures) == -1) {
      failed = true;
      break;
    }
    io_uring_for_each_cqe (&queue->ring, head, cqe) {
      seen++;
      if (cqe->user_data == IO_QUEUE_STOP_TAG) {
        stopping = true;
        continue;
      }
      switch (config->ops->complete (config->front, queue, cqe)) {
      case IO_QUEUE_SERVED:
        break;
      case IO_QUEUE_RESENT:
        queue->resent++;
        break;
      case IO_QUEUE_FAILED:
        failed = true;
        /* fall through */
      case IO_QUEUE_ENTRY_OVER:
        live_entries--;
        break;
      }
    }
    io_uring_cq_advance (&queue->ring, seen);
  }
  io_uring_submit (&queue->ring);       /* the last round's answers */
  if (queue->resent)
    daemon_log ("%s: io_uring queue %u: %lu command%s sent again "
                "after an error\n", config->program, queue->qid,
                queue->resent, queue->resent == 1 ? "" : "s");
  if (failed) {
    daemon_log ("%s: io_uring queue %u cannot serve its CPU's "
                "requests: stopping the daemon\n", config->program,
                queue->qid);
    atomic_store (&owner->failed, true);
  }
  if (failed || live_entries == 0)
    eventfd_write (owner->ended_fd, 1);
}

static void *
queue_thread_main (void *arg)
{
  struct io_queue *queue = arg;
  struct io_queues *owner = queue->owner;
  const char *why = "enabling the ring";
  int r;

  io_thread_name_and_pin (owner->config.thread_prefix, queue->qid);
  memory_safety_mark_io_thread ();
  r = enable_ring (queue);
  if (r == 0)
    r = arm (queue, &why);
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

/* QUEUE's ring, disabled until its thread enables it: a slot for every
 * entry's command and one for the stop poll.
 */
static int
make_ring (struct io_queue *queue)
{
  const struct io_queues_config *config = &queue->owner->config;
  struct io_uring_params params = {
    .flags = config->ring_flags | IORING_SETUP_R_DISABLED
      | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
  };
  int r = io_uring_queue_init_params (config->entries + 1, &queue->ring,
                                      &params);

  if (r == -EINVAL) {
    /* Before 6.1 the last two flags do not exist; the ring works
     * without them.
     */
    params = (struct io_uring_params) {
      .flags = config->ring_flags | IORING_SETUP_R_DISABLED,
    };
    r = io_uring_queue_init_params (config->entries + 1, &queue->ring,
                                    &params);
  }
  if (r == 0)
    queue->ring_made = true;
  return r;
}

struct io_queues *
io_queues_create (const struct io_queues_config *config, const char **why)
{
  struct io_queues *queues;
  int r;

  queues = calloc (1, sizeof *queues
                      + config->count * sizeof queues->queues[0]);
  if (queues == NULL) {
    *why = "out of memory";
    return NULL;
  }
  queues->config = *config;
  queues->ended_fd = -1;
  uring_fault_init ();
  pthread_mutex_init (&queues->lock, NULL);
  pthread_cond_init (&queues->reported, NULL);
  queues->stop_fd = eventfd (0, EFD_CLOEXEC);
  if (queues->stop_fd == -1) {
    r = errno;
    snprintf (why_buffer, sizeof why_buffer, "eventfd: %s", strerror (r));
    *why = why_buffer;
    io_queues_destroy (queues);
    errno = r;
    return NULL;
  }
  for (unsigned qid = 0; qid < config->count; qid++) {
    queues->queues[qid].owner = queues;
    queues->queues[qid].qid = qid;
    r = make_ring (&queues->queues[qid]);
    if (r < 0) {
      snprintf (why_buffer, sizeof why_buffer,
                "setting up io_uring queue %u: %s", qid, strerror (-r));
      *why = why_buffer;
      io_queues_destroy (queues);
      errno = -r;
      return NULL;
    }
  }
  return queues;
}

bool
io_queues_failed (struct io_queues *queues)
{
  return atomic_load (&queues->failed);
}

static void
stop_threads (struct io_queues *queues)
{
  eventfd_write (queues->stop_fd, 1);
  for (unsigned qid = 0; qid < queues->config.count; qid++)
    if (queues->queues[qid].started) {
      pthread_join (queues->queues[qid].thread, NULL);
      queues->queues[qid].started = false;
    }
}

int
io_queues_start (struct io_queues *queues, int ended_fd, const char **why)
{
  unsigned started = 0;
  const char *first_why = "pthread_create";
  int r = 0;

  queues->ended_fd = ended_fd;
  for (unsigned qid = 0; qid < queues->config.count; qid++) {
    struct io_queue *queue = &queues->queues[qid];

    r = pthread_create (&queue->thread, NULL, queue_thread_main, queue);
    if (r) {
      r = -r;
      break;
    }
    queue->started = true;
    started++;
  }
  pthread_mutex_lock (&queues->lock);
  while (queues->reports < started)
    pthread_cond_wait (&queues->reported, &queues->lock);
  if (started == queues->config.count) {
    r = queues->first_error;
    first_why = queues->first_why;
  }
  pthread_mutex_unlock (&queues->lock);
  if (r < 0) {
    stop_threads (queues);
    if (why)
      *why = first_why;
  }
  return r;
}

void
io_queues_destroy (struct io_queues *queues)
{
  if (queues == NULL)
    return;
  if (queues->stop_fd != -1)
    stop_threads (queues);
  for (unsigned qid = 0; qid < queues->config.count; qid++)
    if (queues->queues[qid].ring_made)
      io_uring_queue_exit (&queues->queues[qid].ring);
  if (queues->stop_fd != -1)
    close (queues->stop_fd);
  pthread_mutex_destroy (&queues->lock);
  pthread_cond_destroy (&queues->reported);
  free (queues);
}
