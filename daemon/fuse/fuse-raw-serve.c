/* cswap: choosing and running a raw transport (fuse-raw-serve.h).
 *
 *   open: read INIT -> kernel offers io_uring? -> make the rings -> answer
 *         INIT with FUSE_OVER_IO_URING if the rings are there
 *   run:  start the queue threads (they register) -> all taken: io_uring,
 *         with one /dev/fuse thread for FORGET/INTERRUPT and the end;
 *         refused: the kernel has gone back to /dev/fuse for this
 *         connection, so serve everything with FALLBACK_THREADS read()/
 *         write() threads (or fail, when io_uring was required)
 *   then: wait until the connection ends or an io_uring queue fails (a
 *         thread writes the ended eventfd; a failed queue makes run
 *         return -1) or a stop is asked for; stop the threads.
 * One line on stderr names the transport in use.
 *
 * Threads and locking: this file runs on main()'s thread only; the
 * threads it starts are fuse-uring.c's and fuse-dev-loop.c's, which tell
 * it that the connection ended through `ended_fd` (an eventfd), and
 * nothing else is shared.  Stop order: /dev/fuse threads, then the rings
 * (closing a ring cancels what the kernel still holds of it).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "daemon-log.h"
#include "fuse-dev-loop.h"
#include "fuse-raw-init.h"
#include "fuse-raw-serve.h"
#include "fuse-uring.h"

#define PROGRAM_NAME "cswap-fuse"
#define STOP_POLL_MS 100

struct raw_server {
  int fd;
  const struct device *device;
  bool require_uring;
  unsigned fallback_threads;
  struct uring_queues *queues;  /* NULL: no io_uring */
  char no_uring_reason[192];
  int ended_fd;
  struct dev_loop *loop;
};

struct raw_server *
raw_server_open (int fd, const struct device *device, bool require_uring,
                 unsigned fallback_threads)
{
  struct raw_server *server = calloc (1, sizeof *server);
  struct raw_init init;
  const char *why = NULL;

  if (server == NULL) {
    fprintf (stderr, "%s: out of memory\n", PROGRAM_NAME);
    return NULL;
  }
  *server = (struct raw_server) {
    .fd = fd,
    .device = device,
    .require_uring = require_uring,
    .fallback_threads = fallback_threads,
    .ended_fd = eventfd (0, EFD_CLOEXEC),
  };
  if (server->ended_fd == -1) {
    fprintf (stderr, "%s: eventfd: %m\n", PROGRAM_NAME);
    goto fail;
  }
  if (raw_init_read (fd, &init, &why) == -1) {
    fprintf (stderr, "%s: %s\n", PROGRAM_NAME, why);
    goto fail;
  }
  if (!raw_init_offers_uring (&init))
    why = "the kernel's FUSE_INIT does not offer FUSE over io_uring";
  else
    server->queues = uring_queues_create (fd, device, &why);
  if (server->queues == NULL) {
    if (require_uring) {
      fprintf (stderr, "%s: transport=uring: %s\n", PROGRAM_NAME, why);
      goto fail;
    }
    snprintf (server->no_uring_reason, sizeof server->no_uring_reason,
              "%s", why);
  }
  if (raw_init_reply (fd, &init, server->queues != NULL, &why) == -1) {
    fprintf (stderr, "%s: %s\n", PROGRAM_NAME, why);
    goto fail;
  }
  return server;

 fail:
  raw_server_close (server);
  return NULL;
}

/* Waits until the connection ends or STOP_REQUESTED says so. */
static void
wait_for_end (struct raw_server *server, bool (*stop_requested) (void *arg),
              void *arg)
{
  struct pollfd ended = { .fd = server->ended_fd, .events = POLLIN };

  while (!stop_requested (arg))
    if (poll (&ended, 1, STOP_POLL_MS) == 1)
      return;
}

int
raw_server_run (struct raw_server *server,
                bool (*stop_requested) (void *arg), void *arg)
{
  unsigned dev_threads = server->fallback_threads;

  if (server->queues) {
    int r = uring_queues_start (server->queues, server->ended_fd);

    if (r == 0)
      dev_threads = 1;
    else {
      snprintf (server->no_uring_reason, sizeof server->no_uring_reason,
                "the kernel refused the ring registration: %s",
                strerror (-r));
      uring_queues_destroy (server->queues);
      server->queues = NULL;
      if (server->require_uring) {
        daemon_log ("%s: transport=uring: %s\n", PROGRAM_NAME,
                    server->no_uring_reason);
        return -1;
      }
    }
  }
  server->loop = dev_loop_start (server->fd, server->device, dev_threads,
                                 server->ended_fd);
  if (server->loop == NULL) {
    fprintf (stderr, "%s: starting the /dev/fuse threads: %m\n",
             PROGRAM_NAME);
    return -1;
  }
  if (server->queues)
    daemon_log ("%s: transport: io_uring, %u queues\n", PROGRAM_NAME,
                uring_queues_count (server->queues));
  else
    daemon_log ("%s: transport: read/write on /dev/fuse, %u threads "
                "(no io_uring: %s)\n", PROGRAM_NAME, dev_threads,
                server->no_uring_reason);
  wait_for_end (server, stop_requested, arg);
  if (server->queues && uring_queues_failed (server->queues)) {
    daemon_log ("%s: FUSE over io_uring failed (see above): exiting\n",
                PROGRAM_NAME);
    return -1;
  }
  return 0;
}

void
raw_server_close (struct raw_server *server)
{
  if (server == NULL)
    return;
  dev_loop_stop (server->loop);
  uring_queues_destroy (server->queues);
  if (server->ended_fd != -1)
    close (server->ended_fd);
  free (server);
}
