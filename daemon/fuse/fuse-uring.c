/* cswap: the FUSE-over-io_uring queues (fuse-uring.h).
 *
 * Each queue's thread runs on its queue's CPU, as libfuse's own io_uring
 * transport does: the kernel queues a request on the ring of the CPU that
 * sends it, so the wake-up stays on that CPU, and the thread, real-time
 * (memory-safety.c), preempts whatever ran there.  Before the threads
 * were real-time, pinning made them wait behind other tasks and was
 * slower; now it takes 10% off a swapping Python program's time
 * (doc/design.md, "Idle CPUs and halt polling").  The thread:
 *  1. submits a REGISTER for each of its entries and a poll on the stop
 *     eventfd, and reports whether the kernel refused a registration at
 *     once (it does so synchronously: wrong sizes, io_uring disabled);
 *  2. loops: one io_uring_submit_and_wait() sends the replies prepared
 *     in the last round and waits; every completion with res 0 is a
 *     request in its entry, dispatched (fuse-raw-dispatch.c) straight
 *     into the entry's buffers and answered with COMMIT_AND_FETCH, which
 *     also gives the entry back for the next request;
 *  3. sends a command the kernel failed again (a transient error), up
 *     to MAX_RETRIES times in a row;
 *  4. ends when the stop poll completes, when every entry has ended
 *     (ENOTCONN and the like: the connection is gone), or when it cannot
 *     go on (serve() says why it then stops the daemon), and reports the
 *     last two through the caller's eventfd.
 * The rings are made by uring_queues_create(), before the daemon forks
 * (the io_uring fd and its mappings are inherited); the threads only after.
 * Each ring has one submitter, its thread, and defers the kernel's task
 * work (SINGLE_ISSUER, DEFER_TASKRUN): a request reaches the thread as
 * work run inside its own io_uring_enter, not as a signal-like
 * notification that interrupts it.  Such a ring binds to the task that
 * enables it, so it is made disabled and the thread enables it.
 *
 * Threads and locking: each ring, its entries and buffers belong to one
 * thread only.  The threads share the device (thread-safe), `failed` (an
 * atomic) and, while starting, `lock`, which guards `reports` and
 * `first_error`; the starter
 * waits on `reported` until every thread has reported.  No other lock,
 * and no lock is held while serving.
 */
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/param.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fuse-raw.h"
#include "fuse-uring-abi.h"
#include "fuse-uring-fault.h"
#include "fuse-uring.h"
#include "io-thread.h"
#include "memory-safety.h"

#define ENABLE_URING_PARAMETER "/sys/module/fuse/parameters/enable_uring"
#define POSSIBLE_CPUS "/sys/devices/system/cpu/possible"

/* Requests in flight per queue: while the thread serves one, the kernel
 * can fill the others, and the thread then takes them in one round.
 */
#define ENTRIES_PER_QUEUE 8

/* The stop poll's user_data; entries' are their addresses. */
#define STOP_TAG 0

/* Failures in a row after which an entry, or a queue's submits, are
 * given up: a transient error clears on the first retry or two, and one
 * that does not would otherwise spin the thread for ever.
 */
#define MAX_RETRIES 16

struct uring_entry {
  struct uring_queue *queue;
  struct fuse_uring_req_header *header;
  void *payload;                /* RAW_PAYLOAD_BYTES */
  struct iovec iov[2];          /* what REGISTER points the kernel at */
  enum fuse_uring_cmd command;  /* the one outstanding, to send again */
  uint64_t commit_id;           /* its commit_id */
  unsigned failures;            /* completions in a row that failed */
};

struct uring_queue {
  struct uring_queues *owner;
  unsigned qid;
  struct io_uring ring;
  bool ring_made;
  pthread_t thread;
  bool started;
  unsigned long resent;         /* commands sent again after an error */
  struct uring_entry entries[ENTRIES_PER_QUEUE];
};

struct uring_queues {
  int fd;                       /* /dev/fuse */
  const struct device *device;
  int stop_fd;                  /* eventfd: readable once stopping */
  int ended_fd;                 /* the caller's: written when all ended */
  atomic_bool failed;           /* a queue gave up (uring_queues_failed) */
  pthread_mutex_t lock;
  pthread_cond_t reported;
  unsigned reports;             /* threads that said how REGISTER went */
  int first_error;              /* the first refusal, negative; or 0 */
  unsigned count;
  struct uring_queue queues[];
};

static char why_buffer[160];

bool
fuse_uring_enabled (const char **why)
{
  FILE *f = fopen (ENABLE_URING_PARAMETER, "re");
  int c = f ? fgetc (f) : EOF;

  if (f)
    fclose (f);
  if (c == 'Y')
    return true;
  if (why && f == NULL)
    *why = "this kernel has no FUSE over io_uring ("
           ENABLE_URING_PARAMETER " is missing)";
  else if (why)
    *why = "FUSE over io_uring is off (" ENABLE_URING_PARAMETER
           " is N; root can write Y to it)";
  return false;
}

/* The kernel has a queue per possible CPU, numbered by CPU. */
static unsigned
possible_cpus (void)
{
  FILE *f = fopen (POSSIBLE_CPUS, "re");
  char list[256];
  const char *last;
  bool got = f && fgets (list, sizeof list, f);

  if (f)
    fclose (f);
  if (!got)
    return 0;
  /* "0-3" or "0,2-5": the highest CPU ends the list. */
  last = list + strcspn (list, "\n");
  while (last > list && last[-1] >= '0' && last[-1] <= '9')
    last--;
  return strtoul (last, NULL, 10) + 1;
}

static void
prep_fuse_command (struct io_uring_sqe *sqe, struct uring_entry *entry,
                   enum fuse_uring_cmd command, uint64_t commit_id)
{
  struct fuse_uring_cmd_req request = {
    .commit_id = commit_id,
    .qid = entry->queue->qid,
  };

  /* An SQE128 slot is two struct io_uring_sqe; the command area starts
   * at the `cmd` field and runs to the end of the slot.
   */
  memset (sqe, 0, 2 * sizeof *sqe);
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = entry->queue->owner->fd;
  sqe->cmd_op = command;
  sqe->user_data = (uintptr_t) entry;
  entry->command = command;
  entry->commit_id = commit_id;
  if (command == FUSE_IO_URING_CMD_REGISTER) {
    sqe->addr = (uintptr_t) entry->iov;
    /* The header and the payload; one iovec only is a registration the
     * kernel refuses (EINVAL), for the fault test.
     */
    sqe->len = uring_fault_strikes (URING_FAULT_REFUSE) ? 1 : 2;
  }
  else if (uring_fault_strikes (URING_FAULT_COMMIT_EINVAL))
    request.qid = UINT16_MAX;
  memcpy ((char *) sqe + offsetof (struct io_uring_sqe, cmd), &request,
          sizeof request);
}

/* Serves the request the kernel put in ENTRY and queues its reply (the
 * SQE goes out with the next submit).
 */
static void
serve_entry (struct uring_entry *entry)
{
  struct uring_queue *queue = entry->queue;
  struct fuse_uring_req_header *header = entry->header;
  const struct fuse_in_header *in = (const void *) header->in_out;
  uint64_t commit_id = header->ring_ent_in_out.commit_id;
  struct raw_request request = {
    .in = in,
    .op_args = header->op_in,
    .payload = entry->payload,
    .payload_size = MIN (header->ring_ent_in_out.payload_sz,
                         RAW_PAYLOAD_BYTES),
  };
  struct raw_reply reply = {
    .payload = entry->payload,
    .payload_capacity = RAW_PAYLOAD_BYTES,
  };
  struct io_uring_sqe *sqe;

  raw_dispatch (queue->owner->device, &request, &reply);
  if (reply.none)               /* never on a ring; refuse, to go on */
    reply.out = (struct fuse_out_header) { .error = -EINVAL,
                                           .unique = in->unique };
  reply.out.len = sizeof reply.out + reply.payload_size;
  memcpy (header->in_out, &reply.out, sizeof reply.out);
  header->ring_ent_in_out.payload_sz = reply.payload_size;

  /* The SQ has a slot per entry, and an entry has at most one command
   * outstanding: there is always room.
   */
  sqe = io_uring_get_sqe (&queue->ring);
  prep_fuse_command (sqe, entry, FUSE_IO_URING_CMD_COMMIT_AND_FETCH,
                     commit_id);
}

/* Makes the calling thread the ring's one submitter.  liburing 2.3
 * declares io_uring_enable_rings() but its library lacks it, so this is
 * the system call.
 */
static int
enable_ring (struct uring_queue *queue)
{
  if (syscall (__NR_io_uring_register, queue->ring.ring_fd,
               IORING_REGISTER_ENABLE_RINGS, NULL, 0) == -1)
    return -errno;
  return 0;
}

/* Registers every entry; returns 0 or the kernel's refusal (negative). */
static int
register_entries (struct uring_queue *queue)
{
  struct io_uring_sqe *sqe;
  struct io_uring_cqe *cqe;
  unsigned head;
  int r;

  sqe = io_uring_get_sqe (&queue->ring);
  io_uring_prep_poll_add (sqe, queue->owner->stop_fd, POLLIN);
  sqe->user_data = STOP_TAG;
  for (unsigned i = 0; i < ENTRIES_PER_QUEUE; i++)
    prep_fuse_command (io_uring_get_sqe (&queue->ring), &queue->entries[i],
                       FUSE_IO_URING_CMD_REGISTER, 0);
  r = io_uring_submit (&queue->ring);
  if (r < 0)
    return r;
  if (r != ENTRIES_PER_QUEUE + 1)
    return -EAGAIN;
  /* Refusals complete during the submit.  Requests that already came
   * stay in the CQ for the serving loop.
   */
  io_uring_for_each_cqe (&queue->ring, head, cqe)
    if (cqe->user_data != STOP_TAG && cqe->res < 0)
      return cqe->res;
  return 0;
}

/* Whether a completion's result says the connection is over (unmounted,
 * aborted, the ring closing): the entry's end, not an error.
 */
static bool
connection_over (int res)
{
  return res == -ENOTCONN || res == -ECONNABORTED || res == -ECANCELED
         || res == -ENODEV;
}

/* ENTRY's command failed with RES: sends it again and returns 0, or
 * returns -1 once it has failed MAX_RETRIES times in a row.  A refused
 * COMMIT_AND_FETCH is sent again as it was (the reply is still in the
 * entry's buffers, and the kernel still waits for it) unless the kernel
 * no longer knows the request (ENOENT: ended meanwhile); then, as after a
 * refused REGISTER, the entry registers afresh.
 */
static int
resend_entry (struct uring_entry *entry, int res)
{
  struct uring_queue *queue = entry->queue;

  if (++entry->failures > MAX_RETRIES) {
    fprintf (stderr, "cswap-fuse: io_uring queue %u: a ring entry failed "
             "%u times in a row (%s)\n", queue->qid, MAX_RETRIES,
             strerror (-res));
    return -1;
  }
  queue->resent++;
  if (entry->command == FUSE_IO_URING_CMD_COMMIT_AND_FETCH && res != -ENOENT)
    prep_fuse_command (io_uring_get_sqe (&queue->ring), entry,
                       FUSE_IO_URING_CMD_COMMIT_AND_FETCH, entry->commit_id);
  else
    prep_fuse_command (io_uring_get_sqe (&queue->ring), entry,
                       FUSE_IO_URING_CMD_REGISTER, 0);
  return 0;
}

/* The kernel sends each request to the queue of the CPU it was made on,
 * and nothing moves it to another: a queue that stops taking requests
 * leaves that CPU's swap-ins waiting for ever, unkillable, while the
 * other queues look healthy.  So a queue that cannot go on (an entry that
 * keeps failing, io_uring_enter that keeps failing) does not retire
 * quietly: it says so and marks the queues failed, and the daemon stops
 * with exit 1 (fuse-raw-serve.c).  For a swap user that loses the pages on
 * the device, as a daemon's death does, but visibly, at once, and with
 * the machine still usable; a hang would hold every task that faults on
 * that CPU, and then the machine.
 */
static void
serve (struct uring_queue *queue)
{
  unsigned live_entries = ENTRIES_PER_QUEUE, submit_failures = 0;
  bool stopping = false, failed = false;

  while (!stopping && !failed && live_entries > 0) {
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    int r = uring_fault_strikes (URING_FAULT_SUBMIT_ERROR)
            ? -EFAULT : io_uring_submit_and_wait (&queue->ring, 1);

    if (r >= 0 || r == -EINTR)
      submit_failures = 0;
    else if (++submit_failures > MAX_RETRIES) {
      fprintf (stderr, "cswap-fuse: io_uring queue %u: io_uring_enter failed "
               "%u times in a row: %s\n", queue->qid, MAX_RETRIES,
               strerror (-r));
      failed = true;
      break;
    }
    else {
      if (submit_failures == 1 && r != -EAGAIN && r != -EBUSY)
        fprintf (stderr, "cswap-fuse: io_uring queue %u: %s (trying "
                 "again)\n", queue->qid, strerror (-r));
      usleep (1000);            /* a moment for whatever it was to clear */
    }
    io_uring_for_each_cqe (&queue->ring, head, cqe) {
      struct uring_entry *entry = (void *) (uintptr_t) cqe->user_data;

      seen++;
      if (cqe->user_data == STOP_TAG)
        stopping = true;
      else if (cqe->res == 0) {
        entry->failures = 0;
        serve_entry (entry);
      }
      else if (connection_over (cqe->res))
        live_entries--;         /* it is over: the entry's end */
      else if (resend_entry (entry, cqe->res) == -1) {
        live_entries--;
        failed = true;
      }
    }
    io_uring_cq_advance (&queue->ring, seen);
  }
  io_uring_submit (&queue->ring);       /* the last round's replies */
  if (queue->resent)
    fprintf (stderr, "cswap-fuse: io_uring queue %u: %lu command%s sent "
             "again after an error\n", queue->qid, queue->resent,
             queue->resent == 1 ? "" : "s");
  if (failed) {
    fprintf (stderr, "cswap-fuse: io_uring queue %u cannot serve its CPU's "
             "requests: stopping the daemon\n", queue->qid);
    atomic_store (&queue->owner->failed, true);
  }
  if (failed || live_entries == 0)
    eventfd_write (queue->owner->ended_fd, 1);
}

static void *
queue_thread_main (void *arg)
{
  struct uring_queue *queue = arg;
  struct uring_queues *owner = queue->owner;
  int r;

  io_thread_name_and_pin ("cswap-ring", queue->qid);
  memory_safety_mark_io_thread ();
  r = enable_ring (queue);
  if (r == 0)
    r = register_entries (queue);
  pthread_mutex_lock (&owner->lock);
  if (r < 0 && owner->first_error == 0)
    owner->first_error = r;
  owner->reports++;
  pthread_cond_signal (&owner->reported);
  pthread_mutex_unlock (&owner->lock);
  if (r == 0)
    serve (queue);
  return NULL;
}

static int
make_queue (struct uring_queue *queue)
{
  struct io_uring_params params = {
    .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32
      | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN
      | IORING_SETUP_R_DISABLED,
  };
  int r;

  for (unsigned i = 0; i < ENTRIES_PER_QUEUE; i++) {
    struct uring_entry *entry = &queue->entries[i];

    entry->queue = queue;
    entry->header = calloc (1, sizeof *entry->header);
    entry->payload = aligned_alloc (CSWAP_PAGE_SIZE, RAW_PAYLOAD_BYTES);
    if (entry->header == NULL || entry->payload == NULL)
      return -ENOMEM;
    /* Faulted in now: under mlockall's MCL_ONFAULT a buffer's pages are
     * otherwise first touched by a request, when memory may be shortest.
     */
    memset (entry->payload, 0, RAW_PAYLOAD_BYTES);
    entry->iov[0] = (struct iovec) { entry->header, sizeof *entry->header };
    entry->iov[1] = (struct iovec) { entry->payload, RAW_PAYLOAD_BYTES };
  }
  /* A slot for every entry's command and one for the stop poll. */
  r = io_uring_queue_init_params (ENTRIES_PER_QUEUE + 1, &queue->ring,
                                  &params);
  if (r == 0)
    queue->ring_made = true;
  return r;
}

struct uring_queues *
uring_queues_create (int fd, const struct device *device, const char **why)
{
  unsigned count = possible_cpus ();
  struct uring_queues *queues;
  int r;

  if (count == 0) {
    *why = "cannot read " POSSIBLE_CPUS;
    return NULL;
  }
  queues = calloc (1, sizeof *queues + count * sizeof queues->queues[0]);
  if (queues == NULL) {
    *why = "out of memory";
    return NULL;
  }
  queues->fd = fd;
  uring_fault_init ();
  queues->device = device;
  queues->count = count;
  queues->ended_fd = -1;
  pthread_mutex_init (&queues->lock, NULL);
  pthread_cond_init (&queues->reported, NULL);
  queues->stop_fd = eventfd (0, EFD_CLOEXEC);
  if (queues->stop_fd == -1) {
    snprintf (why_buffer, sizeof why_buffer, "eventfd: %m");
    *why = why_buffer;
    uring_queues_destroy (queues);
    return NULL;
  }
  for (unsigned qid = 0; qid < count; qid++) {
    queues->queues[qid].owner = queues;
    queues->queues[qid].qid = qid;
    r = make_queue (&queues->queues[qid]);
    if (r < 0) {
      snprintf (why_buffer, sizeof why_buffer,
                "setting up io_uring queue %u: %s", qid, strerror (-r));
      *why = why_buffer;
      uring_queues_destroy (queues);
      return NULL;
    }
  }
  return queues;
}

unsigned
uring_queues_count (const struct uring_queues *queues)
{
  return queues->count;
}

bool
uring_queues_failed (struct uring_queues *queues)
{
  return atomic_load (&queues->failed);
}

static void
stop_threads (struct uring_queues *queues)
{
  eventfd_write (queues->stop_fd, 1);
  for (unsigned qid = 0; qid < queues->count; qid++)
    if (queues->queues[qid].started) {
      pthread_join (queues->queues[qid].thread, NULL);
      queues->queues[qid].started = false;
    }
}

int
uring_queues_start (struct uring_queues *queues, int ended_fd)
{
  unsigned started = 0;
  int r = 0;

  queues->ended_fd = ended_fd;
  for (unsigned qid = 0; qid < queues->count; qid++) {
    struct uring_queue *queue = &queues->queues[qid];

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
  if (started == queues->count)
    r = queues->first_error;
  pthread_mutex_unlock (&queues->lock);
  if (r < 0)
    stop_threads (queues);
  return r;
}

void
uring_queues_destroy (struct uring_queues *queues)
{
  if (queues == NULL)
    return;
  if (queues->stop_fd != -1)
    stop_threads (queues);
  for (unsigned qid = 0; qid < queues->count; qid++) {
    struct uring_queue *queue = &queues->queues[qid];

    /* Closing the ring cancels the entries the kernel still holds. */
    if (queue->ring_made)
      io_uring_queue_exit (&queue->ring);
    for (unsigned i = 0; i < ENTRIES_PER_QUEUE; i++) {
      free (queue->entries[i].header);
      free (queue->entries[i].payload);
    }
  }
  if (queues->stop_fd != -1)
    close (queues->stop_fd);
  pthread_mutex_destroy (&queues->lock);
  pthread_cond_destroy (&queues->reported);
  free (queues);
}
