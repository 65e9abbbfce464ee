/* cswap: the read()/writev() loop on /dev/fuse (fuse-dev-loop.h).
 *
 * Each thread reads a request (the fd is non-blocking), dispatches it
 * (fuse-raw-dispatch.c), writes the reply and reads again; only when
 * nothing is queued does it wait, in epoll on the /dev/fuse fd and the
 * loop's stop eventfd.  A read buffer holds the largest write (max_write
 * plus headers); replies have a payload buffer of their own.
 *
 * Why this shape: every thread once poll()ed the fd, and a request woke
 * all of them; one read it and the rest found EAGAIN and slept again.  In
 * a small VM under whole-machine pressure (tests/vm, 4 threads) those
 * wake-ups and the poll calls were a quarter of the daemon's CPU time.
 * Each thread's epoll instance holds the fd with EPOLLEXCLUSIVE, so a new
 * request wakes one waiting thread, as a blocking read() would (FUSE's
 * readers wait exclusively); and a thread that has just served a request
 * takes the next queued one without a wait at all.  A blocking read()
 * would be one system call less still, but a stop could not reach it.
 * The price: a request's wake-up may mark the epoll instance of a thread
 * that is busy serving, and then waits until that thread reads again
 * (poll() looked at the fd itself on entry).  It is delayed, never lost.
 *
 * Threads and locking: the threads share only the fd, the device (itself
 * thread-safe), two eventfds and the stopping flag; no lock.  The stop
 * eventfd is written once by dev_loop_stop() and never read, so it stays
 * readable and wakes every thread (it is not exclusive); the flag stops
 * a thread that never waits because requests keep coming.  ENODEV (the
 * connection ended: unmounted or aborted) is passed on through the
 * caller's eventfd and ends the thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "daemon-log.h"
#include "fuse-dev-loop.h"
#include "fuse-raw.h"
#include "memory-safety.h"

#define READ_BUFFER_BYTES (BLOCKDEV_MAX_IO_BYTES + 4096)

struct dev_thread {
  pthread_t thread;
  struct dev_loop *loop;
  int waiter;                   /* its epoll instance (make_waiter) */
  bool started;
};

struct dev_loop {
  int fd;
  const struct device *device;
  int stop_fd;                  /* eventfd: readable once stopping */
  atomic_bool stopping;         /* set before stop_fd is written */
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
    daemon_log ("cswap-fuse: writing a reply to /dev/fuse: %m\n");
}

/* An epoll instance for one thread: the /dev/fuse fd, exclusive (one
 * waiter woken per request), and the stop eventfd, for every waiter.
 * Returns it, or -1 with errno set.
 */
static int
make_waiter (const struct dev_loop *loop)
{
  int ep = epoll_create1 (EPOLL_CLOEXEC);
  struct epoll_event request = { .events = EPOLLIN | EPOLLEXCLUSIVE };
  struct epoll_event stop = { .events = EPOLLIN };

  if (ep == -1)
    return -1;
  if (epoll_ctl (ep, EPOLL_CTL_ADD, loop->fd, &request) == -1
      || epoll_ctl (ep, EPOLL_CTL_ADD, loop->stop_fd, &stop) == -1) {
    int err = errno;

    close (ep);
    errno = err;
    return -1;
  }
  return ep;
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
    daemon_log ("cswap-fuse: no memory for a /dev/fuse thread\n");
    goto out;
  }
  /* Faulted in now: under mlockall's MCL_ONFAULT a buffer's pages are
   * otherwise first touched by a request, when memory may be shortest.
   */
  memset (buf, 0, READ_BUFFER_BYTES);
  memset (reply_payload, 0, RAW_PAYLOAD_BYTES);
  while (!atomic_load_explicit (&loop->stopping, memory_order_relaxed)) {
    ssize_t n = read (loop->fd, buf, READ_BUFFER_BYTES);

    if (n >= 0) {
      serve_request (loop, buf, n, reply_payload);
      continue;
    }
    if (errno == EAGAIN) {
      struct epoll_event ready;

      /* Nothing queued: wait for a request or the stop. */
      if (epoll_wait (self->waiter, &ready, 1, -1) == -1 && errno != EINTR) {
        daemon_log ("cswap-fuse: epoll_wait on /dev/fuse: %m\n");
        break;
      }
      continue;
    }
    if (errno == EINTR || errno == ENOENT)
      continue;                 /* interrupted, or the request aborted */
    if (errno != ENODEV)
      daemon_log ("cswap-fuse: reading /dev/fuse: %m\n");
    eventfd_write (loop->ended_fd, 1);
    break;
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
    t->waiter = make_waiter (loop);
    err = t->waiter == -1 ? errno : pthread_create (&t->thread, NULL,
                                                    dev_thread_main, t);
    if (err) {
      if (t->waiter != -1)
        close (t->waiter);
      if (i == 0)
        goto fail;
      daemon_log ("cswap-fuse: starting /dev/fuse thread %u: %s\n", i,
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
  atomic_store_explicit (&loop->stopping, true, memory_order_relaxed);
  eventfd_write (loop->stop_fd, 1);
  for (unsigned i = 0; i < loop->thread_count; i++)
    if (loop->threads[i].started) {
      pthread_join (loop->threads[i].thread, NULL);
      close (loop->threads[i].waiter);
    }
  close (loop->stop_fd);
  free (loop);
}
