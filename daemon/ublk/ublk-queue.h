/* cswap: a ublk device's queues, one thread each, serving the store.
 *
 * Each queue has a thread bound to its CPU (blk-mq maps each CPU to a
 * queue, so a swap-in is served on the CPU that faulted, as with the
 * FUSE rings), its own io_uring, DEPTH tags and one buffer of the
 * device's largest request: the thread serves one request at a time,
 * moving its data with pread() and pwrite() on /dev/ublkcN
 * (UBLK_F_USER_COPY), so the tags need no buffer of their own.  The
 * thread:
 *  1. maps the queue's descriptors from /dev/ublkcN and submits a
 *     FETCH_REQ for each tag, then reports (the driver's START_DEV waits
 *     for every queue to have fetched every tag);
 *  2. loops: one io_uring_submit_and_wait() sends the answers of the last
 *     round (COMMIT_AND_FETCH_REQ) and waits; each completion with res
 *     UBLK_IO_RES_OK is a request in its tag, served through the
 *     thread's buffer by the request layer (blockdev.h: the same range
 *     checks, timing and full warning as every front end's);
 *  3. ends when every tag's command has ended (UBLK_IO_RES_ABORT: the
 *     device is stopping or gone) or when the stop eventfd is written.
 * A queue whose tags all end while the daemon did not ask writes the
 * caller's eventfd, so that main() stops rather than serve a dead device.
 *
 * The buffer is faulted in before the first request, after the daemon's
 * memory is locked (memory-safety.h): a page first touched while serving
 * a swap-out would be an allocation that only a swap-out can satisfy.
 * A queue costs one 128 KiB buffer whatever its depth, where a buffer per
 * tag for the driver to copy into would cost depth times that.
 *
 * Threads and locking: a queue, its ring, descriptors and buffers belong
 * to its thread.  The threads share the window (thread-safe) and, while
 * starting, `lock`, which guards `reports` and `first_error`.
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
