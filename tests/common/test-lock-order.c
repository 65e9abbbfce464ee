/* cswap: common/lock-order — the debug builds' check of the lock order.
 * In other builds the checks compile to nothing: locks taken in order
 * still work, and the tests of the aborts are skipped.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lock-order.h"
#include "tap.h"

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t inner = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t other_slot = PTHREAD_MUTEX_INITIALIZER;

/* Whether BODY, run in a child, ends in abort(). */
static bool
aborts (void (*body) (void))
{
  pid_t pid = fork ();
  int status;

  if (pid == 0) {
    /* The child's abort report is expected: keep it off the log. */
    if (freopen ("/dev/null", "w", stderr) == NULL)
      _exit (2);
    body ();
    _exit (0);
  }
  if (pid == -1 || waitpid (pid, &status, 0) != pid)
    tap_bail_out ("fork or waitpid failed");
  return WIFSIGNALED (status) && WTERMSIG (status) == SIGABRT;
}

static void
in_order (void)
{
  lock_acquire (&outer, LOCK_RANK_WRITEBACK);
  lock_acquire (&inner, LOCK_RANK_SLOT);
  lock_assert_held (&outer);
  lock_assert_held (&inner);
  lock_release (&outer);        /* out of nesting order: allowed */
  lock_release (&inner);
}

static void
out_of_order (void)
{
  lock_acquire (&inner, LOCK_RANK_SLOT);
  lock_acquire (&outer, LOCK_RANK_WRITEBACK);
}

static void
two_slot_locks (void)
{
  lock_acquire (&inner, LOCK_RANK_SLOT);
  lock_acquire (&other_slot, LOCK_RANK_SLOT);
}

static void
not_held (void)
{
  lock_acquire (&outer, LOCK_RANK_WRITEBACK);
  lock_assert_held (&inner);
}

static void
released_again (void)
{
  lock_acquire (&outer, LOCK_RANK_WRITEBACK);
  lock_release (&outer);
  lock_check_release (&outer);
}

int
main (void)
{
  static const struct { void (*body) (void); const char *name; } bad[] = {
    { out_of_order, "a lock taken under a later one aborts" },
    { two_slot_locks, "two locks of one rank abort" },
    { not_held, "asserting a lock not held aborts" },
    { released_again, "releasing a lock not held aborts" },
  };
#ifdef CSWAP_LOCK_CHECKS
  bool checked = true;
#else
  bool checked = false;
#endif

  ok (!aborts (in_order), "locks taken in order pass");
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (checked)
      ok (aborts (bad[i].body), "%s", bad[i].name);
    else
      ok (true, "%s # SKIP checked only in debug builds", bad[i].name);
  }
  return tap_done ();
}
