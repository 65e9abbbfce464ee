/* cswapctl: the command-line client of a cswap daemon's control socket.
 *
 *   cswapctl [--socket PATH]... [OPTIONS] [COMMAND [ARGS]]
 *
 * Sends one command line, reads the one-line JSON reply, and prints it:
 * `stats` (the command when none is given) as a device listing like
 * zramctl's, one row per socket (ctl-columns.c), `status` as a paragraph
 * (ctl-status.c), the other commands as tables or "key value" lines; or
 * the reply as it came (--json).  The protocol and the reply fields are
 * in cswapctl(8).
 *
 * Exit status: 0 ok, 1 the daemon replied an error, 2 usage error,
 * 3 cannot connect.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cleanup.h"
#include "cswapctl.h"
#include "parse.h"

/* The largest reply the daemon sends is far smaller (CONTROL_REPLY_MAX). */
#define MAX_REPLY_BYTES (16 * 1024 * 1024)
/* A command line, its newline and a NUL: within the daemon's limit
 * (CONTROL_LINE_MAX).
 */
#define LINE_BYTES 4096

static bool print_json, exact_bytes;
static struct table_style table_style;
static struct column_list listing_columns;

/* What a command's output can be shaped by, besides --json. */
enum shapes {
  TABLE = 1,                    /* --raw, --noheadings */
  COLUMNS = 2,                  /* --output, --output-all */
  NO_JSON = 4,                  /* not --json: cswapctl's own text */
  SOCKETS = 8,                  /* more than one --socket */
};

struct command {
  const char *name;
  /* The line sent for it: NULL for its name and arguments. */
  const char *request;
  int min_args, max_args;
  unsigned shapes;
  void (*print) (const struct target *targets, size_t count);
};

static void
print_stats (const struct target *targets, size_t count)
{
  struct listing_style style = {
    .table = table_style,
    .bytes = exact_bytes || table_style.raw,
    .columns = &listing_columns,
  };

  print_listing (targets, count, &style);
}

static void
print_classes (const struct target *targets, size_t count)
{
  static const struct table_column headers[] = {
    { "CLASS", false }, { "SIZE", false }, { "PAGES", false },
    { "OBJS", false }, { "HUGE", true }, { "EMPTY", false },
    { "<10%", false }, { "10%", false }, { "20%", false }, { "30%", false },
    { "40%", false }, { "50%", false }, { "60%", false }, { "70%", false },
    { "80%", false }, { "90%", false }, { "FULL", false },
    { "ALLOCATED", false }, { "USED", false }, { "PAGES-USED", false },
    { "FREEABLE", false },
  };
  static const char *const shape[] = {
    "index", "size", "pages_per_zspage", "objects_per_zspage",
  };
  static const char *const counts[] = {
    "objects_allocated", "objects_used", "pages_used", "pages_freeable",
  };
  json_object *classes = member (targets[0].reply, "classes");
  size_t n = json_object_array_length (classes);
  struct table t;

  (void) count;
  table_init (&t, headers, sizeof headers / sizeof headers[0]);
  for (size_t i = 0; i < n; i++) {
    json_object *k = json_object_array_get_idx (classes, i);
    json_object *zspages = member (k, "zspages");

    for (size_t m = 0; m < sizeof shape / sizeof shape[0]; m++)
      table_cell (&t, "%llu", (unsigned long long) member_uint (k, shape[m]));
    table_cell (&t, "%s", json_object_get_boolean (member (k, "huge"))
                          ? "Y" : "N");
    for (size_t g = 0; g < 12; g++)
      table_cell (&t, "%llu", (unsigned long long)
                  json_object_get_uint64 (json_object_array_get_idx (zspages,
                                                                     g)));
    for (size_t m = 0; m < sizeof counts / sizeof counts[0]; m++)
      table_cell (&t, "%llu", (unsigned long long) member_uint (k, counts[m]));
  }
  table_print (&t, &table_style);
}

static void
print_compact (const struct target *targets, size_t count)
{
  static const struct table_column headers[] = {
    { "PAGES-FREED", false }, { "OBJECTS-MOVED", false },
  };
  json_object *r = targets[0].reply;
  struct table t;

  (void) count;
  table_init (&t, headers, 2);
  table_cell (&t, "%llu", (unsigned long long) member_uint (r, "pages_freed"));
  table_cell (&t, "%llu",
              (unsigned long long) member_uint (r, "objects_moved"));
  table_print (&t, &table_style);
}

/* Every member of O but "ok", one "key value" line each: for get, set,
 * recompress and writeback.
 */
static void
print_object_members (json_object *o)
{
  json_object_object_foreach (o, key, value) {
    if (strcmp (key, "ok") == 0)
      continue;
    if (json_object_is_type (value, json_type_object))
      print_object_members (value);
    else
      printf ("%s %s\n", key, json_object_get_string (value));
  }
}

static void
print_members (const struct target *targets, size_t count)
{
  (void) count;
  print_object_members (targets[0].reply);
}

static void
print_metrics (const struct target *targets, size_t count)
{
  (void) count;
  fputs (json_object_get_string (member (targets[0].reply, "metrics")),
         stdout);
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
print_help (const struct target *targets, size_t count)
{
  (void) count;
  printf ("Commands:\n");
  print_help_rows (member (targets[0].reply, "commands"), "name", "args");
  printf ("Settings (get KEY, set KEY VALUE):\n");
  print_help_rows (member (targets[0].reply, "settings"), "key", "values");
}

/* `ladder`: the steps as a table, after a line on the follower (unless
 * --raw or --noheadings); `ladder add|follow|stop`: their members.
 */
static void
print_ladder (const struct target *targets, size_t count)
{
  static const struct table_column headers[] = {
    { "STEP", false }, { "DEVICE", true }, { "OFFSET", false },
    { "SIZE", false }, { "PRIO", false }, { "ONLINE", true },
    { "USED", false },
  };
  json_object *r = targets[0].reply, *steps;
  bool bytes = exact_bytes || table_style.raw;
  enum size_style style = bytes ? SIZE_BYTES : SIZE_SHORT;
  char a[SIZE_TEXT_MAX], b[SIZE_TEXT_MAX];
  struct table t;

  (void) count;
  if (!json_object_object_get_ex (r, "steps", &steps)
      || !json_object_is_type (steps, json_type_array)) {
    print_members (targets, count);
    return;
  }
  if (!table_style.raw && !table_style.no_headings) {
    if (json_object_get_boolean (member (r, "following"))) {
      format_size (a, member_uint (r, "headroom_bytes"), style);
      format_size (b, member_uint (r, "free_bytes"), style);
      printf ("following the swap in use: headroom %s, %s free online", a,
              b);
      if (member_uint (r, "floor_bytes") > 0) {
        format_size (a, member_uint (r, "floor_bytes"), style);
        printf (", at least %s online", a);
      }
      putchar ('\n');
    }
    else if (json_object_get_boolean (member (r, "stood_aside")))
      printf ("not following: a step was swapped off by another process "
              "(cswap up resumes it)\n");
    else
      printf ("not following (ladder-online = all, or not handed a "
              "ladder)\n");
  }
  table_init (&t, headers, sizeof headers / sizeof headers[0]);
  for (size_t i = 0; i < json_object_array_length (steps); i++) {
    json_object *step = json_object_array_get_idx (steps, i);
    bool online = json_object_get_boolean (member (step, "online"));

    table_cell (&t, "%zu", i);
    table_cell (&t, "%s", json_object_get_string (member (step, "device")));
    format_size (a, member_uint (step, "offset_bytes"), style);
    table_cell (&t, "%s", a);
    format_size (a, member_uint (step, "length_bytes"), style);
    table_cell (&t, "%s", a);
    table_cell (&t, "%d", json_object_get_int (member (step, "priority")));
    table_cell (&t, "%s", online ? "yes" : json_object_get_boolean
                (member (step, "resting")) ? "no (resting)" : "no");
    format_size (a, member_uint (step, "used_bytes"), style);
    table_cell (&t, "%s", online ? a : "-");
  }
  table_print (&t, &table_style);
}

/* `exports [NAME [drop]]`: the nbdkit plugin's exports, one row each. */
static void
print_exports (const struct target *targets, size_t count)
{
  static const struct table_column headers[] = {
    { "EXPORT", true }, { "SIZE", false }, { "QUOTA", false },
    { "PAGES", false }, { "DATA", false }, { "READS", false },
    { "WRITES", false }, { "REFUSED", false }, { "CLIENTS", false },
  };
  json_object *list;
  enum size_style style = exact_bytes || table_style.raw ? SIZE_BYTES
    : SIZE_SHORT;
  char size[SIZE_TEXT_MAX];
  struct table t;

  if (!json_object_object_get_ex (targets[0].reply, "exports", &list)
      || !json_object_is_type (list, json_type_array)) {
    print_members (targets, count);
    return;
  }
  table_init (&t, headers, sizeof headers / sizeof headers[0]);
  for (size_t i = 0; i < json_object_array_length (list); i++) {
    json_object *e = json_object_array_get_idx (list, i);

    table_cell (&t, "%s", json_object_get_string (member (e, "name")));
    format_size (size, member_uint (e, "size_bytes"), style);
    table_cell (&t, "%s", size);
    format_size (size, member_uint (e, "limit_bytes"), style);
    table_cell (&t, "%s", member_uint (e, "limit_bytes") ? size : "-");
    table_cell (&t, "%" PRIu64, member_uint (e, "pages_stored"));
    format_size (size, member_uint (e, "compressed_bytes"), style);
    table_cell (&t, "%s", size);
    table_cell (&t, "%" PRIu64, member_uint (e, "reads"));
    table_cell (&t, "%" PRIu64, member_uint (e, "writes"));
    table_cell (&t, "%" PRIu64, member_uint (e, "failed_writes"));
    table_cell (&t, "%" PRIu64, member_uint (e, "clients"));
  }
  table_print (&t, &table_style);
}

static const struct command commands[] = {
  { "stats", NULL, 0, 0, TABLE | COLUMNS | SOCKETS, print_stats },
  { "status", "stats", 0, 0, NO_JSON | SOCKETS, print_status },
  { "classes", NULL, 0, 0, TABLE, print_classes },
  { "compact", NULL, 0, 0, TABLE, print_compact },
  { "recompress", NULL, 0, 0, 0, print_members },
  { "get", NULL, 0, 1, 0, print_members },
  { "set", NULL, 2, 2, 0, print_members },
  { "writeback", NULL, 0, 7, 0, print_members },
  { "metrics", NULL, 0, 0, 0, print_metrics },
  { "ladder", NULL, 0, 5, TABLE, print_ladder },
  { "exports", NULL, 0, 2, TABLE, print_exports },
  { "help", NULL, 0, 0, 0, print_help },
};

static void
usage (FILE *f)
{
  fprintf (f,
           "Usage: %s [OPTIONS] [COMMAND [ARGS]]\n"
           "Talks to a cswap daemon's control socket.\n\n"
           "Commands:\n"
           "  stats                 the device listing, one row per socket "
           "(default)\n"
           "  status                a paragraph: swap, memory, disk, "
           "warnings\n"
           "  classes               the allocator's per-class table\n"
           "  compact               compact the allocator now\n"
           "  recompress            one recompression pass now\n"
           "  writeback [ARGS]      write pages back to the backing file\n"
           "  get [KEY]             one setting, or all\n"
           "  set KEY VALUE         change a setting\n"
           "  metrics               Prometheus text format\n"
           "  ladder                the device ladder's steps, which are "
           "online\n"
           "  exports [NAME [drop]] the nbdkit plugin's exports: size, quota, "
           "data;\n"
           "                        drop frees NAME's pages (no client "
           "connected)\n"
           "  help                  the daemon's commands and settings\n\n"
           "Options:\n"
           "  -s, --socket PATH     the socket; again for more (stats, "
           "status);\n"
           "                        default: the cswap service's, else\n"
           "                        /run/cswap/cswap.sock\n"
           "  -o, --output LIST     the listing's columns, e.g. "
           "NAME,MEM-NOW,DATA\n"
           "                        (+LIST: the default ones and LIST; "
           "help: every column)\n"
           "      --output-all      every column\n"
           "  -b, --bytes           exact byte counts, not K/M/G\n"
           "      --raw             tables for scripts: one space between "
           "cells, bytes\n"
           "  -n, --noheadings      tables without their header line\n"
           "  -j, --json            print the daemon's JSON reply as it is\n"
           "  -w, --watch SECONDS   run the command again every SECONDS\n"
           "  -h, --help            this text\n"
           "  -V, --version         the version\n\n"
           "Exit status: 0 ok, 1 the daemon replied an error, 2 usage "
           "error,\n"
           "3 cannot connect.\n",
           PROGRAM_NAME);
}

static int
connect_daemon (const char *socket_path)
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

/* Sends LINE to SOCKET_PATH and returns the reply line, NUL-terminated, to free. */
static char *
exchange (const char *socket_path, const char *line)
{
  int fd = connect_daemon (socket_path);
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

/* Sends LINE to every target and prints the replies.  Returns the exit
 * status.
 */
static int
run (const struct command *command, const char *line, struct target *targets,
     size_t count)
{
  char **texts = calloc (count, sizeof *texts);
  int status = EXIT_SUCCESS;

  if (texts == NULL)
    die (EXIT_FAILURE, "calloc: %m");
  for (size_t i = 0; i < count; i++) {
    json_object *ok, *error;

    texts[i] = exchange (targets[i].socket_path, line);
    targets[i].reply = json_tokener_parse (texts[i]);
    if (targets[i].reply == NULL
        || !json_object_object_get_ex (targets[i].reply, "ok", &ok))
      die (EXIT_DAEMON_ERROR, "%s: the daemon's reply is not a JSON reply: %s",
           targets[i].socket_path, texts[i]);
    if (print_json)
      fputs (texts[i], stdout);
    if (!json_object_get_boolean (ok)) {
      status = EXIT_DAEMON_ERROR;
      if (print_json)
        continue;
      if (json_object_object_get_ex (targets[i].reply, "error", &error))
        fprintf (stderr, "%s: daemon: %s\n", PROGRAM_NAME,
                 json_object_get_string (error));
      else
        fprintf (stderr, "%s: daemon: an error without a message\n",
                 PROGRAM_NAME);
    }
    else
      locate_device (&targets[i]);
  }
  if (!print_json && status == EXIT_SUCCESS)
    command->print (targets, count);
  fflush (stdout);
  for (size_t i = 0; i < count; i++) {
    json_object_put (targets[i].reply);
    targets[i].reply = NULL;
    free (texts[i]);
  }
  free (texts);
  return status;
}

static const struct command *
find_command (const char *name)
{
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp (commands[i].name, name) == 0)
      return &commands[i];
  die (EXIT_USAGE, "%s: unknown command (see --help)", name);
}

/* The line for COMMAND and its words WORDS[0..COUNT), the command first. */
static void
command_line (const struct command *command, char *const *words, int count,
              char line[LINE_BYTES])
{
  line[0] = '\0';
  if (command->request) {
    snprintf (line, LINE_BYTES, "%s\n", command->request);
    return;
  }
  /* Words go on one line, separated by spaces: a word cannot hold one. */
  for (int i = 0; i < count; i++) {
    if (words[i][0] == '\0' || strpbrk (words[i], " \t\r\n"))
      die (EXIT_USAGE, "'%s': an argument cannot be empty or hold spaces",
           words[i]);
    if (strlen (line) + strlen (words[i]) + 2 >= LINE_BYTES)
      die (EXIT_USAGE, "the command is too long");
    strcat (line, words[i]);
    strcat (line, i + 1 < count ? " " : "\n");
  }
}

/* Refuses the options that do not shape COMMAND's output. */
static void
check_shapes (const struct command *command, bool columns_given,
              size_t socket_count)
{
  if (columns_given && !(command->shapes & COLUMNS))
    die (EXIT_USAGE, "--output and --output-all are for the device listing "
         "(stats), not %s", command->name);
  if ((table_style.raw || table_style.no_headings)
      && !(command->shapes & TABLE))
    die (EXIT_USAGE, "--raw and --noheadings are for tables (stats, classes, "
         "compact, ladder, exports), not %s", command->name);
  if (print_json && (command->shapes & NO_JSON))
    die (EXIT_USAGE, "%s prints no JSON: use --json stats", command->name);
  if (print_json && (columns_given || table_style.raw
                     || table_style.no_headings))
    die (EXIT_USAGE, "--json prints the reply as it is: no --output, --raw "
         "or --noheadings with it");
  if (socket_count > 1 && !(command->shapes & SOCKETS))
    die (EXIT_USAGE, "%s talks to one socket at a time", command->name);
}

enum { OPT_OUTPUT_ALL = 256, OPT_RAW };

int
main (int argc, char *argv[])
{
  static const struct option long_options[] = {
    { "socket", required_argument, NULL, 's' },
    { "json", no_argument, NULL, 'j' },
    { "bytes", no_argument, NULL, 'b' },
    { "output", required_argument, NULL, 'o' },
    { "output-all", no_argument, NULL, OPT_OUTPUT_ALL },
    { "raw", no_argument, NULL, OPT_RAW },
    { "noheadings", no_argument, NULL, 'n' },
    { "watch", required_argument, NULL, 'w' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
  };
  const struct command *command;
  CLEANUP_FREE struct target *targets = calloc (argc, sizeof *targets);
  size_t target_count = 0;
  bool columns_given = false;
  char line[LINE_BYTES];
  int64_t watch_seconds = 0;
  const char *why;
  int opt;

  if (targets == NULL)
    die (EXIT_FAILURE, "calloc: %m");
  columns_default (&listing_columns);
  while ((opt = getopt_long (argc, argv, "s:jbo:nw:hV", long_options, NULL))
         != -1) {
    switch (opt) {
    case 's':
      targets[target_count++].socket_path = optarg;
      break;
    case 'j':
      print_json = true;
      break;
    case 'b':
      exact_bytes = true;
      break;
    case 'o':
      if (strcmp (optarg, "help") == 0) {
        columns_help (stdout);
        return EXIT_SUCCESS;
      }
      columns_parse (optarg, &listing_columns);
      columns_given = true;
      break;
    case OPT_OUTPUT_ALL:
      columns_all (&listing_columns);
      columns_given = true;
      break;
    case OPT_RAW:
      table_style.raw = true;
      break;
    case 'n':
      table_style.no_headings = true;
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
    command = find_command ("stats");
    command_line (command, (char *[]) { "stats" }, 1, line);
  }
  else {
    int nargs = argc - optind - 1;

    command = find_command (argv[optind]);
    if (nargs < command->min_args || nargs > command->max_args)
      die (EXIT_USAGE, "%s: wrong number of arguments (see --help)",
           command->name);
    command_line (command, argv + optind, argc - optind, line);
  }
  if (target_count == 0)
    targets[target_count++].socket_path = default_socket ();
  check_shapes (command, columns_given, target_count);

  if (watch_seconds == 0)
    return run (command, line, targets, target_count);
  for (;;) {
    if (isatty (STDOUT_FILENO))
      fputs ("\033[H\033[2J", stdout);  /* clear the screen, as watch(1) */
    run (command, line, targets, target_count);
    sleep (watch_seconds);
  }
}
