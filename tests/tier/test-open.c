/* cswap: tier/ — what tier_open takes as a backing file (issue 27, item 8).
 *
 *  - A file that already exists must be the daemon's user's and writable
 *    by no one else: another user who can write it can change the pages
 *    the daemon reads back (and, without backing-encrypt, read them).
 *  - A block device is opened O_EXCL, so that a second daemon cannot
 *    share it through another device node (flock locks the node, not the
 *    device): a loop device and a second node of it made with mknod.
 *
 *  - A file another process holds (flock) is waited for, a few seconds:
 *    a killed daemon's lock outlives it until its io_uring ring is torn
 *    down, and its successor must not fail for that; held longer, it is
 *    refused.
 *
 * Files go under $CSWAP_TIER_DIR or /var/tmp (O_DIRECT).  The other
 * user's file and the loop device need root; they skip otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "tier.h"

#define BACKING_BYTES (4u << 20)
#define OTHER_UID 65534         /* nobody */

static char path[256];

/* Makes PATH a BACKING_BYTES file of UID's with MODE. */
static void
make_file (mode_t mode, uid_t uid)
{
  int fd;

  unlink (path);
  fd = open (path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  if (fd == -1 || ftruncate (fd, BACKING_BYTES) == -1
      || fchown (fd, uid, (gid_t) -1) == -1 || fchmod (fd, mode) == -1)
    tap_bail_out ("%s: %m", path);
  close (fd);
}

/* tier_open of NODE must succeed (WANT NULL) or fail with a reason that
 * contains WANT.
 */
static void
expect_open (const char *node, const char *want, const char *name)
{
  struct tier_config config = { .path = node, .thin = true };
  const char *why = NULL;
  struct tier *tier = tier_open (&config, &why);

  if (want == NULL)
    ok (tier != NULL, "%s is taken (%s)", name, tier ? "opened" : why);
  else
    ok (tier == NULL && strstr (why, want), "%s is refused (%s)", name,
        tier ? "opened" : why);
  tier_close (tier);
}

static void
test_existing_files (void)
{
  make_file (0600, geteuid ());
  expect_open (path, NULL, "an existing 0600 file of ours");
  make_file (0640, geteuid ());
  expect_open (path, NULL, "an existing 0640 file of ours");
  make_file (0666, geteuid ());
  expect_open (path, "other users can write", "a 0666 file");
  make_file (0620, geteuid ());
  expect_open (path, "other users can write", "a 0620 file");
  if (geteuid () != 0) {
    ok (true, "# SKIP a file of another user's: not root");
    return;
  }
  make_file (0600, OTHER_UID);
  expect_open (path, "owned by uid 65534", "a file another user owns");
  unlink (path);
}

static void
test_block_device (void)
{
  char command[512], loop[64] = "", alias[300];
  struct stat st;
  FILE *p;

  if (geteuid () != 0) {
    ok (true, "# SKIP a block device through two nodes: not root");
    return;
  }
  make_file (0600, 0);
  snprintf (command, sizeof command, "losetup --find --show '%s' 2>/dev/null",
            path);
  p = popen (command, "r");
  if (p == NULL || fgets (loop, sizeof loop, p) == NULL) {
    if (p)
      pclose (p);
    ok (true, "# SKIP a block device through two nodes: no loop device");
    unlink (path);
    return;
  }
  pclose (p);
  loop[strcspn (loop, "\n")] = '\0';
  snprintf (alias, sizeof alias, "%s.node", path);
  if (stat (loop, &st) == -1
      || mknod (alias, S_IFBLK | 0600, st.st_rdev) == -1)
    tap_bail_out ("mknod %s: %m", alias);

  struct tier_config config = { .path = loop };
  const char *why = NULL;
  struct tier *first = tier_open (&config, &why);

  ok (first != NULL, "%s is taken (%s)", loop, first ? "opened" : why);
  expect_open (alias, "in use", "the same device through another node");
  tier_close (first);
  expect_open (alias, NULL, "that node, once the first is closed,");
  unlink (alias);
  snprintf (command, sizeof command, "losetup -d '%s'", loop);
  if (system (command) != 0)
    diag ("could not detach %s", loop);
  unlink (path);
}

/* A child holds PATH's lock for HOLD_MS, then exits; returns its pid
 * once the lock is held.
 */
static pid_t
hold_lock (unsigned hold_ms)
{
  int ready[2];
  char c;
  pid_t pid;

  if (pipe (ready))
    tap_bail_out ("pipe: %m");
  pid = fork ();
  if (pid == 0) {
    int fd = open (path, O_RDWR);
    if (fd == -1 || flock (fd, LOCK_EX) == -1)
      _exit (1);
    if (write (ready[1], "x", 1) != 1)
      _exit (1);
    usleep (hold_ms * 1000);
    _exit (0);
  }
  close (ready[1]);
  if (read (ready[0], &c, 1) != 1)
    tap_bail_out ("the lock holder did not start");
  close (ready[0]);
  return pid;
}

static double
seconds_now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
test_lock_held (void)
{
  double start;
  pid_t holder;

  make_file (0600, geteuid ());
  holder = hold_lock (500);
  start = seconds_now ();
  expect_open (path, NULL, "a file whose lock is let go of within a second");
  diag ("waited %.2f s", seconds_now () - start);
  waitpid (holder, NULL, 0);
  holder = hold_lock (8000);
  start = seconds_now ();
  expect_open (path, "in use by another process",
               "a file whose lock is held on");
  ok (seconds_now () - start >= 4.5, "after waiting for it (%.2f s)",
      seconds_now () - start);
  kill (holder, SIGKILL);
  waitpid (holder, NULL, 0);
  unlink (path);
}

int
main (void)
{
  const char *dir = getenv ("CSWAP_TIER_DIR");

  snprintf (path, sizeof path, "%s/cswap-test-open.%d",
            dir ? dir : "/var/tmp", (int) getpid ());
  test_existing_files ();
  test_lock_held ();
  test_block_device ();
  return tap_done ();
}
