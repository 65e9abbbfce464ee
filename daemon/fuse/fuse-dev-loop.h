/* cswap: serving raw FUSE requests with read() and writev() on /dev/fuse.
 *
 * Beside the io_uring queues, one thread reads /dev/fuse for what the
 * kernel never puts on a ring (FORGET, INTERRUPT) and for the end of the
 * connection (ENODEV at unmount).  When the ring cannot be used after
 * INIT was already answered (libfuse cannot take the session back), a few
 * threads serve every request this way instead.
 */
#ifndef CSWAP_FUSE_DEV_LOOP_H
#define CSWAP_FUSE_DEV_LOOP_H

#include "device.h"

struct dev_loop;

/* Starts THREADS threads reading FD (made non-blocking).  When the
 * connection ends they write 1 to the eventfd ENDED_FD.  Returns NULL
 * with errno set if no thread could start.
 */
extern struct dev_loop *dev_loop_start (int fd, const struct device *device,
                                        unsigned threads, int ended_fd);

/* Stops and joins the threads (each finishes the request in hand). */
extern void dev_loop_stop (struct dev_loop *loop);

#endif /* CSWAP_FUSE_DEV_LOOP_H */
