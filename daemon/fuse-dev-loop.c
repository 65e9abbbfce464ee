/* cswap: the read()/writev() loop on /dev/fuse (fuse-dev-loop.h).
 *
 * Each thread polls the /dev/fuse fd and the loop's stop eventfd, then
 * reads one request (the fd is non-blocking, so a thread that loses the
 * race for a request goes back to poll instead of blocking where a stop
 * could not reach it), dispatches it (fuse-raw-dispatch.c) and writes the
 * reply.  A read buffer holds the largest write (max_write plus headers);
 * replies have a payload buffer of their own.
 *
 * Threads and locking: the threads share only the fd, the device (itself
 * thread-safe) and two eventfds; no lock.  The stop eventfd is written
 * once by dev_loop_stop() and never read, so it stays readable and every
 * thread sees it.  ENODEV (the connection ended: unmounted or aborted)
 * is passed on through the caller's eventfd and ends the thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuse-dev-loop.h"
#include "fuse-raw.h"
#include "memory-safety.h"

#define READ_BUFFER_BYTES (DEVICE_MAX_IO_BYTES + 4096)

struct dev_thread {
  pthread_t thread;
  struct dev_loop *loop;
  bool started;
};

struct dev_loop {
  int fd;
  const struct device *device;
  int stop_fd;                  /* eventfd: readable once stopping */
  int ended_fd;                 /* the caller's: written at ENODEV */
  unsigned thread_count;
  struct dev_thread threads[];
};

/* Splits the request in BUF (N bytes) as the io_uring interface would,
 * dispatches it and writes the reply.
 */
static void
serve_request (struct dev_loop *loop, const char *buf, size_t n,
               void *reply_payload)
{
  const struct fuse_in_header *in = (const void *) buf;
  size_t op_args_size = raw_op_args_size (in->opcode);
  struct raw_request request = {
    .in = in,
    .op_args = buf + sizeof *in,
    .payload = buf + sizeof *in + op_args_size,
  };
  struct raw_reply reply = {
    .payload = reply_payload,
    .payload_capacity = RAW_PAYLOAD_BYTES,
  };

  if (n < sizeof *in + op_args_size) {
    reply.out = (struct fuse_out_header) { .error = -EIO, .unique = in->unique };
  }
  else {
    request.payload_size = n - sizeof *in - op_args_size;
    raw_dispatch (loop->device, &request, &reply);
    if (reply.none)
      return;
  }
  reply.out.len = sizeof reply.out + reply.payload_size;
  struct iovec iov[] = {
    { &reply.out, sizeof reply.out },
    { reply.payload, reply.payload_size },
  };
  /* ENOENT: the request was interrupted or aborted meanwhile. */
  if (writev (loop->fd, iov, reply.payload_size ? 2 : 1) == -1
      && errno != ENOENT && errno != ENODEV)
    fprintf (stderr, "cswap-fuse: writing a reply to /dev/fuse: %m\n");
}

static void *
dev_thread_main (void *arg)
{
  struct dev_thread *self = arg;
  struct dev_loop *loop = self->loop;
  char *buf = malloc (READ_BUFFER_BYTES);
  void *reply_payload = malloc (RAW_PAYLOAD_BYTES);

  memory_safety_mark_io_thread ();
  if (buf == NULL || reply_payload == NULL) {
    fprintf (stderr, "cswap-fuse: no memory for a /dev/fuse thread\n");
    goto out;
  }
  /* Faulted in now: under mlockall's MCL_ONFAULT a buffer's pages are
   * otherwise first touched by a request, when memory may be shortest.
   */
  memset (buf, 0, READ_BUFFER_BYTES);
  memset (reply_payload, 0, RAW_PAYLOAD_BYTES);
  for (;;) {
    struct pollfd fds[] = {
      { .fd = loop->fd, .events = POLLIN },
      { .fd = loop->stop_fd, .events = POLLIN },
    };

    if (poll (fds, 2, -1) == -1) {
      if (errno == EINTR)
        continue;
      fprintf (stderr, "cswap-fuse: poll on /dev/fuse: %m\n");
      break;
    }
    if (fds[1].revents)
      break;
    ssize_t n = read (loop->fd, buf, READ_BUFFER_BYTES);
    if (n == -1) {
      if (errno == EAGAIN || errno == EINTR || errno == ENOENT)
        continue;               /* taken by another thread, or aborted */
      if (errno != ENODEV)
        fprintf (stderr, "cswap-fuse: reading /dev/fuse: %m\n");
      eventfd_write (loop->ended_fd, 1);
      break;
    }
    serve_request (loop, buf, n, reply_payload);
  }
 out:
  free (buf);
  free (reply_payload);
  return NULL;
}

struct dev_loop *
dev_loop_start (int fd, const struct device *device, unsigned threads,
                int ended_fd)
{
  struct dev_loop *loop = calloc (1, sizeof *loop
                                     + threads * sizeof loop->threads[0]);
  int flags = fcntl (fd, F_GETFL);
  int err = 0;

  if (loop == NULL)
    return NULL;
  *loop = (struct dev_loop) {
    .fd = fd,
    .device = device,
    .ended_fd = ended_fd,
    .stop_fd = eventfd (0, EFD_CLOEXEC),
    .thread_count = threads,
  };
  if (loop->stop_fd == -1 || flags == -1
      || fcntl (fd, F_SETFL, flags | O_NONBLOCK) == -1) {
    err = errno;
    goto fail;
  }
  for (unsigned i = 0; i < threads; i++) {
    struct dev_thread *t = &loop->threads[i];

    t->loop = loop;
    err = pthread_create (&t->thread, NULL, dev_thread_main, t);
    if (err) {
      if (i == 0)
        goto fail;
      fprintf (stderr, "cswap-fuse: starting /dev/fuse thread %u: %s\n", i,
               strerror (err));
      break;
    }
    t->started = true;
  }
  return loop;

 fail:
  if (loop->stop_fd != -1)
    close (loop->stop_fd);
  free (loop);
  errno = err;
  return NULL;
}

void
dev_loop_stop (struct dev_loop *loop)
{
  if (loop == NULL)
    return;
  eventfd_write (loop->stop_fd, 1);
  for (unsigned i = 0; i < loop->thread_count; i++)
    if (loop->threads[i].started)
      pthread_join (loop->threads[i].thread, NULL);
  close (loop->stop_fd);
  free (loop);
}
