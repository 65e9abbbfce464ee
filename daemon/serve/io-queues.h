/* cswap: the io_uring queue engine — one thread per CPU queue, each with
 * its own ring, serving a front end's commands (FUSE over io_uring,
 * fuse/fuse-uring.c; ublk, ublk/ublk-queue.c).
 *
 * Both kernels queue a request on the queue of the CPU that sends it and
 * hand it to userspace as the completion of a command the server left
 * outstanding (FUSE's REGISTER/COMMIT_AND_FETCH, ublk's
 * FETCH_REQ/COMMIT_AND_FETCH_REQ); the answer goes back with the next
 * command, in the same io_uring_enter that waits for more.  What is the
 * same for both lives here; a front end fills a small table:
 *
 *   arm       on the queue's thread, before serving: queue the first
 *             command of each of its entries (io_queue_sqe)
 *   complete  one completion of the front end's: serve the request it
 *             brings and queue the next command, or say the entry is
 *             over (the connection or device is gone), or that it failed
 *
 * and the engine does the rest:
 *  - the rings, made by io_queues_create() before a front end forks (an
 *    io_uring fd and its mappings are inherited), each with one submitter
 *    and the kernel's task work deferred into its own io_uring_enter
 *    (SINGLE_ISSUER, DEFER_TASKRUN; kernels before 6.1 lack them and get
 *    a plain ring).  Such a ring binds to the task that enables it, so it
 *    is made disabled and its thread enables it;
 *  - the threads, started by io_queues_start(): each names itself, binds
 *    to its queue's CPU (io-thread.h), readies itself for the I/O path
 *    (memory-safety.h), enables its ring, arms, submits with a poll on
 *    the stop eventfd, and reports to the starter whether the kernel
 *    refused a command at once (it does so during the submit: wrong
 *    sizes, io_uring disabled); the starter waits for every report;
 *  - the loop: io_uring_submit_and_wait() sends the last round's answers
 *    and waits; an io_uring_enter that fails is tried again, up to
 *    IO_QUEUE_MAX_RETRIES times in a row;
 *  - the end: on the stop poll (io_queues_destroy), when every entry is
 *    over, or when the queue cannot go on.  The kernel moves no request
 *    to another queue, so a queue that stops taking requests would leave
 *    its CPU's swap-ins waiting for ever, unkillable, while the others
 *    look healthy: a queue that fails says so, marks the queues failed
 *    and writes the caller's eventfd, and the front end stops the daemon
 *    (visibly, at once, with the machine still usable).  A queue whose
 *    entries are all over writes the eventfd too.
 *
 * Faults can be injected in the test build only (uring-fault.h).
 *
 * Threads and locking: a queue's ring belongs to its thread, and so do
 * the front end's per-queue data the callbacks touch.  The threads share
 * `failed` (an atomic) and, while starting, `lock`, which guards
 * `reports`, `first_error` and `first_why`; the starter waits on
 * `reported` until every thread has reported.  No other lock, and no lock
 * is held while serving (common/lock-order.h: "the daemon's own").
 */
#ifndef CSWAP_IO_QUEUES_H
#define CSWAP_IO_QUEUES_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>

/* Failures in a row after which an entry (the front end counts) or a
 * queue's io_uring_enter (the engine counts) is given up: a transient
 * error clears on the first retry or two, and one that does not would
 * otherwise spin the thread for ever.
 */
#define IO_QUEUE_MAX_RETRIES 16

/* The stop poll's user_data: no front end's command may use it. */
#define IO_QUEUE_STOP_TAG UINT64_MAX

struct io_queue;
struct io_queues;

/* What one completion was, for the engine's counts. */
enum io_queue_step {
  IO_QUEUE_SERVED,              /* served; the next command is queued */
  IO_QUEUE_RESENT,              /* the command failed and went out again */
  IO_QUEUE_ENTRY_OVER,          /* the entry ended: the connection is gone */
  IO_QUEUE_FAILED,              /* the entry cannot go on: stop the daemon */
};

struct io_queue_ops {
  /* On QUEUE's thread, its ring enabled: queue the first command of
   * each entry.  0, or a negative errno with *WHY the step that failed.
   */
  int (*arm) (void *front, struct io_queue *queue, const char **why);
  /* CQE is one of the front end's completions on QUEUE. */
  enum io_queue_step (*complete) (void *front, struct io_queue *queue,
                                  const struct io_uring_cqe *cqe);
};

struct io_queues_config {
  const char *program;          /* messages' prefix: "cswap-fuse" */
  const char *thread_prefix;    /* threads are PREFIX-QID: "cswap-ring" */
  unsigned count;               /* queues; queue QID runs on CPU QID */
  unsigned entries;             /* commands a queue keeps outstanding */
  unsigned ring_flags;          /* the commands' own (IORING_SETUP_SQE128) */
  const struct io_queue_ops *ops;
  void *front;                  /* passed to every op */
};

/* Makes the queues and their rings (no thread starts).  Returns NULL
 * with errno and *WHY (the step and its error, in words) set.
 */
extern struct io_queues *io_queues_create (const struct io_queues_config *config,
                                           const char **why);

/* Starts a thread per queue, which arms and serves.  Returns 0 once
 * every queue has armed, or a negative errno (the first failure, its step
 * in *WHY when WHY is not NULL) with every thread stopped again.  When
 * every entry of a queue is over, or a queue fails, its thread writes 1
 * to the eventfd ENDED_FD.
 */
extern int io_queues_start (struct io_queues *queues, int ended_fd,
                            const char **why);

/* Whether a queue gave up and wrote ENDED_FD for it: the daemon must
 * stop, with an error.
 */
extern bool io_queues_failed (struct io_queues *queues);

/* Stops and joins the threads (each finishes the requests in hand), then
 * closes the rings, which cancels what the kernel still holds of them.
 * NULL is fine.
 */
extern void io_queues_destroy (struct io_queues *queues);

/* For the callbacks, on QUEUE's thread. */
extern unsigned io_queue_id (const struct io_queue *queue);
/* A free SQE of QUEUE's ring, zeroed by the caller.  The ring has a slot
 * per entry and one for the stop poll, and an entry has one command
 * outstanding, so there is always one; were there not, what is queued is
 * submitted first.
 */
extern struct io_uring_sqe *io_queue_sqe (struct io_queue *queue);

#endif /* CSWAP_IO_QUEUES_H */
