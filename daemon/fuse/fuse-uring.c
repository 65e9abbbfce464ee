/* cswap: the FUSE-over-io_uring queues (fuse-uring.h), on the io_uring
 * queue engine (io-queues.h), which owns the threads, their rings, the
 * start-up, the retries of io_uring_enter and the stop.  What is FUSE's
 * is here:
 *  - each queue's entries: a header and a payload buffer the kernel
 *    writes a request into and reads the reply from, with the two
 *    commands, REGISTER (an entry's first, and again after the kernel
 *    dropped it) and COMMIT_AND_FETCH (a reply, and the entry given back
 *    for the next request);
 *  - arm: a REGISTER for each entry; the kernel refuses one at once when
 *    it will not take the ring (wrong sizes, io_uring disabled);
 *  - complete: a completion with res 0 is a request in its entry,
 *    dispatched (fuse-raw-dispatch.c) straight into the entry's buffers
 *    and answered with COMMIT_AND_FETCH; ENOTCONN and the like mean the
 *    connection is over; another error sends the command again, up to
 *    IO_QUEUE_MAX_RETRIES times in a row for an entry, after which the
 *    queue fails (and the daemon stops: io-queues.h says why).
 * Each queue's thread runs on its queue's CPU, as libfuse's own io_uring
 * transport does (io-thread.h: 10% off a swapping Python program's time).
 *
 * Threads and locking: an entry and its buffers belong to its queue's
 * thread.  The threads share the device (thread-safe), read-only.  No
 * lock.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>

#include "daemon-log.h"
#include "fuse-raw.h"
#include "fuse-uring-abi.h"
#include "fuse-uring.h"
#include "io-queues.h"
#include "uring-fault.h"

#define ENABLE_URING_PARAMETER "/sys/module/fuse/parameters/enable_uring"
#define POSSIBLE_CPUS "/sys/devices/system/cpu/possible"

/* Requests in flight per queue: while the thread serves one, the kernel
 * can fill the others, and the thread then takes them in one round.
 */
#define ENTRIES_PER_QUEUE 8

struct uring_entry {
  unsigned qid;
  struct fuse_uring_req_header *header;
  void *payload;                /* RAW_PAYLOAD_BYTES */
  struct iovec iov[2];          /* what REGISTER points the kernel at */
  enum fuse_uring_cmd command;  /* the one outstanding, to send again */
  uint64_t commit_id;           /* its commit_id */
  unsigned failures;            /* completions in a row that failed */
};

struct uring_queues {
  int fd;                       /* /dev/fuse */
  const struct device *device;
  struct io_queues *engine;
  unsigned count;
  struct uring_entry entries[]; /* ENTRIES_PER_QUEUE a queue, by qid */
};

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

/* Queues COMMAND for ENTRY on RING (the queue's). */
static void
queue_fuse_command (const struct uring_queues *queues, struct io_queue *ring,
                    struct uring_entry *entry, enum fuse_uring_cmd command,
                    uint64_t commit_id)
{
  struct io_uring_sqe *sqe = io_queue_sqe (ring);
  struct fuse_uring_cmd_req request = {
    .commit_id = commit_id,
    .qid = entry->qid,
  };

  /* An SQE128 slot is two struct io_uring_sqe; the command area starts
   * at the `cmd` field and runs to the end of the slot.
   */
  memset (sqe, 0, 2 * sizeof *sqe);
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = queues->fd;
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
serve_entry (const struct uring_queues *queues, struct io_queue *ring,
             struct uring_entry *entry)
{
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

  raw_dispatch (queues->device, &request, &reply);
  if (reply.none)               /* never on a ring; refuse, to go on */
    reply.out = (struct fuse_out_header) { .error = -EINVAL,
                                           .unique = in->unique };
  reply.out.len = sizeof reply.out + reply.payload_size;
  memcpy (header->in_out, &reply.out, sizeof reply.out);
  header->ring_ent_in_out.payload_sz = reply.payload_size;
  queue_fuse_command (queues, ring, entry, FUSE_IO_URING_CMD_COMMIT_AND_FETCH,
                      commit_id);
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

/* ENTRY's command failed with RES: sends it again, or gives up once it
 * has failed IO_QUEUE_MAX_RETRIES times in a row.  A refused
 * COMMIT_AND_FETCH is sent again as it was (the reply is still in the
 * entry's buffers, and the kernel still waits for it) unless the kernel
 * no longer knows the request (ENOENT: ended meanwhile); then, as after a
 * refused REGISTER, the entry registers afresh.
 */
static enum io_queue_step
resend_entry (const struct uring_queues *queues, struct io_queue *ring,
              struct uring_entry *entry, int res)
{
  if (++entry->failures > IO_QUEUE_MAX_RETRIES) {
    daemon_log ("cswap-fuse: io_uring queue %u: a ring entry failed "
                "%u times in a row (%s)\n", entry->qid, IO_QUEUE_MAX_RETRIES,
                strerror (-res));
    return IO_QUEUE_FAILED;
  }
  if (entry->command == FUSE_IO_URING_CMD_COMMIT_AND_FETCH && res != -ENOENT)
    queue_fuse_command (queues, ring, entry,
                        FUSE_IO_URING_CMD_COMMIT_AND_FETCH, entry->commit_id);
  else
    queue_fuse_command (queues, ring, entry, FUSE_IO_URING_CMD_REGISTER, 0);
  return IO_QUEUE_RESENT;
}

/* The engine's arm: a REGISTER for each of the queue's entries. */
static int
arm_queue (void *front, struct io_queue *ring, const char **why)
{
  struct uring_queues *queues = front;
  struct uring_entry *entries
    = &queues->entries[io_queue_id (ring) * ENTRIES_PER_QUEUE];

  (void) why;
  for (unsigned i = 0; i < ENTRIES_PER_QUEUE; i++)
    queue_fuse_command (queues, ring, &entries[i], FUSE_IO_URING_CMD_REGISTER,
                        0);
  return 0;
}

/* The engine's complete: CQE is an entry's. */
static enum io_queue_step
complete_entry (void *front, struct io_queue *ring,
                const struct io_uring_cqe *cqe)
{
  const struct uring_queues *queues = front;
  struct uring_entry *entry = (void *) (uintptr_t) cqe->user_data;

  if (cqe->res == 0) {
    entry->failures = 0;
    serve_entry (queues, ring, entry);
    return IO_QUEUE_SERVED;
  }
  if (connection_over (cqe->res))
    return IO_QUEUE_ENTRY_OVER;
  return resend_entry (queues, ring, entry, cqe->res);
}

static const struct io_queue_ops fuse_queue_ops = {
  .arm = arm_queue,
  .complete = complete_entry,
};

/* ENTRY's buffers, faulted in now: under mlockall's MCL_ONFAULT a
 * buffer's pages are otherwise first touched by a request, when memory
 * may be shortest.
 */
static int
make_entry (struct uring_entry *entry, unsigned qid)
{
  entry->qid = qid;
  entry->header = calloc (1, sizeof *entry->header);
  entry->payload = aligned_alloc (CSWAP_PAGE_SIZE, RAW_PAYLOAD_BYTES);
  if (entry->header == NULL || entry->payload == NULL)
    return -1;
  memset (entry->payload, 0, RAW_PAYLOAD_BYTES);
  entry->iov[0] = (struct iovec) { entry->header, sizeof *entry->header };
  entry->iov[1] = (struct iovec) { entry->payload, RAW_PAYLOAD_BYTES };
  return 0;
}

struct uring_queues *
uring_queues_create (int fd, const struct device *device, const char **why)
{
  unsigned count = possible_cpus ();
  struct uring_queues *queues;

  if (count == 0) {
    *why = "cannot read " POSSIBLE_CPUS;
    return NULL;
  }
  queues = calloc (1, sizeof *queues
                   + count * ENTRIES_PER_QUEUE * sizeof queues->entries[0]);
  if (queues == NULL) {
    *why = "out of memory";
    return NULL;
  }
  queues->fd = fd;
  queues->device = device;
  queues->count = count;
  for (unsigned i = 0; i < count * ENTRIES_PER_QUEUE; i++)
    if (make_entry (&queues->entries[i], i / ENTRIES_PER_QUEUE) == -1) {
      *why = "out of memory";
      uring_queues_destroy (queues);
      return NULL;
    }
  queues->engine = io_queues_create (&(struct io_queues_config) {
      .program = "cswap-fuse", .thread_prefix = "cswap-ring",
      .count = count, .entries = ENTRIES_PER_QUEUE,
      .ring_flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32,
      .ops = &fuse_queue_ops, .front = queues,
    }, why);
  if (queues->engine == NULL) {
    uring_queues_destroy (queues);
    return NULL;
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
  return io_queues_failed (queues->engine);
}

int
uring_queues_start (struct uring_queues *queues, int ended_fd)
{
  return io_queues_start (queues->engine, ended_fd, NULL);
}

void
uring_queues_destroy (struct uring_queues *queues)
{
  if (queues == NULL)
    return;
  /* The rings first: closing one cancels the entries the kernel still
   * holds, whose buffers go after.
   */
  io_queues_destroy (queues->engine);
  for (unsigned i = 0; i < queues->count * ENTRIES_PER_QUEUE; i++) {
    free (queues->entries[i].header);
    free (queues->entries[i].payload);
  }
  free (queues);
}
