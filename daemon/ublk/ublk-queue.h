/* cswap: the ublk devices' queues, one thread per CPU serving every
 * device, over the store.
 *
 * Each CPU has one thread, bound to it, with its own io_uring, serving
 * queue QID of every device (blk-mq maps each CPU to a queue, so a
 * swap-in is served on the CPU that faulted, as with the FUSE rings).
 * The driver asks only that the commands of one queue come from one
 * task; one task may serve queues of several devices.  So the ladder's
 * windows (--windows) cost a thread and a buffer per CPU, not per CPU
 * and per window: with three windows on two CPUs, two threads where
 * there were six, and 1.1 MiB less of the daemon's locked memory: on a
 * 160 MiB machine its own memory is a third of zram's whole peak
 * (doc/design.md, "Less of the daemon's own memory").
 *
 * A device's queue has DEPTH tags and no buffer of its own: the thread
 * serves one request at a time through its one buffer of the largest
 * request, moving the data with pread() and pwrite() on /dev/ublkcN
 * (UBLK_F_USER_COPY).  The threads, their rings, the start-up and the
 * stop are the io_uring queue engine's (io-queues.h); what is ublk's is
 * here:
 *  1. arm: map each device's descriptors for the queue from its
 *     /dev/ublkcN and queue a FETCH_REQ for each of its tags (the
 *     driver's START_DEV waits for every queue to have fetched every tag,
 *     so ublk_queues_start returns only once every thread has);
 *  2. complete: a completion with res UBLK_IO_RES_OK is a request in its
 *     tag, served through the thread's buffer by the request layer
 *     (blockdev.h: the same range checks, timing and full warning as
 *     every front end's) and answered with COMMIT_AND_FETCH_REQ;
 *     UBLK_IO_RES_ABORT is the tag's end (the device is stopping or
 *     gone).  A command's user_data is its device's index and its tag.
 * When one device's tags on a queue have all ended while the daemon did
 * not ask, the caller's eventfd is written, so that main() stops rather
 * than serve a dead device; the engine writes it too when a queue fails.
 *
 * The buffer is faulted in before the first request, after the daemon's
 * memory is locked (memory-safety.h): a page first touched while serving
 * a swap-out would be an allocation that only a swap-out can satisfy.
 * A thread costs one 128 KiB buffer whatever the depth and the number of
 * devices, where a buffer per tag for the driver to copy into would cost
 * depth times that.
 *
 * Threads and locking: a queue's descriptors, its count of ended tags
 * and its buffer belong to its thread.  The threads share the windows
 * (thread-safe), read-only; the engine's own sharing is io-queues.h's.
 * No lock here.
 */
#ifndef CSWAP_UBLK_QUEUE_H
#define CSWAP_UBLK_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "blockdev.h"

/* The most devices one set of queues serves. */
#define UBLK_QUEUES_MAX_DEVICES 16

/* One device the queues serve: its char device, its geometry as the
 * driver has it (GET_DEV_INFO), and the window it serves (its byte 0 is
 * the device's sector 0; the kernel keeps requests within its size).
 */
struct ublk_queue_device {
  int char_fd;
  unsigned nr_queues;
  unsigned depth;
  uint32_t max_io_bytes;
  const struct blockdev *window;
};

struct ublk_queues;

/* Maps and starts a queue thread per CPU queue, serving the COUNT
 * DEVICES (up to UBLK_QUEUES_MAX_DEVICES; thread QID serves queue QID of
 * every device that has it).  Returns once every thread has fetched its
 * tags, or NULL with errno set and *WHY naming the step that failed.
 * ENDED_FD is written when a device's queues end of themselves.
 */
extern struct ublk_queues *ublk_queues_start (const struct ublk_queue_device *devices,
                                              unsigned count, int ended_fd,
                                              bool ioctl_encode,
                                              const char **why);

/* Stops the threads (after every device's STOP_DEV, whose aborts end
 * their tags anyway) and frees everything.  NULL is fine.
 */
extern void ublk_queues_stop (struct ublk_queues *queues);

#endif /* CSWAP_UBLK_QUEUE_H */
