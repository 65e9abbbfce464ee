/* cswap: what a front end's per-CPU I/O threads share as they start.
 *
 * The FUSE rings (fuse-uring.c) and the ublk queues (ublk/ublk-queue.c)
 * each run one thread per CPU queue, made the same way:
 *  - each thread names itself and binds to its queue's CPU: the kernel
 *    queues a request on the queue of the CPU that sends it, so a bound
 *    thread is woken there and, real-time (memory-safety.h), preempts
 *    whatever ran there (doc/design.md, "Idle CPUs and halt polling":
 *    10% off a swapping Python program's time);
 *  - each sets up its own ring (a ring with one submitter binds to the
 *    task that enables it) and reports whether that worked; the starter
 *    waits for every report and fails if one failed (io_thread_start).
 *
 * Locking: an io_thread_start's lock guards its counts; it is a leaf
 * (nothing else is taken under it) and is held only while starting.
 */
#ifndef CSWAP_IO_THREAD_H
#define CSWAP_IO_THREAD_H

#include <pthread.h>

/* Names the calling thread PREFIX-CPU (for top -H and the tests; at
 * most 15 bytes are kept) and binds it to CPU, unless the daemon may not
 * run there (a cpuset, CPUAffinity=, taskset): the thread then floats,
 * as it does if the binding fails.
 */
extern void io_thread_name_and_pin (const char *prefix, unsigned cpu);

/* The threads' reports to their starter. */
struct io_thread_start {
  pthread_mutex_t lock;
  pthread_cond_t reported;
  unsigned reports;             /* protected by lock */
  int first_error;              /* protected by lock: negative, or 0 */
  const char *first_why;        /* protected by lock: its step, or NULL */
};

extern void io_thread_start_init (struct io_thread_start *start);
extern void io_thread_start_destroy (struct io_thread_start *start);

/* Once from each thread: R is 0 or a negative errno, WHY the step that
 * failed (a string that outlives the start).
 */
extern void io_thread_start_report (struct io_thread_start *start, int r,
                                    const char *why);

/* Waits until COUNT threads have reported; returns the first failure
 * (0 if none), with its step in *WHY when WHY is not NULL.
 */
extern int io_thread_start_wait (struct io_thread_start *start,
                                 unsigned count, const char **why);

#endif /* CSWAP_IO_THREAD_H */
