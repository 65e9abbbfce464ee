/* cswap: memory locking, I/O-flusher threads, OOM score (see the header). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "memory-safety.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57    /* Linux 5.6; older headers lack it */
#endif

static atomic_bool io_flusher_warned;
static __thread bool io_flusher_tried;

static void
warn (const char *what, int err)
{
  /* strerrordesc_np: no locale lookup, so no libc lock that a fork could
   * catch held (nbdkit forks its --run child after .after_fork).
   */
  fprintf (stderr, "cswap: warning: %s: %s\n", what, strerrordesc_np (err));
}

static int
set_oom_score_adj (int value)
{
  char text[16];
  int fd = open ("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  int len = snprintf (text, sizeof text, "%d", value);
  int r = 0;

  if (fd == -1 || write (fd, text, len) != len)
    r = -1;
  if (fd != -1) {
    int saved_errno = errno;
    close (fd);
    errno = saved_errno;
  }
  return r;
}

int
memory_safety_setup (void)
{
  if (set_oom_score_adj (-1000) == -1)
    warn ("oom_score_adj -1000 (needs CAP_SYS_RESOURCE; the OOM killer "
          "may pick this daemon)", errno);
  if (mlockall (MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == -1) {
    int saved_errno = errno;
    warn ("mlockall (raise LimitMEMLOCK/ulimit -l, or run as root)",
          saved_errno);
    errno = saved_errno;
    return -1;
  }
  return 0;
}

void
memory_safety_mark_io_thread (void)
{
  if (io_flusher_tried)
    return;
  io_flusher_tried = true;
  if (prctl (PR_SET_IO_FLUSHER, 1, 0, 0, 0) == -1
      && !atomic_exchange (&io_flusher_warned, true))
    warn ("prctl PR_SET_IO_FLUSHER (needs CAP_SYS_RESOURCE; under memory "
          "pressure an I/O thread may wait on reclaim)", errno);
}
