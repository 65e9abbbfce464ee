/* cswap: a ublk device's queues, one thread each, serving the store.
 *
 * Each queue has a thread bound to its CPU (blk-mq maps each CPU to a
 * queue, so a swap-in is served on the CPU that faulted, as with the
 * FUSE rings), its own io_uring, DEPTH tags and one buffer of the
 * device's largest request: the thread serves one request at a time,
 * moving its data with pread() and pwrite() on /dev/ublkcN
 * (UBLK_F_USER_COPY), so the tags need no buffer of their own.  The
 * threads, their rings, the start-up and the stop are the io_uring queue
 * engine's (io-queues.h); what is ublk's is here:
 *  1. arm: map the queue's descriptors from /dev/ublkcN and queue a
 *     FETCH_REQ for each tag (the driver's START_DEV waits for every
 *     queue to have fetched every tag, so ublk_queues_start returns only
 *     once every thread has);
 *  2. complete: a completion with res UBLK_IO_RES_OK is a request in its
 *     tag, served through the thread's buffer by the request layer
 *     (blockdev.h: the same range checks, timing and full warning as
 *     every front end's) and answered with COMMIT_AND_FETCH_REQ;
 *     UBLK_IO_RES_ABORT is the tag's end (the device is stopping or
 *     gone).
 * A queue whose tags all end while the daemon did not ask writes the
 * caller's eventfd, so that main() stops rather than serve a dead device.
 *
 * The buffer is faulted in before the first request, after the daemon's
 * memory is locked (memory-safety.h): a page first touched while serving
 * a swap-out would be an allocation that only a swap-out can satisfy.
 * A queue costs one 128 KiB buffer whatever its depth, where a buffer per
 * tag for the driver to copy into would cost depth times that.
 *
 * Threads and locking: a queue's descriptors and buffer belong to its
 * thread.  The threads share the window (thread-safe), read-only; the
 * engine's own sharing is io-queues.h's.  No lock here.
 */
#ifndef CSWAP_UBLK_QUEUE_H
#define CSWAP_UBLK_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "blockdev.h"

struct ublk_queues;

/* Maps and starts NR_QUEUES queue threads of the device whose char
 * device is open as CHAR_FD, DEPTH tags each with buffers of
 * MAX_IO_BYTES, serving WINDOW (its byte 0 is the device's sector 0;
 * the kernel keeps requests within its size).  Returns once every thread
 * has fetched its tags, or NULL with errno set and *WHY naming the step
 * that failed.  ENDED_FD is written when the queues end of themselves.
 */
extern struct ublk_queues *ublk_queues_start (int char_fd,
                                              unsigned nr_queues,
                                              unsigned depth,
                                              uint32_t max_io_bytes,
                                              const struct blockdev *window,
                                              int ended_fd, bool ioctl_encode,
                                              const char **why);

/* Stops the threads (after STOP_DEV, whose aborts end them anyway) and
 * frees everything.  NULL is fine.
 */
extern void ublk_queues_stop (struct ublk_queues *queues);

#endif /* CSWAP_UBLK_QUEUE_H */
