/* cswap: the daemon's messages, through a ring and a drain thread (see
 * daemon-log.h).
 *
 * State: the ring and the eventfd are made by daemon_log_start before any
 * thread serves, and freed by daemon_log_stop after they all stopped;
 * `draining` says which of the two ways daemon_log takes.  The taker's
 * side of the ring and drops_said belong to the drain thread while it
 * runs, to daemon_log_stop once it has been joined.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon-log.h"
#include "message-ring.h"

/* The drain formats one line of its own and calls write(2). */
#define DRAIN_STACK_BYTES (64 * 1024)

static struct message_ring ring;
static atomic_bool draining, stopping;
static int wake_fd = -1;
static pthread_t drain;
static const char *drop_program;
static uint64_t drops_said;

/* Writes LENGTH bytes of TEXT to fd 2, whatever it takes: this is the
 * thread that may wait.  A descriptor left non-blocking (cswap-ublk's
 * standby holds its messages in such a pipe) is waited on with poll.
 */
static void
write_stderr (const char *text, size_t length)
{
  while (length > 0) {
    ssize_t n = write (STDERR_FILENO, text, length);

    if (n > 0) {
      text += n;
      length -= n;
    }
    else if (n == -1 && errno == EAGAIN) {
      struct pollfd out = { .fd = STDERR_FILENO, .events = POLLOUT };
      poll (&out, 1, -1);
    }
    else if (n == 0 || errno != EINTR)
      return;                   /* nowhere left to say it */
  }
}

/* Writes out every line the ring holds, then the count of those it
 * dropped since the last time.
 */
static void
write_ring (void)
{
  char text[MESSAGE_RING_TEXT_BYTES];
  size_t length;

  while ((length = message_ring_take (&ring, text)) > 0)
    write_stderr (text, length);
  uint64_t dropped = message_ring_dropped (&ring);
  if (dropped > drops_said) {
    char line[128];
    int n = snprintf (line, sizeof line, "%s: %" PRIu64 " message%s "
                      "dropped (the message ring was full)\n", drop_program,
                      dropped - drops_said,
                      dropped - drops_said == 1 ? "" : "s");
    write_stderr (line, n);
    drops_said = dropped;
  }
}

static void *
drain_main (void *arg)
{
  (void) arg;
  for (;;) {
    /* Read before the ring: a line pushed before the stop is written. */
    bool last = atomic_load (&stopping);
    eventfd_t pokes;

    write_ring ();
    if (last)
      return NULL;
    struct pollfd wake = { .fd = wake_fd, .events = POLLIN };
    poll (&wake, 1, -1);
    eventfd_read (wake_fd, &pokes);
  }
}

void
daemon_log_v (const char *fmt, va_list ap)
{
  if (!atomic_load_explicit (&draining, memory_order_acquire)) {
    vfprintf (stderr, fmt, ap);
    return;
  }

  int saved_errno = errno;
  char line[MESSAGE_RING_TEXT_BYTES + 1];      /* and vsnprintf's NUL */
  int n = vsnprintf (line, sizeof line, fmt, ap);

  if (n > 0) {
    size_t length = (size_t) n;
    if (length >= sizeof line) {
      length = sizeof line - 1;
      line[length - 1] = '\n';  /* cut, still a line */
    }
    if (message_ring_push (&ring, line, length))
      eventfd_write (wake_fd, 1);       /* non-blocking: never waits */
  }
  errno = saved_errno;
}

void
daemon_log (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  daemon_log_v (fmt, ap);
  va_end (ap);
}

int
daemon_log_start (const char *program)
{
  pthread_attr_t attr;
  int err;

  drop_program = program;
  drops_said = 0;
  message_ring_init (&ring);    /* touches every page of it */
  /* Kept in memory whatever lock-memory says: a pusher must not fault. */
  (void) mlock (&ring, sizeof ring);
  wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd == -1)
    return errno;
  atomic_store (&stopping, false);
  pthread_attr_init (&attr);
  pthread_attr_setstacksize (&attr, DRAIN_STACK_BYTES);
  err = pthread_create (&drain, &attr, drain_main, NULL);
  pthread_attr_destroy (&attr);
  if (err) {
    close (wake_fd);
    wake_fd = -1;
    return err;
  }
  atomic_store_explicit (&draining, true, memory_order_release);
  return 0;
}

void
daemon_log_stop (void)
{
  if (wake_fd == -1)
    return;
  atomic_store_explicit (&draining, false, memory_order_release);
  atomic_store (&stopping, true);
  eventfd_write (wake_fd, 1);
  pthread_join (drain, NULL);
  write_ring ();                /* a line pushed as the drain ended */
  close (wake_fd);
  wake_fd = -1;
}
