/* cswapctl: the command-line client of a cswap daemon's control socket.
 *
 *   cswapctl [--socket PATH] [--json] [--bytes] [--watch SECONDS] COMMAND
 *
 * Sends one command line, reads the one-line JSON reply, and prints it as
 * a table like zramctl's (sizes in KiB/MiB/GiB with one decimal), or as it
 * came (--json), or with exact byte counts (--bytes).  The protocol and the
 * reply fields are in cswapctl(8).
 *
 * Exit status: 0 ok, 1 the daemon replied an error, 2 usage error,
 * 3 cannot connect.
 *
 * Locking: none; single-threaded.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "parse.h"

#define PROGRAM_NAME "cswapctl"
#define DEFAULT_SOCKET "/run/cswap/cswap.sock"
#define EXIT_DAEMON_ERROR 1
#define EXIT_USAGE 2
#define EXIT_CONNECT 3
/* The largest reply the daemon sends is far smaller (CONTROL_REPLY_MAX). */
#define MAX_REPLY_BYTES (16 * 1024 * 1024)
#define MAX_COLUMNS 24
#define MAX_CELL 32

static const char *socket_path = DEFAULT_SOCKET;
static bool print_json, exact_bytes;

struct command {
  const char *name;
  int min_args, max_args;
  void (*print) (json_object *reply);
};

__attribute__ ((noreturn, format (printf, 2, 3)))
static void
die (int status, const char *fmt, ...)
{
  va_list ap;

  fprintf (stderr, "%s: ", PROGRAM_NAME);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (status);
}

/* Tables: cells are formatted first, so that every column gets the width
 * of its widest cell.  Text columns are left-aligned, numbers right.
 */
struct table {
  size_t columns, rows;
  char (*cells)[MAX_COLUMNS][MAX_CELL];
  bool left[MAX_COLUMNS];
};

static void
table_init (struct table *t, size_t rows, const char *const *header,
            size_t columns, size_t left_columns)
{
  t->columns = columns;
  t->rows = 0;
  t->cells = calloc (rows + 1, sizeof *t->cells);
  if (t->cells == NULL)
    die (EXIT_FAILURE, "calloc: %m");
  for (size_t c = 0; c < columns; c++) {
    snprintf (t->cells[0][c], MAX_CELL, "%s", header[c]);
    t->left[c] = c < left_columns;
  }
  t->rows = 1;
}

/* The next row's cell C. */
static char *
cell (struct table *t, size_t c)
{
  return t->cells[t->rows][c];
}

static void
table_print (struct table *t)
{
  size_t width[MAX_COLUMNS] = { 0 };

  for (size_t r = 0; r < t->rows; r++)
    for (size_t c = 0; c < t->columns; c++)
      if (strlen (t->cells[r][c]) > width[c])
        width[c] = strlen (t->cells[r][c]);
  for (size_t r = 0; r < t->rows; r++)
    for (size_t c = 0; c < t->columns; c++)
      printf ("%s%*s%s", c ? " " : "",
              t->left[c] ? -(int) width[c] : (int) width[c], t->cells[r][c],
              c + 1 == t->columns ? "\n" : "");
  free (t->cells);
}

static json_object *
member (json_object *o, const char *key)
{
  json_object *value;

  if (!json_object_object_get_ex (o, key, &value))
    die (EXIT_DAEMON_ERROR, "the daemon's reply has no \"%s\"", key);
  return value;
}

static uint64_t
member_uint (json_object *o, const char *key)
{
  return json_object_get_uint64 (member (o, key));
}

static void
format_uint (char *out, uint64_t value)
{
  snprintf (out, MAX_CELL, "%llu", (unsigned long long) value);
}

/* 512 B, 4.0 KiB, 1.5 GiB; exact with --bytes. */
static void
format_size (char *out, uint64_t bytes)
{
  static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
  double value = bytes;
  size_t u = 0;

  if (exact_bytes || bytes < 1024) {
    snprintf (out, MAX_CELL, exact_bytes ? "%llu" : "%llu B",
              (unsigned long long) bytes);
    return;
  }
  value /= 1024;
  while (value >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
    value /= 1024;
    u++;
  }
  snprintf (out, MAX_CELL, "%.1f %s", value, units[u]);
}

static void
print_stats (json_object *r)
{
  static const char *const header[] = {
    "ALGORITHM", "DISKSIZE", "DATA", "COMPR", "POOL", "META", "TOTAL",
    "RATIO", "PAGES", "SAME", "HUGE", "LIMIT", "LIMIT-HITS", "ERRORS",
    "UPTIME",
  };
  json_object *options = member (r, "options");
  uint64_t limit = member_uint (r, "pool_limit_bytes");
  struct table t;
  size_t c = 0;

  table_init (&t, 1, header, sizeof header / sizeof header[0], 1);
  snprintf (cell (&t, c++), MAX_CELL, "%s-%lld",
            json_object_get_string (member (options, "codec")),
            (long long) json_object_get_int64 (member (options, "level")));
  format_size (cell (&t, c++), member_uint (r, "size_bytes"));
  format_size (cell (&t, c++), member_uint (r, "original_bytes"));
  format_size (cell (&t, c++), member_uint (r, "compressed_bytes"));
  format_size (cell (&t, c++), member_uint (r, "pool_bytes"));
  format_size (cell (&t, c++), member_uint (r, "metadata_bytes"));
  format_size (cell (&t, c++), member_uint (r, "memory_used_bytes"));
  snprintf (cell (&t, c++), MAX_CELL, "%.2f",
            json_object_get_double (member (r, "effective_ratio")));
  format_uint (cell (&t, c++), member_uint (r, "pages_stored"));
  format_uint (cell (&t, c++), member_uint (r, "same_filled_pages"));
  format_uint (cell (&t, c++), member_uint (r, "huge_pages"));
  if (limit)
    format_size (cell (&t, c++), limit);
  else
    snprintf (cell (&t, c++), MAX_CELL, "-");
  format_uint (cell (&t, c++), member_uint (r, "pool_limit_hits"));
  format_uint (cell (&t, c++), member_uint (r, "failed_writes")
                               + member_uint (r, "read_errors"));
  snprintf (cell (&t, c++), MAX_CELL, "%.0fs",
            json_object_get_double (member (r, "uptime_seconds")));
  t.rows++;
  table_print (&t);
}

static void
print_classes (json_object *r)
{
  static const char *const header[] = {
    "CLASS", "SIZE", "PAGES", "OBJS", "HUGE", "EMPTY", "<10%", "10%", "20%",
    "30%", "40%", "50%", "60%", "70%", "80%", "90%", "FULL", "ALLOCATED",
    "USED", "PAGES-USED", "FREEABLE",
  };
  static const char *const counts[] = {
    "objects_allocated", "objects_used", "pages_used", "pages_freeable",
  };
  json_object *classes = member (r, "classes");
  size_t n = json_object_array_length (classes);
  struct table t;

  table_init (&t, n, header, sizeof header / sizeof header[0], 0);
  for (size_t i = 0; i < n; i++) {
    json_object *k = json_object_array_get_idx (classes, i);
    json_object *zspages = member (k, "zspages");
    size_t c = 0;

    format_uint (cell (&t, c++), member_uint (k, "index"));
    format_uint (cell (&t, c++), member_uint (k, "size"));
    format_uint (cell (&t, c++), member_uint (k, "pages_per_zspage"));
    format_uint (cell (&t, c++), member_uint (k, "objects_per_zspage"));
    snprintf (cell (&t, c++), MAX_CELL, "%s",
              json_object_get_boolean (member (k, "huge")) ? "Y" : "N");
    for (size_t g = 0; g < json_object_array_length (zspages) && g < 12; g++)
      format_uint (cell (&t, c++),
                   json_object_get_uint64 (json_object_array_get_idx (zspages,
                                                                      g)));
    for (size_t m = 0; m < sizeof counts / sizeof counts[0]; m++)
      format_uint (cell (&t, c++), member_uint (k, counts[m]));
    t.rows++;
  }
  table_print (&t);
}

static void
print_compact (json_object *r)
{
  static const char *const header[] = { "PAGES-FREED", "OBJECTS-MOVED" };
  struct table t;

  table_init (&t, 1, header, 2, 0);
  format_uint (cell (&t, 0), member_uint (r, "pages_freed"));
  format_uint (cell (&t, 1), member_uint (r, "objects_moved"));
  t.rows++;
  table_print (&t);
}

/* Every member but "ok", one "key value" line each: for get, set and
 * what the tier's writeback will reply.
 */
static void
print_members (json_object *o)
{
  json_object_object_foreach (o, key, value) {
    if (strcmp (key, "ok") == 0)
      continue;
    if (json_object_is_type (value, json_type_object))
      print_members (value);
    else
      printf ("%s %s\n", key, json_object_get_string (value));
  }
}

static void
print_metrics (json_object *r)
{
  fputs (json_object_get_string (member (r, "metrics")), stdout);
}

/* Rows of ARRAY as "NAME ARGS  HELP", the members NAME and ARGS named. */
static void
print_help_rows (json_object *array, const char *name, const char *args)
{
  for (size_t i = 0; i < json_object_array_length (array); i++) {
    json_object *row = json_object_array_get_idx (array, i);
    char usage[64];

    snprintf (usage, sizeof usage, "%s %s",
              json_object_get_string (member (row, name)),
              json_object_get_string (member (row, args)));
    printf ("  %-22s %s\n", usage,
            json_object_get_string (member (row, "help")));
  }
}

static void
print_help (json_object *r)
{
  printf ("Commands:\n");
  print_help_rows (member (r, "commands"), "name", "args");
  printf ("Settings (get KEY, set KEY VALUE):\n");
  print_help_rows (member (r, "settings"), "key", "values");
}

static const struct command commands[] = {
  { "stats", 0, 0, print_stats },
  { "classes", 0, 0, print_classes },
  { "compact", 0, 0, print_compact },
  { "get", 0, 1, print_members },
  { "set", 2, 2, print_members },
  { "writeback", 0, 7, print_members },
  { "metrics", 0, 0, print_metrics },
  { "help", 0, 0, print_help },
};

static void
usage (FILE *f)
{
  fprintf (f,
           "Usage: %s [OPTIONS] COMMAND [ARGS]\n"
           "Talks to a cswap daemon's control socket.\n\n"
           "Commands:\n"
           "  stats                 counters, as one table row\n"
           "  classes               the allocator's per-class table\n"
           "  compact               compact the allocator now\n"
           "  writeback [ARGS]      write pages back to the backing file\n"
           "  get [KEY]             one setting, or all\n"
           "  set KEY VALUE         change a setting\n"
           "  metrics               Prometheus text format\n"
           "  help                  the daemon's commands and settings\n\n"
           "Options:\n"
           "  -s, --socket PATH     the socket (default %s)\n"
           "  -j, --json            print the daemon's JSON reply as it is\n"
           "  -b, --bytes           exact byte counts, not KiB/MiB/GiB\n"
           "  -w, --watch SECONDS   run the command again every SECONDS\n"
           "  -h, --help            this text\n"
           "  -V, --version         the version\n\n"
           "Exit status: 0 ok, 1 the daemon replied an error, 2 usage error,\n"
           "3 cannot connect.\n",
           PROGRAM_NAME, DEFAULT_SOCKET);
}

static int
connect_daemon (void)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int fd;

  if (strlen (socket_path) >= sizeof addr.sun_path)
    die (EXIT_USAGE, "%s: the socket path is too long", socket_path);
  strcpy (addr.sun_path, socket_path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd == -1)
    die (EXIT_CONNECT, "socket: %m");
  if (connect (fd, (struct sockaddr *) &addr, sizeof addr) == -1) {
    switch (errno) {
    case ENOENT:
      die (EXIT_CONNECT, "%s: no such socket: is the daemon running with "
           "ctl=%s?", socket_path, socket_path);
    case ECONNREFUSED:
      die (EXIT_CONNECT, "%s: nothing listens on it: is the daemon running?",
           socket_path);
    case EACCES:
    case EPERM:
      die (EXIT_CONNECT, "%s: access denied: the control socket is for root "
           "(or the daemon's ctl-uid)", socket_path);
    default:
      die (EXIT_CONNECT, "%s: connect: %m", socket_path);
    }
  }
  return fd;
}

/* Sends LINE and returns the reply line, NUL-terminated, to free. */
static char *
exchange (const char *line)
{
  int fd = connect_daemon ();
  size_t len = 0, capacity = 4096;
  char *reply = malloc (capacity);

  if (reply == NULL)
    die (EXIT_FAILURE, "malloc: %m");
  /* A daemon that refuses a client (not allowed, too many) writes why
   * and closes at once: the send then fails, but the reason is there to
   * read.
   */
  if (send (fd, line, strlen (line), MSG_NOSIGNAL) == -1 && errno != EPIPE)
    die (EXIT_CONNECT, "%s: send: %m", socket_path);
  while (len == 0 || reply[len - 1] != '\n') {
    ssize_t n;

    if (len + 1 == capacity) {
      if (capacity >= MAX_REPLY_BYTES)
        die (EXIT_DAEMON_ERROR, "the daemon's reply is too long");
      capacity *= 2;
      reply = realloc (reply, capacity);
      if (reply == NULL)
        die (EXIT_FAILURE, "realloc: %m");
    }
    n = recv (fd, reply + len, capacity - len - 1, 0);
    if (n == -1 && errno == EINTR)
      continue;
    if (n == -1)
      die (EXIT_CONNECT, "%s: recv: %m", socket_path);
    if (n == 0)
      die (EXIT_DAEMON_ERROR, "%s: the daemon closed the connection without "
           "a reply", socket_path);
    len += n;
  }
  reply[len] = '\0';
  close (fd);
  return reply;
}

/* Runs LINE once.  Returns the exit status. */
static int
run (const struct command *command, const char *line)
{
  char *text = exchange (line);
  json_object *reply = json_tokener_parse (text);
  json_object *ok, *error;
  int status = EXIT_SUCCESS;

  if (reply == NULL || !json_object_object_get_ex (reply, "ok", &ok))
    die (EXIT_DAEMON_ERROR, "the daemon's reply is not a JSON reply: %s", text);
  if (!json_object_get_boolean (ok)) {
    status = EXIT_DAEMON_ERROR;
    if (print_json)
      fputs (text, stdout);
    else if (json_object_object_get_ex (reply, "error", &error))
      fprintf (stderr, "%s: daemon: %s\n", PROGRAM_NAME,
               json_object_get_string (error));
    else
      fprintf (stderr, "%s: daemon: an error without a message\n",
               PROGRAM_NAME);
  }
  else if (print_json)
    fputs (text, stdout);
  else
    command->print (reply);
  fflush (stdout);
  json_object_put (reply);
  free (text);
  return status;
}

int
main (int argc, char *argv[])
{
  static const struct option long_options[] = {
    { "socket", required_argument, NULL, 's' },
    { "json", no_argument, NULL, 'j' },
    { "bytes", no_argument, NULL, 'b' },
    { "watch", required_argument, NULL, 'w' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
  };
  const struct command *command = NULL;
  char line[4096] = "";
  int64_t watch_seconds = 0;
  const char *why;
  int opt, nargs;

  while ((opt = getopt_long (argc, argv, "s:jbw:hV", long_options, NULL))
         != -1) {
    switch (opt) {
    case 's':
      socket_path = optarg;
      break;
    case 'j':
      print_json = true;
      break;
    case 'b':
      exact_bytes = true;
      break;
    case 'w':
      if (parse_int64 (optarg, 1, 86400, &watch_seconds, &why) == -1)
        die (EXIT_USAGE, "--watch %s: %s", optarg, why);
      break;
    case 'h':
      usage (stdout);
      return EXIT_SUCCESS;
    case 'V':
      printf ("%s %s\n", PROGRAM_NAME, CSWAP_VERSION);
      return EXIT_SUCCESS;
    default:
      usage (stderr);
      return EXIT_USAGE;
    }
  }
  if (optind == argc) {
    usage (stderr);
    return EXIT_USAGE;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp (commands[i].name, argv[optind]) == 0)
      command = &commands[i];
  if (command == NULL)
    die (EXIT_USAGE, "%s: unknown command (see --help)", argv[optind]);
  nargs = argc - optind - 1;
  if (nargs < command->min_args || nargs > command->max_args)
    die (EXIT_USAGE, "%s: wrong number of arguments (see --help)",
         command->name);
  /* Words go on one line, separated by spaces: a word cannot hold one. */
  for (int i = optind; i < argc; i++) {
    if (argv[i][0] == '\0' || strpbrk (argv[i], " \t\r\n"))
      die (EXIT_USAGE, "'%s': an argument cannot be empty or hold spaces",
           argv[i]);
    if (strlen (line) + strlen (argv[i]) + 2 >= sizeof line)
      die (EXIT_USAGE, "the command is too long");
    strcat (line, argv[i]);
    strcat (line, i + 1 < argc ? " " : "\n");
  }

  if (watch_seconds == 0)
    return run (command, line);
  for (;;) {
    if (isatty (STDOUT_FILENO))
      fputs ("\033[H\033[2J", stdout);  /* clear the screen, as watch(1) */
    run (command, line);
    sleep (watch_seconds);
  }
}
