/* cswap: cswap-ublk's standby (see the header). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memory-safety.h"
#include "ublk-standby.h"

#define PROGRAM_NAME "cswap-ublk"

/* While the standby takes over, its messages wait in a pipe: its stderr
 * is a file, often on a tmpfs (/run/cswap/daemon.log), whose pages may be
 * in swap on the very devices being taken over, and a write to one would
 * wait for a swap-in that only the standby can serve (measured: blocked
 * in shmem_swapin_folio, the machine stalled).  A pipe's buffer is the
 * kernel's memory.  Released once the devices serve.
 */
static int held_stderr = -1, log_pipe = -1;

/* Holds stderr's messages in a pipe; without one, they go as before. */
static void
hold_messages (void)
{
  int fds[2];

  if (pipe2 (fds, O_CLOEXEC | O_NONBLOCK) == -1)
    return;
  fflush (stderr);
  held_stderr = fcntl (2, F_DUPFD_CLOEXEC, 3);
  if (held_stderr == -1 || dup2 (fds[1], 2) == -1) {
    close (fds[0]);
    close (fds[1]);
    if (held_stderr != -1)
      close (held_stderr);
    held_stderr = -1;
    return;
  }
  close (fds[1]);
  log_pipe = fds[0];
}

void
ublk_standby_release_messages (void)
{
  char buf[4096];
  ssize_t n;

  if (held_stderr == -1)
    return;
  fflush (stderr);
  dup2 (held_stderr, 2);
  close (held_stderr);
  held_stderr = -1;
  while ((n = read (log_pipe, buf, sizeof buf)) > 0)
    if (write (2, buf, n) != n)
      break;
  close (log_pipe);
  log_pipe = -1;
}

int
ublk_standby_report (int report_fd, int count, const uint32_t ids[])
{
  ssize_t bytes = (ssize_t) count * sizeof *ids;
  int r = write (report_fd, ids, bytes) == bytes ? 0 : -1;

  if (r)
    fprintf (stderr, "%s: telling the standby the devices: %m\n",
             PROGRAM_NAME);
  close (report_fd);
  return r;
}

/* The standby made ready to serve under pressure before it is needed:
 * its memory locked and kept out of reclaim's I/O, its thread real-time
 * (memory-safety.h), as the queue threads it will start are.  It locks
 * the libraries of the server's I/O path (IO_PATH: libcrypto where the
 * backing file's records are sealed) now, not at take-over: then they
 * would be read in from disk, 4.5 MiB of libcrypto, between the server's
 * death and the devices serving, when the pages the dead server had
 * locked may have been reclaimed and every allocation waits on those
 * devices.  They are the server's pages, shared: locking them here costs
 * no memory.
 */
static void
prepare_standby (const struct io_path *io_path)
{
  memory_safety_setup (io_path);
  memory_safety_mark_io_thread ();
}

/* The server's end, STATUS, as the standby's exit status. */
static int __attribute__ ((noreturn))
end_with (int status)
{
  exit (WIFEXITED (status) ? WEXITSTATUS (status) : EXIT_FAILURE);
}

/* Waits for the server SERVER (PIDFD) to end, passing it the stop
 * signals (SIGNAL_FD) and reading its report (REPORT_FD) of COUNT IDS.
 * Returns once it was killed after reporting; exits otherwise.
 */
static void
watch (pid_t server, int pidfd, int signal_fd, int report_fd, int count,
       uint32_t ids[])
{
  size_t want = (size_t) count * sizeof *ids, got = 0;
  int status;

  for (;;) {
    struct pollfd fds[3] = {
      { .fd = pidfd, .events = POLLIN },
      { .fd = signal_fd, .events = POLLIN },
      { .fd = report_fd, .events = POLLIN },
    };
    struct signalfd_siginfo info;

    if (poll (fds, 3, -1) == -1) {
      if (errno == EINTR)
        continue;
      fprintf (stderr, "%s: standby: poll: %m\n", PROGRAM_NAME);
      break;
    }
    /* The server's end first: a stop signal that comes with it stays
     * pending, for the devices' new server (this process) to act on.
     */
    if (fds[0].revents == 0 && fds[1].revents
        && read (signal_fd, &info, sizeof info) == sizeof info) {
      kill (server, info.ssi_signo);
      /* Gone before it could act on it: kept, as one that comes later. */
      if (poll (fds, 1, 0) == 1)
        raise (info.ssi_signo);
    }
    if (fds[2].revents) {
      ssize_t n = read (report_fd, (char *) ids + got, want - got);
      if (n > 0)
        got += n;
      if (n <= 0 || got == want) {
        close (report_fd);
        report_fd = -1;
      }
    }
    if (fds[0].revents)
      break;
  }
  if (waitpid (server, &status, 0) == -1) {
    fprintf (stderr, "%s: standby: waitpid: %m\n", PROGRAM_NAME);
    exit (EXIT_FAILURE);
  }
  if (got != want || !(WIFSIGNALED (status) || (WIFEXITED (status)
      && WEXITSTATUS (status) == UBLK_EXIT_LEFT_FOR_RECOVERY)))
    end_with (status);
  hold_messages ();
  fprintf (stderr, "%s: the server (pid %d) %s%s%s: the standby (pid %d) "
           "takes its devices and its store over\n", PROGRAM_NAME,
           (int) server, WIFSIGNALED (status) ? "was killed (" : "left them "
           "for recovery", WIFSIGNALED (status) ? strsignal (WTERMSIG (status))
           : "", WIFSIGNALED (status) ? ")" : "", (int) getpid ());
}

int
ublk_standby_split (int count, uint32_t ids[], const struct io_path *io_path,
                    int *report_fd)
{
  int pipe_fds[2], pidfd, signal_fd;
  sigset_t stop_signals;
  pid_t server;

  if (pipe2 (pipe_fds, O_CLOEXEC) == -1) {
    fprintf (stderr, "%s: no standby: pipe2: %m\n", PROGRAM_NAME);
    return -1;
  }
  fflush (NULL);
  server = fork ();
  if (server == -1) {
    fprintf (stderr, "%s: no standby: fork: %m\n", PROGRAM_NAME);
    close (pipe_fds[0]);
    close (pipe_fds[1]);
    return -1;
  }
  if (server == 0) {
    close (pipe_fds[0]);
    *report_fd = pipe_fds[1];
    return 0;
  }
  close (pipe_fds[1]);
  sigemptyset (&stop_signals);
  sigaddset (&stop_signals, SIGTERM);
  sigaddset (&stop_signals, SIGINT);
  sigaddset (&stop_signals, SIGHUP);
  sigprocmask (SIG_BLOCK, &stop_signals, NULL);
  signal_fd = signalfd (-1, &stop_signals, SFD_CLOEXEC);
  pidfd = (int) syscall (SYS_pidfd_open, server, 0);
  if (signal_fd == -1 || pidfd == -1) {
    int status;

    /* Cannot watch it: no standby, the server serves alone. */
    fprintf (stderr, "%s: no standby: signalfd or pidfd_open: %m\n",
             PROGRAM_NAME);
    close (pipe_fds[0]);
    while (waitpid (server, &status, 0) == -1 && errno == EINTR)
      ;
    end_with (status);
  }
  prepare_standby (io_path);
  fprintf (stderr, "%s: standby (pid %d) for the server (pid %d)\n",
           PROGRAM_NAME, (int) getpid (), (int) server);
  watch (server, pidfd, signal_fd, pipe_fds[0], count, ids);
  close (pidfd);
  close (signal_fd);
  /* The stop signals stay blocked (ublk-standby.h): the caller's own
   * signalfd reads, once the devices serve, any that came since.
   */
  return 1;
}
