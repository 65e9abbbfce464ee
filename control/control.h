/* cswap: the control plane — line commands with JSON replies over a Unix
 * socket, and the same commands callable without one.
 *
 * Two halves, so that tests and the fuzz target reach the commands
 * without a socket:
 *
 *  - the dispatcher (command.c, json.c, metrics.c): control_execute()
 *    takes one command line and returns one JSON reply line;
 *  - the server (server.c): the socket, its one poll() thread, peer
 *    credentials, limits and timeouts.  Three calls, made for both
 *    front ends by daemon/serve/daemon-life.c: control_server_open() before
 *    they fork or daemonize (so errors still reach the terminal),
 *    control_server_start() after (threads do not survive a fork),
 *    control_server_stop() at exit.
 *
 * The protocol (man/cswapctl.8): one command per line, one reply per line,
 * a JSON object {"ok":true,...} or {"ok":false,"error":"..."}.
 */
#ifndef CSWAP_CONTROL_H
#define CSWAP_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"

/* sizeof (struct sockaddr_un) .sun_path, without <sys/un.h> here. */
#define CONTROL_PATH_MAX 108

/* The socket a daemon listens on, as the ctl= and ctl-uid= options say. */
struct control_config {
  char path[CONTROL_PATH_MAX];  /* "": the default, "none": no socket */
  int64_t allowed_uid;          /* besides root; -1: root only */
};
#define CONTROL_DIR "/run/cswap"
#define CONTROL_PATH_NONE "none"

/* The longest command line, newline excluded: what a command can need is
 * far less, and the server's per-client buffer is this big.
 */
#define CONTROL_LINE_MAX 4096

/* The dispatcher. */
struct control;
/* Returns NULL with errno set. */
extern struct control *control_create (struct store *store);
extern void control_destroy (struct control *control);

/* What the sender of a command may do.  Root may run every command; the
 * ctl-uid user, a monitor, only those that change nothing (stats,
 * classes, get, metrics, help, and an extension's listing): compact,
 * recompress, set, writeback, and an extension's other forms (ladder
 * add/follow/stop, which swap on and off; exports NAME drop) are refused
 * to it, each command's row saying which it is.
 */
enum control_access {
  CONTROL_ACCESS_ALL,           /* root, and callers with no peer */
  CONTROL_ACCESS_READ_ONLY,     /* the ctl-uid user */
};

/* Runs one command for a sender with ACCESS: LINE holds LEN bytes,
 * without the newline, and may be anything at all.  Returns the reply, a
 * JSON object ending in "\n" and then a NUL, *REPLY_LEN bytes without the
 * NUL, for the caller to free; NULL only when out of memory.
 */
extern char *control_execute (struct control *control,
                              enum control_access access, const char *line,
                              size_t len, size_t *reply_len);

/* What a front end adds to the control plane, in up to
 * CONTROL_MAX_EXTENSIONS extensions: each a command of its own, or none,
 * and numbers for `stats` and `metrics` (the ladder's,
 * daemon/ladder/ladder-follow.h; cswap-ublk's lost pages,
 * daemon/serve/lost-pages-numbers.h).  control/ knows nothing of what
 * they mean: it dispatches a command as it does its own (help lists it,
 * the argument count is checked) and shows the numbers after the store's,
 * in the JSON and the Prometheus views alike, from each one's table
 * NUMBERS; labelled series go to the Prometheus view alone
 * (write_metrics).
 */
#define CONTROL_MAX_EXTENSIONS 4
#define CONTROL_EXTENSION_MAX_NUMBERS 8
struct json;
struct control_extension_number {
  const char *name;             /* the member, and the metric cswap_NAME */
  bool counter;                 /* only goes up: the metric is NAME_total */
  const char *help;
};
struct control_extension {
  const char *command, *args, *help;  /* command NULL: numbers only */
  unsigned min_args, max_args;
  /* With at most this many arguments the command changes nothing, and
   * the ctl-uid user may run it (0: only the bare command, a listing).
   */
  unsigned read_only_max_args;
  /* Runs on the control thread.  Appends its reply's members to REPLY
   * (json.h), or returns -1 with ERROR (ERROR_SIZE bytes) set.
   */
  int (*run) (void *arg, unsigned argc, char *const *argv,
              struct json *reply, char *error, size_t error_size);
  const struct control_extension_number *numbers;
  unsigned number_count;        /* at most CONTROL_EXTENSION_MAX_NUMBERS */
  /* Fills VALUES[0..number_count); on the control thread, with no lock
   * of control's held.  Not called when number_count is 0.
   */
  void (*read_numbers) (void *arg, uint64_t *values);
  /* Appends whole Prometheus metric families of its own to `metrics`,
   * after the numbers: series with labels, which the one-number table
   * cannot hold (the plugin's per-export counters).  On the control
   * thread.  NULL: none.
   */
  void (*write_metrics) (void *arg, FILE *f);
  void *arg;
};
/* Adds EXTENSION, which must outlive CONTROL, before any command runs
 * (aborts past CONTROL_MAX_EXTENSIONS: a front end's mistake); NULL
 * removes every one added.
 */
extern void control_extend (struct control *control,
                            const struct control_extension *extension);

/* The server. */
struct control_server;

/* Makes and binds the socket CONFIG names, or CONTROL_DIR/DEFAULT_NAME.sock
 * when it names none, and a dispatcher for STORE.  Returns 0 with
 * *SERVER set, or NULL when there is no socket: with ctl=none, or when
 * the default path could not be used (not root, another daemon on it),
 * which is not an error but sets *WARNING to say why.  Returns -1 with
 * *WHY set when an explicit path cannot be used.  Messages live in a
 * static buffer.
 */
extern int control_server_open (const struct control_config *config,
                                const char *default_name, struct store *store,
                                struct control_server **server,
                                const char **warning, const char **why);
/* Starts serving in a thread of its own.  Returns 0, or -1 with errno set.
 * SERVER may be NULL: nothing to do.
 */
extern int control_server_start (struct control_server *server);
/* control_extend on the server's dispatcher: before
 * control_server_start.  SERVER may be NULL: nothing to do.
 */
extern void control_server_extend (struct control_server *server,
                                   const struct control_extension *extension);
/* Stops the thread, closes every connection, removes the socket file if
 * it is still ours, and frees SERVER (which may be NULL).
 */
extern void control_server_stop (struct control_server *server);

#endif /* CSWAP_CONTROL_H */
