/* cswap: the FUSE-over-io_uring queues (fuse-uring-abi.h explains the
 * kernel side).
 *
 * One queue per possible CPU, as the kernel has; each with its own
 * io_uring, its own thread and a few ring entries, so that several
 * requests of a queue are in flight while its thread works on one.  A
 * reply and the wait for the next request are one io_uring_enter.
 *
 * Faults can be injected in the test build only (serve/uring-fault.h).
 */
#ifndef CSWAP_FUSE_URING_H
#define CSWAP_FUSE_URING_H

#include <stdbool.h>

#include "device.h"

/* Whether the fuse module takes io_uring registrations
 * (/sys/module/fuse/parameters/enable_uring is Y); if not, *WHY (when
 * WHY is not NULL) says why in words for the user.
 */
extern bool fuse_uring_enabled (const char **why);

struct uring_queues;

/* Makes the rings and the entries' buffers for the /dev/fuse fd FD; no
 * thread starts.  Returns NULL with *WHY set.
 */
extern struct uring_queues *uring_queues_create (int fd,
                                                 const struct device *device,
                                                 const char **why);

extern unsigned uring_queues_count (const struct uring_queues *queues);

/* Call once FUSE_INIT has been answered with FUSE_OVER_IO_URING: starts a
 * thread per queue, which registers its entries and serves.  Returns 0
 * once every queue's registration was taken, or a negative errno (the
 * first refusal) with every thread stopped again.  When the connection
 * ends, or a queue fails, the threads write 1 to the eventfd ENDED_FD.
 */
extern int uring_queues_start (struct uring_queues *queues, int ended_fd);

/* Whether a queue gave up (an entry or its io_uring_enter kept failing)
 * and wrote ENDED_FD for it: the daemon must stop, with an error.
 */
extern bool uring_queues_failed (struct uring_queues *queues);

/* Stops and joins the threads (each finishes the requests in hand), then
 * frees the rings and buffers.  NULL is fine.
 */
extern void uring_queues_destroy (struct uring_queues *queues);

#endif /* CSWAP_FUSE_URING_H */
