/* cswap: cswap-fuse's signal handlers (stop-signals.h).
 *
 * The handlers run on whichever thread takes the signal (the main thread,
 * in practice: the other threads block these signals or are libfuse's,
 * which block them too), and do everything there: ask swap-users.c,
 * write one line to stderr with write(2), and end the session with
 * fuse_session_exit(), as libfuse's own handler does.  No SA_RESTART, so
 * that the main thread's wait (libfuse's sem_wait or read, the raw
 * server's poll) returns and looks at the session again.
 *
 * State: the session and the file, set once before the handlers are
 * installed and only read after.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include "stop-signals.h"
#include "swap-users.h"

#define PROGRAM_NAME "cswap-fuse"

static struct fuse_session *stop_session;
static char stop_swap_file[PATH_MAX];

/* Writes the strings (up to a NULL) to stderr as one line. */
static void
say (const char *first, ...)
{
  char line[256];
  size_t length = 0;
  va_list ap;

  va_start (ap, first);
  for (const char *s = first; s; s = va_arg (ap, const char *)) {
    size_t n = strnlen (s, sizeof line - 2 - length);

    memcpy (line + length, s, n);
    length += n;
  }
  va_end (ap);
  line[length++] = '\n';
  if (write (STDERR_FILENO, line, length) < 0) {
    /* Nowhere left to say it. */
  }
}

static void
handle_stop_signal (int signal_number)
{
  const char *name = signal_number == SIGINT ? "SIGINT"
                     : signal_number == SIGTERM ? "SIGTERM" : "SIGHUP";
  char device[SWAP_USERS_DEVICE_BYTES];
  int saved_errno = errno;

  if (signal_number == SIGHUP)
    say (PROGRAM_NAME ": SIGHUP: ignored (nothing to reload: settings "
         "change through cswapctl; SIGTERM stops the daemon)", NULL);
  else if (swap_users_first (stop_swap_file, device))
    say (PROGRAM_NAME ": ", name, ": refusing to stop: ", device,
         " is swap; run cswap down", NULL);
  else
    fuse_session_exit (stop_session);
  errno = saved_errno;
}

int
stop_signals_install (struct fuse_session *session, const char *swap_file)
{
  struct sigaction action = { .sa_handler = handle_stop_signal };
  static const int handled[] = { SIGHUP, SIGINT, SIGTERM };

  if (strlen (swap_file) >= sizeof stop_swap_file) {
    fprintf (stderr, "%s: %s: %s\n", PROGRAM_NAME, swap_file,
             strerror (ENAMETOOLONG));
    return -1;
  }
  strcpy (stop_swap_file, swap_file);
  stop_session = session;
  sigemptyset (&action.sa_mask);
  for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
    sigaddset (&action.sa_mask, handled[i]);
  for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
    if (sigaction (handled[i], &action, NULL) == -1) {
      fprintf (stderr, "%s: sigaction: %m\n", PROGRAM_NAME);
      return -1;
    }
  signal (SIGPIPE, SIG_IGN);
  return 0;
}

void
stop_signals_hold (sigset_t *saved)
{
  sigset_t held;

  sigemptyset (&held);
  sigaddset (&held, SIGHUP);
  sigaddset (&held, SIGINT);
  sigaddset (&held, SIGTERM);
  pthread_sigmask (SIG_BLOCK, &held, saved);
}

void
stop_signals_release (const sigset_t *saved)
{
  pthread_sigmask (SIG_SETMASK, saved, NULL);
}

void
stop_signals_ignore (void)
{
  signal (SIGTERM, SIG_IGN);
  signal (SIGINT, SIG_IGN);
  signal (SIGHUP, SIG_IGN);
}
