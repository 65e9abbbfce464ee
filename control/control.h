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
 *    front ends by daemon/daemon-life.c: control_server_open() before
 *    they fork or daemonize (so errors still reach the terminal),
 *    control_server_start() after (threads do not survive a fork),
 *    control_server_stop() at exit.
 *
 * The protocol (man/cswapctl.8): one command per line, one reply per line,
 * a JSON object {"ok":true,...} or {"ok":false,"error":"..."}.
 */
#ifndef CSWAP_CONTROL_H
#define CSWAP_CONTROL_H

#include <stddef.h>
#include <stdint.h>

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

/* Runs one command: LINE holds LEN bytes, without the newline, and may be
 * anything at all.  Returns the reply, a JSON object ending in "\n" and
 * then a NUL, *REPLY_LEN bytes without the NUL, for the caller to free;
 * NULL only when out of memory.
 */
extern char *control_execute (struct control *control, const char *line,
                              size_t len, size_t *reply_len);

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
/* Stops the thread, closes every connection, removes the socket file if
 * it is still ours, and frees SERVER (which may be NULL).
 */
extern void control_server_stop (struct control_server *server);

#endif /* CSWAP_CONTROL_H */
