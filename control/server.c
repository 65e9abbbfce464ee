/* cswap: the control socket — one thread, one poll() loop, many clients.
 *
 * The socket is a Unix stream socket, mode 0600 in a 0700 directory (with
 * ctl-uid=, the socket is that user's and a directory made here 0711), and
 * every client is checked with SO_PEERCRED: root, or the one uid ctl-uid=
 * allows, who may run only the commands that change nothing (control.h,
 * enum control_access: a monitor; it must not swap the ladder's steps on
 * and off, drop exports or change settings).  All clients are served by one thread, so that the control plane
 * costs one thread whatever happens, and no client can hold anything up:
 *
 *  - each client has a fixed input buffer of one line (CONTROL_LINE_MAX):
 *    a longer line gets an error reply and the connection is closed;
 *  - replies are written without blocking; while a reply is unsent the
 *    client's input is not read, so a client that does not read holds at
 *    most one reply (at most CONTROL_REPLY_MAX bytes);
 *  - a client that sends no complete command for IDLE_TIMEOUT_MS is
 *    closed: only a whole line restarts the clock, not a byte, and not
 *    reading a reply (a client that trickles a byte at a time, or reads
 *    its reply a byte at a time, would otherwise hold its slot for
 *    ever); 30 s is ample to read the longest reply;
 *  - past MAX_CLIENTS a new connection gets an error line and is closed,
 *    and so does one of the ctl-uid user's past OTHER_CLIENTS_MAX: the
 *    rest of the table is kept for root and the daemon's own uid
 *    (PRIVILEGED_SLOTS), so that the read-only user, whose connections
 *    are as cheap as anyone's, can never lock out `cswap down`'s
 *    `ladder stop` or an operator's cswapctl.  A cap on the other user
 *    rather than a per-uid count: there is only one such uid, and a
 *    monitor that polls every few seconds may keep its connections as
 *    long as it likes (issue 62, item 8);
 *  - out of file descriptors (accept4: EMFILE, ENFILE), the listening
 *    socket is left alone for ACCEPT_PAUSE_MS, and new connections wait
 *    in its backlog meanwhile: polling it would wake the thread at once
 *    again, for ever, while the connection waits.  Clients already
 *    connected are served as before.
 *
 * Where the socket goes: a directory that is a directory (not a symlink
 * to one), root's or the daemon's, and that no other user can write
 * unless it is sticky (as /tmp).  Anyone else who could write it could
 * swap the socket file for a symlink between bind() and the chmod and
 * chown that follow, and be handed the target.  Those two act on the
 * path without following a symlink, and only on a socket file, as a
 * second line.  The directory's parents are trusted, as the
 * administrator's.
 *
 * The data path never waits for this thread: the commands only read
 * counters and set values, except compact and recompress, whose critical
 * sections are bounded (store.h: one zspage, one page).  While either
 * runs, other control clients wait.
 *
 * The thread is not an I/O flusher: the daemon may mark its I/O threads
 * PR_SET_IO_FLUSHER (shared/DESIGN.md, "Staying alive under memory
 * pressure"), and a thread inherits the flag, so this one clears it.  It
 * blocks every signal, which stay the main thread's business.
 *
 * Locking: the server thread alone touches the clients; start and stop run
 * on the caller's thread before and after it.  Commands lock inside
 * control_execute() (command.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"
#include "monotonic.h"

#define MAX_CLIENTS 64
/* The ctl-uid user's connections at most; the other slots are root's and
 * the daemon's uid's only.  A monitor needs one, or two while a script
 * runs beside it.
 */
#define OTHER_CLIENTS_MAX 8
#define PRIVILEGED_SLOTS (MAX_CLIENTS - OTHER_CLIENTS_MAX)
_Static_assert (PRIVILEGED_SLOTS >= 8, "root keeps room for its tools");
#define IDLE_TIMEOUT_MS 30000
#define LISTEN_BACKLOG 16
#define ACCEPT_PAUSE_MS 100
/* The thread's deepest frame is a command's line buffer and words. */
#define THREAD_STACK_BYTES (256 * 1024)

_Static_assert (sizeof ((struct sockaddr_un *) 0)->sun_path
                == CONTROL_PATH_MAX, "CONTROL_PATH_MAX is sun_path's size");

/* A client's input buffer: a line and its newline. */
#define CLIENT_IN_BYTES (CONTROL_LINE_MAX + 1)

/* The input buffer is the connection's, allocated when it is accepted:
 * sixty-four of them in the table itself were 256 KiB that every daemon
 * kept resident and locked for clients that seldom come (one `cswapctl`
 * at a time, as a rule).
 */
struct client {
  int fd;                       /* -1: a free slot */
  char *in;                     /* CLIENT_IN_BYTES */
  size_t in_len;
  char *out;                    /* the reply being sent, or NULL */
  size_t out_len, out_sent;
  bool closing;                 /* close once the reply is sent */
  bool privileged;              /* root or the daemon's uid: no cap */
  uint64_t last_command_ms;     /* accepted, or its last complete line */
  enum control_access access;   /* root: all; the ctl-uid user: read-only */
};

struct control_server {
  struct control *control;
  int listen_fd;
  int wake_fd;                  /* an eventfd: stop wakes the thread */
  char path[CONTROL_PATH_MAX];
  dev_t dev;                    /* the socket file we made, so that stop */
  ino_t ino;                    /* removes only ours */
  int64_t allowed_uid;
  /* 0, or out of descriptors: when to try accept4 again. */
  uint64_t accept_resume_ms;
  pthread_t thread;
  bool running;
  struct client clients[MAX_CLIENTS];
};

static char message[CONTROL_PATH_MAX + 160];

__attribute__ ((format (printf, 1, 2)))
static const char *
explain (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (message, sizeof message, fmt, ap);
  va_end (ap);
  return message;
}

static uint64_t
now_ms (void)
{
  return monotonic_ns () / 1000000;
}

/* Sends what it can of an error reply without waiting, then closes FD:
 * for connections refused or dropped, which get one line of explanation
 * if their socket buffer has room, and nothing else.
 */
static void
refuse (int fd, const char *error)
{
  size_t len;
  char *reply = control_error_reply (error, &len);

  if (reply && send (fd, reply, len, MSG_NOSIGNAL | MSG_DONTWAIT) == -1) {
    /* Nothing to do: the peer is gone or not reading, and is closed. */
  }
  free (reply);
  close (fd);
}

static void
drop_client (struct client *c, const char *error)
{
  if (error)
    refuse (c->fd, error);
  else
    close (c->fd);
  free (c->out);
  free (c->in);
  *c = (struct client) { .fd = -1 };
}

/* Sends the pending reply.  Returns -1 when the client is gone. */
static int
flush_output (struct client *c)
{
  while (c->out_sent < c->out_len) {
    ssize_t n = send (c->fd, c->out + c->out_sent, c->out_len - c->out_sent,
                      MSG_NOSIGNAL | MSG_DONTWAIT);

    if (n == -1)
      return errno == EAGAIN || errno == EINTR ? 0 : -1;
    c->out_sent += n;
  }
  free (c->out);
  c->out = NULL;
  return 0;
}

/* Runs one command of LEN bytes from the input buffer and starts sending
 * its reply.  Returns -1 when the client must be dropped.
 */
static int
execute (struct control_server *s, struct client *c, size_t len)
{
  c->last_command_ms = now_ms ();
  c->out = control_execute (s->control, c->access, c->in, len, &c->out_len);
  c->out_sent = 0;
  if (c->out == NULL)
    return -1;
  return flush_output (c);
}

/* Runs the complete lines in the input buffer, one reply at a time.
 * Returns -1 when the client must be dropped.
 */
static int
serve_input (struct control_server *s, struct client *c, bool eof)
{
  while (c->out == NULL && !c->closing) {
    char *newline = memchr (c->in, '\n', c->in_len);
    size_t line_len = newline ? (size_t) (newline - c->in) : c->in_len;

    if (newline == NULL) {
      /* A full buffer without a newline is a line too long: the
       * dispatcher says so, and the rest of it is never read.
       */
      if (c->in_len == CLIENT_IN_BYTES || eof) {
        c->closing = true;
        if (c->in_len > 0)
          return execute (s, c, c->in_len);
      }
      return 0;
    }
    if (execute (s, c, line_len) == -1)
      return -1;
    c->in_len -= line_len + 1;
    memmove (c->in, newline + 1, c->in_len);
  }
  return 0;
}

static int
read_input (struct control_server *s, struct client *c)
{
  ssize_t n = recv (c->fd, c->in + c->in_len, CLIENT_IN_BYTES - c->in_len,
                    MSG_DONTWAIT);

  if (n == -1)
    return errno == EAGAIN || errno == EINTR ? 0 : -1;
  c->in_len += n;
  return serve_input (s, c, n == 0);
}

static void
handle_client (struct control_server *s, struct client *c, short revents)
{
  int r = 0;

  if (revents & (POLLERR | POLLNVAL))
    r = -1;
  else if (c->out) {
    if (revents & (POLLOUT | POLLHUP)) {
      r = flush_output (c);
      if (r == 0 && c->out == NULL)
        r = serve_input (s, c, false);
    }
  }
  else if (revents & (POLLIN | POLLHUP))
    r = read_input (s, c);
  if (r == -1 || (c->closing && c->out == NULL))
    drop_client (c, NULL);
}

/* Root, or the uid ctl-uid= allows. */
static bool
peer_allowed (const struct control_server *s, int fd, uid_t *uid)
{
  struct ucred cred;
  socklen_t len = sizeof cred;

  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
    return false;
  *uid = cred.uid;
  return cred.uid == 0 || (s->allowed_uid >= 0 && cred.uid == s->allowed_uid);
}

/* A free slot for a client, or NULL with *WHY set: any free slot for
 * root and the daemon's own uid, and for the ctl-uid user one while it
 * holds fewer than OTHER_CLIENTS_MAX.
 */
static struct client *
free_slot (struct control_server *s, bool privileged, const char **why)
{
  struct client *slot = NULL;
  size_t others = 0;

  for (size_t i = 0; i < MAX_CLIENTS; i++) {
    if (s->clients[i].fd == -1)
      slot = slot ? slot : &s->clients[i];
    else if (!s->clients[i].privileged)
      others++;
  }
  *why = "too many clients";
  if (!privileged && others >= OTHER_CLIENTS_MAX) {
    *why = "too many clients of this user (the rest are kept for root)";
    return NULL;
  }
  return slot;
}

static void
accept_clients (struct control_server *s)
{
  for (;;) {
    int fd = accept4 (s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    struct client *slot;
    char why[96], *in;
    const char *full;
    uid_t uid = (uid_t) -1;
    bool privileged;

    if (fd == -1) {
      if (errno == EMFILE || errno == ENFILE)
        s->accept_resume_ms = now_ms () + ACCEPT_PAUSE_MS;
      return;                   /* EAGAIN, or the peer gave up: nothing to do */
    }
    if (!peer_allowed (s, fd, &uid)) {
      snprintf (why, sizeof why, "access denied: uid %ld is neither root "
                "nor the ctl-uid", (long) (int) uid);
      refuse (fd, why);
      continue;
    }
    privileged = uid == 0 || uid == geteuid ();
    slot = free_slot (s, privileged, &full);
    if (slot == NULL) {
      refuse (fd, full);
      continue;
    }
    in = malloc (CLIENT_IN_BYTES);
    if (in == NULL) {
      refuse (fd, "out of memory");
      continue;
    }
    *slot = (struct client) {
      .fd = fd, .in = in, .last_command_ms = now_ms (),
      .privileged = privileged,
      .access = uid == 0 ? CONTROL_ACCESS_ALL : CONTROL_ACCESS_READ_ONLY,
    };
  }
}

/* The poll() timeout: until the first client's idle deadline, or the
 * end of a pause in accepting.
 */
static int
next_timeout_ms (const struct control_server *s, uint64_t now)
{
  uint64_t first = s->accept_resume_ms ? s->accept_resume_ms : UINT64_MAX;

  for (size_t i = 0; i < MAX_CLIENTS; i++)
    if (s->clients[i].fd != -1
        && s->clients[i].last_command_ms + IDLE_TIMEOUT_MS < first)
      first = s->clients[i].last_command_ms + IDLE_TIMEOUT_MS;
  if (first == UINT64_MAX)
    return -1;
  return first > now ? (int) (first - now) : 0;
}

static void
drop_idle_clients (struct control_server *s, uint64_t now)
{
  for (size_t i = 0; i < MAX_CLIENTS; i++)
    if (s->clients[i].fd != -1
        && now - s->clients[i].last_command_ms >= IDLE_TIMEOUT_MS)
      drop_client (&s->clients[i], "idle timeout");
}

static void *
serve (void *arg)
{
  struct control_server *s = arg;
  struct pollfd fds[2 + MAX_CLIENTS];
  struct client *owner[2 + MAX_CLIENTS];

  /* EPERM without CAP_SYS_RESOURCE: then the flag cannot be set either. */
  prctl (PR_SET_IO_FLUSHER, 0, 0, 0, 0);
  for (;;) {
    nfds_t n = 2;

    if (s->accept_resume_ms && now_ms () >= s->accept_resume_ms)
      s->accept_resume_ms = 0;
    fds[0] = (struct pollfd) { .fd = s->wake_fd, .events = POLLIN };
    /* A negative fd is left out of poll(): so while accepting pauses. */
    fds[1] = (struct pollfd) {
      .fd = s->accept_resume_ms ? -1 : s->listen_fd, .events = POLLIN,
    };
    for (size_t i = 0; i < MAX_CLIENTS; i++) {
      struct client *c = &s->clients[i];

      if (c->fd == -1)
        continue;
      owner[n] = c;
      fds[n++] = (struct pollfd) {
        .fd = c->fd, .events = c->out ? POLLOUT : POLLIN,
      };
    }
    if (poll (fds, n, next_timeout_ms (s, now_ms ())) == -1 && errno != EINTR)
      break;
    if (fds[0].revents)
      break;
    for (nfds_t i = 2; i < n; i++)
      if (fds[i].revents)
        handle_client (s, owner[i], fds[i].revents);
    if (fds[1].revents)
      accept_clients (s);
    drop_idle_clients (s, now_ms ());
  }
  return NULL;
}

/* Is something listening at ADDR?  Connecting tells: a stale socket file
 * refuses.
 */
static bool
someone_listens (const struct sockaddr_un *addr)
{
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool listening;

  if (fd == -1)
    return false;
  listening = connect (fd, (const struct sockaddr *) addr, sizeof *addr) == 0
    || errno == EAGAIN;         /* its backlog is full: someone is there */
  close (fd);
  return listening;
}

/* Makes the directory the socket goes into, with MODE, if it is missing,
 * and checks it, made here or not, by the rule at the top.
 */
static const char *
make_directory (const char *path, mode_t mode)
{
  char dir[CONTROL_PATH_MAX];
  char *slash;
  struct stat st;

  snprintf (dir, sizeof dir, "%s", path);
  slash = strrchr (dir, '/');
  if (slash == NULL)
    snprintf (dir, sizeof dir, ".");
  else if (slash == dir)
    dir[1] = '\0';
  else {
    *slash = '\0';
    if (mkdir (dir, mode) == -1 && errno != EEXIST)
      return explain ("%s: mkdir: %m", dir);
  }
  if (lstat (dir, &st) == -1)
    return explain ("%s: %m", dir);
  if (S_ISLNK (st.st_mode))
    return explain ("%s: a symlink (refused: name the directory itself)", dir);
  if (!S_ISDIR (st.st_mode))
    return explain ("%s: not a directory", dir);
  if (st.st_uid != 0 && st.st_uid != geteuid ())
    return explain ("%s: owned by uid %u, neither root nor this daemon's user",
                    dir, (unsigned) st.st_uid);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
    return explain ("%s: other users can write it and it is not sticky "
                    "(chmod go-w, or +t)", dir);
  return NULL;
}

/* Binds ADDR, replacing a stale socket file but nothing else.  Returns 0,
 * or -1 with *WHY set.
 */
static int
bind_path (int fd, const struct sockaddr_un *addr, const char **why)
{
  const char *path = addr->sun_path;
  struct stat st;

  if (bind (fd, (const struct sockaddr *) addr, sizeof *addr) == 0)
    return 0;
  if (errno != EADDRINUSE)
    *why = explain ("%s: bind: %m", path);
  else if (lstat (path, &st) == 0 && !S_ISSOCK (st.st_mode))
    *why = explain ("%s: exists and is not a socket", path);
  else if (someone_listens (addr))
    *why = explain ("%s: another daemon is listening on it", path);
  else if (unlink (path) == -1)
    *why = explain ("%s: removing the stale socket: %m", path);
  else if (bind (fd, (const struct sockaddr *) addr, sizeof *addr) == -1)
    *why = explain ("%s: bind: %m", path);
  else
    return 0;
  return -1;
}

/* Makes the listening socket at S->path.  Returns it, or -1 with *WHY
 * set.
 */
static int
listen_on (struct control_server *s, const char **why)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  struct stat st;
  int fd;

  /* ctl-uid's user must be able to pass through a directory made here. */
  if ((*why = make_directory (s->path, s->allowed_uid >= 0 ? 0711 : 0700))
      != NULL)
    return -1;
  memcpy (addr.sun_path, s->path, sizeof addr.sun_path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd == -1) {
    *why = explain ("socket: %m");
    return -1;
  }
  /* Linux makes the socket file with the socket's mode less the umask,
   * so it is never open to others, not even between bind and chmod.
   */
  if (fchmod (fd, 0600) == -1) {
    *why = explain ("fchmod: %m");
    goto fail;
  }
  if (bind_path (fd, &addr, why) == -1)
    goto fail;
  if (lstat (s->path, &st) == -1 || !S_ISSOCK (st.st_mode)) {
    *why = explain ("%s: not the socket just bound (replaced? refused)",
                    s->path);
    goto fail;
  }
  /* The socket stays 0600 (whatever the umask took); with ctl-uid it is
   * that user's, so that the user can connect at all (SO_PEERCRED then
   * lets in root and them only).  Neither follows a symlink.
   */
  if (fchmodat (AT_FDCWD, s->path, 0600, AT_SYMLINK_NOFOLLOW) == -1
      || (s->allowed_uid >= 0
          && fchownat (AT_FDCWD, s->path, (uid_t) s->allowed_uid, (gid_t) -1,
                       AT_SYMLINK_NOFOLLOW) == -1)
      || listen (fd, LISTEN_BACKLOG) == -1) {
    *why = explain ("%s: %m", s->path);
    unlink (s->path);
    goto fail;
  }
  s->dev = st.st_dev;
  s->ino = st.st_ino;
  return fd;

 fail:
  close (fd);
  return -1;
}

/* Removes the socket file, unless it is no longer ours (an operator or
 * another daemon replaced it).
 */
static void
remove_socket_file (const struct control_server *s)
{
  struct stat st;

  if (lstat (s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
    unlink (s->path);
}

static void
free_server (struct control_server *s)
{
  for (size_t i = 0; i < MAX_CLIENTS; i++)
    if (s->clients[i].fd != -1)
      drop_client (&s->clients[i], NULL);
  if (s->listen_fd != -1) {
    close (s->listen_fd);
    remove_socket_file (s);
  }
  if (s->wake_fd != -1)
    close (s->wake_fd);
  control_destroy (s->control);
  free (s);
}

int
control_server_open (const struct control_config *config,
                     const char *default_name, struct store *store,
                     struct control_server **server, const char **warning,
                     const char **why)
{
  bool is_default = config->path[0] == '\0';
  struct control_server *s;
  const char *reason = NULL;

  *server = NULL;
  *warning = NULL;
  if (strcmp (config->path, CONTROL_PATH_NONE) == 0)
    return 0;
  s = calloc (1, sizeof *s);
  if (s == NULL) {
    *why = explain ("calloc: %m");
    return -1;
  }
  s->listen_fd = s->wake_fd = -1;
  s->allowed_uid = config->allowed_uid;
  for (size_t i = 0; i < MAX_CLIENTS; i++)
    s->clients[i].fd = -1;
  if (is_default)
    snprintf (s->path, sizeof s->path, "%s/%s.sock", CONTROL_DIR,
              default_name);
  else
    snprintf (s->path, sizeof s->path, "%s", config->path);

  s->control = control_create (store);
  if (s->control == NULL)
    reason = explain ("control_create: %m");
  else if ((s->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1)
    reason = explain ("eventfd: %m");
  else
    s->listen_fd = listen_on (s, &reason);
  if (reason == NULL) {
    *server = s;
    return 0;
  }
  free_server (s);
  /* The default is a convenience: a daemon run by a user, or a second
   * daemon, goes on without a socket rather than failing.
   */
  if (is_default) {
    *warning = explain ("%s (no control socket; set ctl=PATH or ctl=none)",
                        reason);
    return 0;
  }
  *why = reason;
  return -1;
}

int
control_server_start (struct control_server *s)
{
  pthread_attr_t attr;
  sigset_t all, old;
  int e;

  if (s == NULL)
    return 0;
  /* Signals stay with the daemon's main thread: the thread starts with
   * all of them blocked.
   */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  pthread_attr_init (&attr);
  pthread_attr_setstacksize (&attr, THREAD_STACK_BYTES);
  e = pthread_create (&s->thread, &attr, serve, s);
  pthread_attr_destroy (&attr);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (e) {
    errno = e;
    return -1;
  }
  pthread_setname_np (s->thread, "cswap-ctl");
  s->running = true;
  return 0;
}

void
control_server_extend (struct control_server *server,
                       const struct control_extension *extension)
{
  if (server)
    control_extend (server->control, extension);
}

void
control_server_stop (struct control_server *s)
{
  uint64_t one = 1;

  if (s == NULL)
    return;
  if (s->running) {
    if (write (s->wake_fd, &one, sizeof one) == -1) {
      /* Cannot fail: the eventfd's counter is far from its limit. */
    }
    pthread_join (s->thread, NULL);
  }
  free_server (s);
}
