/* cswap: serving the mounted file without libfuse's loop — over
 * io_uring, or with read()/write() on /dev/fuse when the ring cannot be
 * had after INIT was answered.
 *
 * libfuse mounts (fuse_session_mount) and then only its fd is used.
 * Single-threaded interface: call the three functions from main().
 */
#ifndef CSWAP_FUSE_RAW_SERVE_H
#define CSWAP_FUSE_RAW_SERVE_H

#include <stdbool.h>

#include "device.h"

struct raw_server;

/* Right after mounting, before fuse_daemonize(): reads FUSE_INIT, makes
 * the io_uring queues when the kernel offers FUSE over io_uring, and
 * answers INIT.  REQUIRE_URING: fail (before answering) rather than serve
 * without io_uring.  FALLBACK_THREADS: how many threads serve with
 * read()/write() if it comes to that.  Returns NULL after printing why.
 */
extern struct raw_server *raw_server_open (int fd, const struct device *device,
                                           bool require_uring,
                                           unsigned fallback_threads);

/* After fuse_daemonize(): starts the threads, prints the transport in
 * use, and serves until the file system is unmounted or STOP_REQUESTED
 * (polled every 100 ms) returns true.  Returns 0, or -1 after printing
 * why (with REQUIRE_URING, when the kernel refused the ring).
 */
extern int raw_server_run (struct raw_server *server,
                           bool (*stop_requested) (void *arg), void *arg);

/* Stops any thread still serving and frees everything.  NULL is fine. */
extern void raw_server_close (struct raw_server *server);

#endif /* CSWAP_FUSE_RAW_SERVE_H */
