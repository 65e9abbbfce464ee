/* cswap: control/server.c — where the socket may go, and a server out of
 * file descriptors (issue 27, items 4 and 12).
 *
 *  - The directory the socket goes into must be a directory (not a
 *    symlink), root's or the daemon's, and writable by no other user
 *    unless it is sticky: else another user could swap the socket file
 *    for a symlink between bind() and the chmod/chown that follow.
 *  - When the socket file is swapped anyway (here by a bind() wrapper,
 *    linked with --wrap=bind, standing in for that user), the mode and
 *    owner of the symlink's target do not change.
 *  - The ctl-uid user (issue 53, item 1): a peer that is not root has
 *    the read-only commands answered and the state-changing ones
 *    refused, and root has both.  As root the client runs as nobody with
 *    ctl-uid=nobody; as anyone else, as itself with ctl-uid=itself.
 *  - The ctl-uid user cannot crowd root out (issue 62, item 8): as
 *    nobody, a client opens every connection the server takes and
 *    holds them; root's commands are still answered, on several
 *    connections at once.
 *  - With RLIMIT_NOFILE reached, a waiting connection makes accept4 fail
 *    with EMFILE: the server thread must not spin on it (the process's
 *    CPU time over a second stays small), must go on serving the clients
 *    it has, and must take the waiting one once descriptors are free.
 *
 * Root only for the ownership cases (chown to another user); the rest
 * runs as anyone.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "store.h"
#include "tap.h"

#define OTHER_UID 65534         /* nobody */

static struct store *store;
static char top[64];            /* the test's own directory */

/* The bind() wrapper: with SWAP_TARGET set, the socket file just bound
 * is moved aside and a symlink to SWAP_TARGET put in its place.
 */
extern int __real_bind (int fd, const struct sockaddr *addr, socklen_t len);
extern int __wrap_bind (int fd, const struct sockaddr *addr, socklen_t len);
static const char *swap_target;

int
__wrap_bind (int fd, const struct sockaddr *addr, socklen_t len)
{
  int r = __real_bind (fd, addr, len);
  const char *path = ((const struct sockaddr_un *) addr)->sun_path;
  char aside[CONTROL_PATH_MAX + 8];

  if (r == 0 && swap_target && addr->sa_family == AF_UNIX) {
    snprintf (aside, sizeof aside, "%s.aside", path);
    if (rename (path, aside) == -1 || symlink (swap_target, path) == -1)
      tap_bail_out ("swapping %s: %m", path);
  }
  return r;
}

/* Opens a server on DIR/ctl.sock, with ctl-uid=UID (-1: none).  Returns
 * it, or NULL with *WHY set.
 */
static struct control_server *
open_in (const char *dir, int64_t uid, const char **why)
{
  struct control_config config = { .allowed_uid = uid };
  struct control_server *server = NULL;
  const char *warning;

  *why = NULL;
  snprintf (config.path, sizeof config.path, "%s/ctl.sock", dir);
  if (control_server_open (&config, "test", store, &server, &warning, why)
      == -1)
    return NULL;
  return server;
}

/* A server must open in DIR (WANT NULL), or be refused with a reason
 * that contains WANT.
 */
static void
expect_open (const char *dir, const char *want, const char *name)
{
  const char *why;
  struct control_server *server = open_in (dir, -1, &why);

  control_server_stop (server);
  if (want == NULL)
    ok (server != NULL, "%s is taken (%s)", name, why ? why : "opened");
  else
    ok (server == NULL && why && strstr (why, want), "%s is refused (%s)",
        name, why ? why : "opened");
}

static void
make_dir (const char *dir, mode_t mode, uid_t uid)
{
  if ((mkdir (dir, 0700) == -1 && errno != EEXIST)
      || chown (dir, uid, (gid_t) -1) == -1 || chmod (dir, mode) == -1)
    tap_bail_out ("making %s: %m", dir);
}

static void
test_directory (void)
{
  char dir[128], link[128];

  snprintf (dir, sizeof dir, "%s/open", top);
  make_dir (dir, 0777, geteuid ());
  expect_open (dir, "other users can write", "a 0777 directory");
  make_dir (dir, 0770, geteuid ());
  expect_open (dir, "other users can write", "a 0770 directory");
  snprintf (dir, sizeof dir, "%s/sticky", top);
  make_dir (dir, 01777, geteuid ());
  expect_open (dir, NULL, "a sticky 1777 directory of ours, as /tmp,");
  snprintf (dir, sizeof dir, "%s/private", top);
  make_dir (dir, 0700, geteuid ());
  expect_open (dir, NULL, "a 0700 directory of ours");
  snprintf (link, sizeof link, "%s/link", top);
  if (symlink (dir, link) == -1)
    tap_bail_out ("symlink: %m");
  expect_open (link, "symlink", "a symlink to it");
  if (geteuid () != 0) {
    ok (true, "# SKIP a directory of another user's: not root");
    return;
  }
  snprintf (dir, sizeof dir, "%s/others", top);
  make_dir (dir, 0755, OTHER_UID);
  expect_open (dir, "owned by uid", "a directory another user owns");
}

/* The socket file swapped for a symlink right after bind(): the target
 * keeps its mode and owner, and the server is refused.
 */
static void
test_swapped_socket (void)
{
  char dir[128], target[128];
  struct control_server *server;
  struct stat st;
  const char *why;
  int fd;

  snprintf (dir, sizeof dir, "%s/swapped", top);
  make_dir (dir, 0700, geteuid ());
  snprintf (target, sizeof target, "%s/target", top);
  fd = open (target, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd == -1 || fchmod (fd, 0644) == -1)
    tap_bail_out ("%s: %m", target);
  close (fd);
  swap_target = target;
  server = open_in (dir, geteuid () == 0 ? OTHER_UID : (int64_t) geteuid (),
                    &why);
  swap_target = NULL;
  control_server_stop (server);
  if (lstat (target, &st) == -1)
    tap_bail_out ("%s: %m", target);
  ok ((st.st_mode & 07777) == 0644, "the symlink's target keeps its mode "
      "(%04o)", (unsigned) (st.st_mode & 07777));
  ok (st.st_uid == geteuid (), "and its owner (uid %u)", (unsigned) st.st_uid);
  ok (server == NULL && why && strstr (why, "not the socket"),
      "and the server is refused (%s)", why ? why : "opened");
}

static uint64_t
cpu_us (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000ull
    + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static void
connect_to (int fd, const char *path)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };

  snprintf (addr.sun_path, sizeof addr.sun_path, "%s", path);
  if (connect (fd, (struct sockaddr *) &addr, sizeof addr) == -1)
    tap_bail_out ("connect %s: %m", path);
}

/* Sends LINE on FD and waits up to TIMEOUT_MS for a reply line, kept in
 * REPLY (SIZE bytes, "" if none came).  Returns whether it is "ok":true.
 */
static bool
ask_reply (int fd, const char *line, int timeout_ms, char *reply,
           size_t size)
{
  size_t len = 0;
  struct pollfd p = { .fd = fd, .events = POLLIN };

  reply[0] = '\0';
  if (send (fd, line, strlen (line), MSG_NOSIGNAL) != (ssize_t) strlen (line))
    return false;
  while (len < size - 1 && poll (&p, 1, timeout_ms) == 1) {
    ssize_t n = recv (fd, reply + len, size - 1 - len, 0);

    if (n <= 0)
      return false;
    len += n;
    reply[len] = '\0';
    if (memchr (reply, '\n', len))
      return strncmp (reply, "{\"ok\":true", 10) == 0;
  }
  return false;
}

static bool
ask (int fd, const char *line, int timeout_ms)
{
  char reply[65536];

  return ask_reply (fd, line, timeout_ms, reply, sizeof reply);
}

static void
test_out_of_descriptors (void)
{
  char dir[128], path[160];
  struct control_server *server;
  struct rlimit saved, low;
  const char *why;
  int served, waiting, lowest_free;
  uint64_t before_us, spent_us;

  snprintf (dir, sizeof dir, "%s/emfile", top);
  make_dir (dir, 0700, geteuid ());
  snprintf (path, sizeof path, "%s/ctl.sock", dir);
  server = open_in (dir, -1, &why);
  if (server == NULL || control_server_start (server) == -1)
    tap_bail_out ("control server: %s", why ? why : strerror (errno));
  served = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  waiting = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (served == -1 || waiting == -1)
    tap_bail_out ("socket: %m");
  connect_to (served, path);
  ok (ask (served, "stats\n", 5000), "a client is served");

  /* Every descriptor below the limit in use: the next accept4 fails. */
  lowest_free = dup (0);
  if (lowest_free == -1 || getrlimit (RLIMIT_NOFILE, &saved) == -1)
    tap_bail_out ("dup, getrlimit: %m");
  close (lowest_free);
  low = (struct rlimit) { .rlim_cur = lowest_free, .rlim_max = saved.rlim_max };
  if (setrlimit (RLIMIT_NOFILE, &low) == -1)
    tap_bail_out ("setrlimit: %m");
  connect_to (waiting, path);
  before_us = cpu_us ();
  nanosleep (&(struct timespec) { .tv_sec = 1 }, NULL);
  spent_us = cpu_us () - before_us;
  ok (spent_us < 200000, "out of descriptors with a connection waiting, "
      "the server does not spin: %llu ms of CPU in 1 s",
      (unsigned long long) spent_us / 1000);
  ok (ask (served, "stats\n", 5000),
      "and goes on serving the client it has");
  if (setrlimit (RLIMIT_NOFILE, &saved) == -1)
    tap_bail_out ("setrlimit: %m");
  ok (ask (waiting, "help\n", 5000),
      "with descriptors free again, the waiting client is served");
  close (served);
  close (waiting);
  control_server_stop (server);
}

enum answer { ANSWERED, REFUSED, OTHER_ERROR };

/* What LINE gets on the socket PATH from a client running as UID (root
 * only for another uid than ours): in a child, so that its credentials
 * are UID's when it connects.  REFUSED: the error says the command
 * changes the daemon's state.
 */
static enum answer
ask_as (uid_t uid, const char *path, const char *line)
{
  char reply[65536];

  pid_t pid = fork ();
  int status, fd;

  if (pid == -1)
    tap_bail_out ("fork: %m");
  if (pid == 0) {
    if (uid != geteuid ()
        && (setgroups (0, NULL) == -1 || setresgid (uid, uid, uid) == -1
            || setresuid (uid, uid, uid) == -1))
      _exit (2);
    fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1)
      _exit (2);
    connect_to (fd, path);
    if (ask_reply (fd, line, 5000, reply, sizeof reply))
      _exit (10 + ANSWERED);
    diag ("%.*s as uid %u: %s", (int) strlen (line) - 1, line,
          (unsigned) uid, reply);
    _exit (10 + (strstr (reply, "refused: it changes the daemon's state")
                 ? REFUSED : OTHER_ERROR));
  }
  if (waitpid (pid, &status, 0) == -1 || !WIFEXITED (status)
      || WEXITSTATUS (status) < 10)
    tap_bail_out ("the client as uid %u failed to run", (unsigned) uid);
  return WEXITSTATUS (status) - 10;
}

/* Starts a server on TOP/NAME/ctl.sock, its path in PATH, with ctl-uid=
 * UID, who must be able to pass through to it.
 */
static struct control_server *
start_for_monitor (const char *name, uid_t uid, char *path, size_t size)
{
  struct control_server *server;
  char dir[128];
  const char *why;

  snprintf (dir, sizeof dir, "%s/%s", top, name);
  make_dir (dir, 0700, geteuid ());
  snprintf (path, size, "%s/ctl.sock", dir);
  server = open_in (dir, uid, &why);
  if (server == NULL || control_server_start (server) == -1)
    tap_bail_out ("control server: %s", why ? why : strerror (errno));
  /* The monitor must pass through to the socket, made its own by ctl-uid. */
  if (chmod (top, 0711) == -1 || chmod (dir, 0711) == -1)
    tap_bail_out ("chmod: %m");
  return server;
}

static void
test_ctl_uid_read_only (void)
{
  static const char *const readers[] = { "stats\n", "get\n", "metrics\n",
                                          "classes\n", "help\n" };
  static const char *const changers[] = { "compact\n", "recompress\n",
                                           "set pool-limit 4096\n",
                                           "writeback\n" };
  uid_t monitor = geteuid () == 0 ? OTHER_UID : geteuid ();
  char path[160];
  struct control_server *server;

  server = start_for_monitor ("monitor", monitor, path, sizeof path);
  for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++)
    ok (ask_as (monitor, path, readers[i]) == ANSWERED, "the ctl-uid user (uid %u) "
        "gets %.*s answered", (unsigned) monitor,
        (int) strlen (readers[i]) - 1, readers[i]);
  for (size_t i = 0; i < sizeof changers / sizeof changers[0]; i++)
    ok (ask_as (monitor, path, changers[i]) == REFUSED, "and %.*s refused",
        (int) strlen (changers[i]) - 1, changers[i]);
  if (geteuid () == 0)
    ok (ask_as (0, path, "set pool-limit 4096\n") == ANSWERED,
        "root's set pool-limit is done");
  else
    ok (true, "# SKIP root's set: not root");
  chmod (top, 0700);
  control_server_stop (server);
}

/* As nobody in a child: connects up to TRIES times to PATH, keeps the
 * connections the server answers "help" on, tells the parent how many
 * through HELD_FD, and holds them until the parent closes GO_FD.
 */
static void
hold_slots_as_nobody (const char *path, int held_fd, int go_fd)
{
  enum { TRIES = 100 };
  char reply[65536], byte;
  int held = 0;

  if (setgroups (0, NULL) == -1 || setresgid (OTHER_UID, OTHER_UID,
                                              OTHER_UID) == -1
      || setresuid (OTHER_UID, OTHER_UID, OTHER_UID) == -1)
    _exit (2);
  for (int i = 0; i < TRIES; i++) {
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd == -1)
      _exit (2);
    connect_to (fd, path);
    if (ask_reply (fd, "help\n", 5000, reply, sizeof reply))
      held++;
    else
      close (fd);
  }
  if (write (held_fd, &held, sizeof held) != sizeof held)
    _exit (2);
  /* Returns at EOF: the parent is done. */
  if (read (go_fd, &byte, 1) == -1)
    _exit (2);
  _exit (0);
}

static void
test_ctl_uid_cannot_crowd_out_root (void)
{
  char path[160];
  struct control_server *server;
  int held_pipe[2], go_pipe[2], held = -1, status, root_fd[3];
  bool all_answered = true;
  pid_t pid;

  if (geteuid () != 0) {
    ok (true, "# SKIP the ctl-uid user crowding root out: not root");
    return;
  }
  server = start_for_monitor ("crowded", OTHER_UID, path, sizeof path);
  if (pipe2 (held_pipe, O_CLOEXEC) == -1 || pipe2 (go_pipe, O_CLOEXEC) == -1)
    tap_bail_out ("pipe2: %m");
  pid = fork ();
  if (pid == -1)
    tap_bail_out ("fork: %m");
  if (pid == 0) {
    close (go_pipe[1]);
    hold_slots_as_nobody (path, held_pipe[1], go_pipe[0]);
  }
  close (held_pipe[1]);
  close (go_pipe[0]);
  if (read (held_pipe[0], &held, sizeof held) != sizeof held)
    tap_bail_out ("the client as nobody failed to run");
  diag ("nobody holds %d connections", held);
  /* Three at once: root's own tools (cswap down's ladder stop while a
   * cswapctl watches) must not crowd each other out either.
   */
  for (int i = 0; i < 3; i++) {
    root_fd[i] = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (root_fd[i] == -1)
      tap_bail_out ("socket: %m");
    connect_to (root_fd[i], path);
  }
  for (int i = 0; i < 3; i++) {
    char reply[65536];

    if (!ask_reply (root_fd[i], "stats\n", 5000, reply, sizeof reply)) {
      diag ("root's stats on connection %d: %s", i, reply);
      all_answered = false;
    }
  }
  ok (held > 0 && all_answered, "with the ctl-uid user holding every "
      "connection it can (%d), root's stats is answered on three more", held);
  ok (held > 0 && ask (root_fd[0], "set pool-limit 4096\n", 5000),
      "and root's set pool-limit is done");
  for (int i = 0; i < 3; i++)
    close (root_fd[i]);
  close (go_pipe[1]);
  if (waitpid (pid, &status, 0) == -1 || !WIFEXITED (status)
      || WEXITSTATUS (status) != 0)
    tap_bail_out ("the client as nobody failed");
  close (held_pipe[0]);
  chmod (top, 0700);
  control_server_stop (server);
}

int
main (void)
{
  struct store_config config = {
    .size_bytes = 1 << 20, .codec = { CODEC_LZ4, 0 },
  };

  store = store_create (&config);
  if (store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  snprintf (top, sizeof top, "/tmp/cswap-test-server.XXXXXX");
  if (mkdtemp (top) == NULL)
    tap_bail_out ("mkdtemp: %m");
  test_directory ();
  test_swapped_socket ();
  test_out_of_descriptors ();
  test_ctl_uid_read_only ();
  test_ctl_uid_cannot_crowd_out_root ();
  store_destroy (store);
  char rm[96];
  snprintf (rm, sizeof rm, "rm -rf '%s'", top);
  if (system (rm) != 0)
    diag ("could not remove %s", top);
  return tap_done ();
}
