/* cswap: cswap-fuse — the store served as one file, MOUNTPOINT/swap.
 *
 *   cswap-fuse --size 4G /run/cswap
 *   losetup --direct-io=on --show -f /run/cswap/swap
 *
 * This file reads the command line, checks the mount point, makes the
 * store, mounts, and serves until the file system is unmounted or a
 * SIGTERM/SIGINT arrives while the file is not swap (stop-signals.h: the
 * signals are refused while it is); it then prints the stats line and
 * frees everything.  It serves through one of two transports (transport=,
 * cswap-fuse(8) TRANSPORTS): libfuse's multithreaded loop over fuse-ops.c
 * (classic), or FUSE over io_uring without libfuse's loop
 * (fuse-raw-serve.c).  The file's rules are device.c's either way.
 *
 * The device options are the nbdkit plugin's (options.c is shared), taken
 * as --key=value, --key value or -o key=value; the keys are read from
 * options_help, so an option added there is accepted here at once.  Other
 * -o options go to FUSE as mount options.
 *
 * Everything that can fail runs before fuse_daemonize(), so that errors
 * still reach the terminal, and the cheap checks (arguments, mount point)
 * run before the store is made.  The store, the control socket and the
 * threads come and go as in the nbdkit plugin (daemon-life.h); the mount
 * and the transport are this file's.
 *
 * Locking: none.  main() is single-threaded until serving starts, and
 * the serving threads (libfuse's workers, or fuse-raw-serve.c's, all
 * started after fuse_daemonize()) run only the transport and device.c;
 * the control thread (control/server.c, also started after
 * fuse_daemonize()) uses only the store and the ladder (ladder-follow.h,
 * whose follower thread it starts and stops).  On the io_uring path, INIT is
 * read and answered and the rings are made before fuse_daemonize(), with
 * no thread yet.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "config-file.h"
#include "daemon-life.h"
#include "daemon-log.h"
#include "fuse-ops.h"
#include "fuse-raw-serve.h"
#include "fuse-uring.h"
#include "ladder-follow.h"
#include "options.h"
#include "parse.h"
#include "stop-signals.h"
#include "swap-users.h"

#define PROGRAM_NAME "cswap-fuse"

/* Always on: a name that says what is mounted, and the kernel checking
 * the file's 0600 mode, which matters once someone adds -o allow_other.
 */
#define DEFAULT_MOUNT_OPTIONS "-ofsname=cswap,subtype=cswap,default_permissions"

#define MAX_WORKER_THREADS 1000

/* Threads serving with read()/write() when io_uring was asked for but the
 * kernel refused the ring after INIT (--threads overrides).
 */
#define DEFAULT_RAW_FALLBACK_THREADS 4

/* What the command line says besides FUSE's own options (-f, -d, -s,
 * -o clone_fd, …), which fuse_parse_cmdline() reads afterwards.
 */
struct command_line {
  struct cswap_options device;
  const char *mountpoint;
  struct cswap_service service; /* --config's service keys */
  bool config_given;
  unsigned max_threads;         /* 0: libfuse's default or -o max_threads */
};

/* fuse_opt templates for the device options, made from options_help: for
 * each key, "--key " (libfuse matches it against "--key=value" and, with
 * the next argument, "--key value") and "key=" (inside -o).  The template
 * key is the option's index in names[].
 */
#define MAX_DEVICE_OPTIONS 32
#define MAX_OPTION_NAME 32

enum {
  KEY_THREADS = MAX_DEVICE_OPTIONS,
  KEY_CONFIG,
};

struct option_templates {
  size_t count;
  char names[MAX_DEVICE_OPTIONS][MAX_OPTION_NAME];
  char long_forms[MAX_DEVICE_OPTIONS][MAX_OPTION_NAME + 3];
  char o_forms[MAX_DEVICE_OPTIONS][MAX_OPTION_NAME + 1];
  struct fuse_opt opts[2 * MAX_DEVICE_OPTIONS + 5];
};

static void
make_option_templates (struct option_templates *t)
{
  size_t n = 0;

  for (const char *line = options_help; *line; ) {
    size_t name_len = strcspn (line, "=\n");
    const char *end = strchr (line, '\n');

    if (line[name_len] == '=' && name_len < MAX_OPTION_NAME
        && t->count < MAX_DEVICE_OPTIONS) {
      size_t i = t->count++;

      memcpy (t->names[i], line, name_len);
      t->names[i][name_len] = '\0';
      snprintf (t->long_forms[i], sizeof t->long_forms[i], "--%.*s ",
                (int) name_len, line);
      snprintf (t->o_forms[i], sizeof t->o_forms[i], "%.*s=",
                (int) name_len, line);
      t->opts[n++] = (struct fuse_opt) FUSE_OPT_KEY (t->long_forms[i], i);
      t->opts[n++] = (struct fuse_opt) FUSE_OPT_KEY (t->o_forms[i], i);
    }
    line = end ? end + 1 : line + strlen (line);
  }
  t->opts[n++] = (struct fuse_opt) FUSE_OPT_KEY ("--threads ", KEY_THREADS);
  t->opts[n++] = (struct fuse_opt) FUSE_OPT_KEY ("--config ", KEY_CONFIG);
  /* libfuse's own long options, left for fuse_parse_cmdline(). */
  t->opts[n++] = (struct fuse_opt) FUSE_OPT_KEY ("--help", FUSE_OPT_KEY_KEEP);
  t->opts[n++] = (struct fuse_opt) FUSE_OPT_KEY ("--version",
                                                 FUSE_OPT_KEY_KEEP);
  t->opts[n] = (struct fuse_opt) FUSE_OPT_END;
}


static struct option_templates templates;

/* The value in ARG for option NAME: ARG is "--NAME=VALUE", "--NAMEVALUE"
 * (libfuse joins "--NAME VALUE" so), or "NAME=VALUE" from -o.
 */
static const char *
option_value (const char *arg, const char *name)
{
  const char *rest = arg + strlen (name);

  if (arg[0] == '-')
    rest += 2;
  return *rest == '=' ? rest + 1 : rest;
}

/* Whether ARG, matched by the template of option KEY, is really a longer
 * option's: libfuse matches "--backing " against every argument that
 * starts with "--backing" and calls us once for each template that
 * matches, so "--backing-size=64M" comes here as backing too, and would
 * set it to "-size=64M".  The longer option's own call takes it.
 */
static bool
belongs_to_longer_option (const char *arg, int key)
{
  size_t len = strlen (templates.names[key]);

  if (strncmp (arg, "--", 2) != 0)
    return false;               /* -o key=value: libfuse matched up to '=' */
  for (size_t i = 0; i < templates.count; i++)
    if (strlen (templates.names[i]) > len
        && strncmp (arg + 2, templates.names[i], strlen (templates.names[i])) == 0)
      return true;
  return false;
}

static int
parse_argument (void *data, const char *arg, int key,
                struct fuse_args *outargs)
{
  struct command_line *cl = data;
  const char *why = NULL;
  int64_t number;

  (void) outargs;
  switch (key) {
  case FUSE_OPT_KEY_NONOPT:
    if (cl->mountpoint) {
      fprintf (stderr, "%s: %s: only one mount point can be given\n",
               PROGRAM_NAME, arg);
      return -1;
    }
    cl->mountpoint = arg;
    return 0;
  case FUSE_OPT_KEY_OPT:
    if (strncmp (arg, "--", 2) == 0) {
      fprintf (stderr, "%s: %s: unknown option (see --help)\n",
               PROGRAM_NAME, arg);
      return -1;
    }
    return 1;                   /* a FUSE option */
  case KEY_THREADS:
    if (parse_int64 (option_value (arg, "threads"), 1, MAX_WORKER_THREADS,
                     &number, &why) == -1) {
      fprintf (stderr, "%s: --threads: %s\n", PROGRAM_NAME, why);
      return -1;
    }
    cl->max_threads = number;
    return 0;
  case KEY_CONFIG:
    /* Read in place: options before --config are overridden by the
     * file, options after it override the file.
     */
    if (config_file_read (option_value (arg, "config"), &cl->device,
                          &cl->service, NULL, &why) == -1) {
      fprintf (stderr, "%s: %s\n", PROGRAM_NAME, why);
      return -1;
    }
    cl->config_given = true;
    return 0;
  default:
    if (belongs_to_longer_option (arg, key))
      return 0;
    if (options_set (&cl->device, templates.names[key],
                     option_value (arg, templates.names[key]), &why) == -1) {
      fprintf (stderr, "%s: %s\n", PROGRAM_NAME, why);
      return -1;
    }
    return 0;
  }
}

static void
usage (void)
{
  printf ("Usage: %s [OPTIONS] MOUNTPOINT\n"
          "Serves a compressed swap device as the file MOUNTPOINT/swap;\n"
          "`losetup --direct-io=on --show -f MOUNTPOINT/swap` makes it a "
          "block device.\n\n"
          "Device options, as --key=value, --key value or -o key=value:\n",
          PROGRAM_NAME);
  options_print_help ();
  printf ("\n%s options:\n"
          "    --threads=N            Most worker threads "
          "(default: libfuse's max_threads)\n"
          "    --config=FILE          Device options from FILE and its drop-ins\n"
          "                           (cswap.conf(5)); options after it\n"
          "                           override the files, and their\n"
          "                           mountpoint is the default\n"
          "    --check-config FILE    Check FILE and its drop-ins, print the\n"
          "                           merged result and ok, exit 0 (or 1)\n"
          "    --swap-users MOUNTPOINT  Print the swap devices over\n"
          "                           MOUNTPOINT/swap, exit 0 (or 1: none)\n",
          PROGRAM_NAME);
  fuse_cmdline_help ();
  fuse_lowlevel_help ();
}

/* A missing mount point, a file, or a directory something is already
 * mounted on, each named plainly (libfuse's own messages are less so).
 */
static int
check_mountpoint (const char *mountpoint)
{
  CLEANUP_FREE char *parent_path = NULL;
  struct stat st, parent;

  if (stat (mountpoint, &st) == -1) {
    fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, mountpoint);
    return -1;
  }
  if (!S_ISDIR (st.st_mode)) {
    fprintf (stderr, "%s: %s: %s\n", PROGRAM_NAME, mountpoint,
             strerror (ENOTDIR));
    return -1;
  }
  if (asprintf (&parent_path, "%s/..", mountpoint) == -1) {
    fprintf (stderr, "%s: asprintf: %m\n", PROGRAM_NAME);
    return -1;
  }
  if (stat (parent_path, &parent) == -1) {
    fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, parent_path);
    return -1;
  }
  if (st.st_dev != parent.st_dev) {
    fprintf (stderr, "%s: %s: already a mount point\n", PROGRAM_NAME,
             mountpoint);
    return -1;
  }
  return 0;
}

/* MOUNTPOINT resolved into DIRECTORY (an absolute path without symbolic
 * links, PATH_MAX bytes), and DIRECTORY/swap into PATH, as the kernel names
 * a loop device's backing file.  The mount is made and unmade by
 * DIRECTORY: fuse_daemonize() changes to "/" even in the foreground, and
 * libfuse unmounts by the path it mounted, so a relative mount point
 * would be left mounted, dead, at exit.
 */
static int
resolve_mountpoint (const char *mountpoint, char *directory, char *path)
{
  if (realpath (mountpoint, directory) == NULL) {
    fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, mountpoint);
    return -1;
  }
  if (snprintf (path, PATH_MAX, "%s/" DEVICE_SWAP_NAME, directory)
      >= PATH_MAX) {
    fprintf (stderr, "%s: %s: %s\n", PROGRAM_NAME, mountpoint,
             strerror (ENAMETOOLONG));
    return -1;
  }
  return 0;
}

static void
print_device (const char *device, void *arg)
{
  (void) arg;
  printf ("%s\n", device);
}

/* cswap-fuse --swap-users MOUNTPOINT: the swap devices over
 * MOUNTPOINT/swap, by the rule SIGTERM is refused by (swap-users.h), one a
 * line; exit 0 if there is one, 1 if none, 2 on a usage error.
 */
static int
list_swap_users (int argc, char *argv[])
{
  char swap_file[PATH_MAX];

  if (argc != 3) {
    fprintf (stderr, "%s: usage: --swap-users MOUNTPOINT\n", PROGRAM_NAME);
    return 2;
  }
  /* The mount point as given, unresolved, if it cannot be resolved: the
   * mount may be in another mount namespace, or its daemon dead.
   */
  if (realpath (argv[2], swap_file) == NULL)
    snprintf (swap_file, sizeof swap_file, "%s", argv[2]);
  if (strlen (swap_file) + sizeof "/" DEVICE_SWAP_NAME > sizeof swap_file) {
    fprintf (stderr, "%s: %s: %s\n", PROGRAM_NAME, argv[2],
             strerror (ENAMETOOLONG));
    return 2;
  }
  strcat (swap_file, "/" DEVICE_SWAP_NAME);
  return swap_users_list (swap_file, print_device, NULL) > 0 ? 0 : 1;
}

/* The classic transport: libfuse's loop.  Returns 0 once the file system
 * is unmounted or a signal stopped the loop, or -1 on error.
 */
static int
serve_classic (struct fuse_session *session, const struct fuse_cmdline_opts *fuse,
       unsigned max_threads)
{
  struct fuse_loop_config *config;
  int r;

  daemon_log ("%s: transport: classic\n", PROGRAM_NAME);
  if (fuse->singlethread)
    r = fuse_session_loop (session);
  else {
    config = fuse_loop_cfg_create ();
    if (config == NULL) {
      daemon_log ("%s: fuse_loop_cfg_create failed\n", PROGRAM_NAME);
      return -1;
    }
    fuse_loop_cfg_set_clone_fd (config, fuse->clone_fd);
    /* UINT_MAX means -o max_idle_threads was not given: keep libfuse's
     * default (idle threads are never ended), which 3.14 would otherwise
     * log as an invalid value.
     */
    if (fuse->max_idle_threads != UINT_MAX)
      fuse_loop_cfg_set_idle_threads (config, fuse->max_idle_threads);
    fuse_loop_cfg_set_max_threads (config,
                                   max_threads ? max_threads
                                               : fuse->max_threads);
    r = fuse_session_loop_mt (session, config);
    fuse_loop_cfg_destroy (config);
  }
  /* A positive result is the number of the signal that stopped the loop:
   * a clean stop.
   */
  if (r < 0) {
    daemon_log ("%s: %s\n", PROGRAM_NAME, strerror (-r));
    return -1;
  }
  return 0;
}

/* Whether to serve without libfuse's loop (io_uring, fuse-raw-serve.h):
 * 1 yes, 0 no (classic), -1 after printing why transport=uring cannot be.
 */
static int
choose_raw_transport (enum fuse_transport_choice choice)
{
  const char *why;

  switch (choice) {
  case TRANSPORT_CLASSIC:
    return 0;
  case TRANSPORT_AUTO:
    /* The raw server even without io_uring: its read()/write() threads
     * are all started up front with their buffers, where libfuse's loop
     * makes a thread (an mmap of its stack) when every one is busy,
     * which is when memory is shortest: under whole-machine pressure that
     * mmap waits for the address-space lock behind a thread that waits
     * for reclaim, which waits for this daemon (doc/design.md, "Staying
     * alive under memory pressure").
     */
    return 1;
  case TRANSPORT_URING:
    if (fuse_uring_enabled (&why))
      return 1;
    fprintf (stderr, "%s: transport=uring: %s\n", PROGRAM_NAME, why);
    return -1;
  }
  return 0;
}

static bool
session_exited (void *session)
{
  return fuse_session_exited (session);
}

/* libfuse's own messages (fuse_log), said the way ours are: its worker
 * threads serve the file under the classic transport, and must not wait
 * on stderr (daemon-log.h).  Its default writes every level to stderr,
 * and so does this.
 */
static void
say_libfuse_message (enum fuse_log_level level, const char *fmt, va_list ap)
{
  (void) level;
  daemon_log_v (fmt, ap);
}

/* cswap-fuse --check-config FILE: the whole check, nothing started; the
 * merged result and where each key came from, then ok.
 */
static int
check_config_file (int argc, char *argv[])
{
  struct config_origins origins;
  struct cswap_options options;
  const char *path = argv[1] + strlen ("--check-config"), *why;

  if (*path == '=')
    path++;
  else if (argc == 3)
    path = argv[2];
  if (*path == '\0' || argc > 3 || (argv[1][14] == '=' && argc != 2)) {
    fprintf (stderr, "%s: usage: --check-config FILE\n", PROGRAM_NAME);
    return EXIT_FAILURE;
  }
  options_init (&options);
  config_origins_init (&origins);
  if (config_file_load (path, &options, NULL, &origins, &why) == -1) {
    fprintf (stderr, "%s: %s\n", PROGRAM_NAME, why);
    config_origins_free (&origins);
    return EXIT_FAILURE;
  }
  config_origins_print (stdout, &origins, &options);
  config_origins_free (&origins);
  printf ("ok\n");
  return EXIT_SUCCESS;
}

int
main (int argc, char *argv[])
{
  struct fuse_args args = FUSE_ARGS_INIT (argc, argv);
  struct fuse_cmdline_opts fuse = { 0 };
  struct command_line cl = { 0 };
  struct device device = { 0 };
  struct fuse_session *session = NULL;
  struct raw_server *raw_server = NULL;
  struct ladder *ladder = NULL;
  struct daemon_life life = { .name = PROGRAM_NAME };
  bool mounted = false, handling_signals = false;
  sigset_t signals_before;
  int status = EXIT_FAILURE, raw;
  const char *why;
  char mount_dir[PATH_MAX], swap_file[PATH_MAX];

  if (argc >= 2 && (strcmp (argv[1], "--check-config") == 0
                    || strncmp (argv[1], "--check-config=", 15) == 0))
    return check_config_file (argc, argv);
  if (argc >= 2 && strcmp (argv[1], "--swap-users") == 0)
    return list_swap_users (argc, argv);
  fuse_set_log_func (say_libfuse_message);
  options_init (&cl.device);
  config_service_init (&cl.service);
  make_option_templates (&templates);
  /* fuse_opt_parse() leaves ARGS a copy that can grow; the defaults go
   * first so that the user's -o can override them.
   */
  if (fuse_opt_parse (&args, &cl, templates.opts, parse_argument) == -1
      || fuse_opt_insert_arg (&args, 1, DEFAULT_MOUNT_OPTIONS) == -1
      || fuse_parse_cmdline (&args, &fuse) == -1)
    goto out;
  if (fuse.show_help) {
    usage ();
    status = EXIT_SUCCESS;
    goto out;
  }
  if (fuse.show_version) {
    printf ("%s %s\n", PROGRAM_NAME, CSWAP_VERSION);
    fflush (stdout);            /* libfuse runs fusermount3 to print its own */
    fuse_lowlevel_version ();
    status = EXIT_SUCCESS;
    goto out;
  }
  if (cl.mountpoint == NULL && cl.config_given)
    cl.mountpoint = cl.service.mountpoint;
  if (cl.mountpoint == NULL) {
    fprintf (stderr, "%s: no mount point given (see --help)\n", PROGRAM_NAME);
    goto out;
  }
  if (options_finish (&cl.device, &why) == -1) {
    fprintf (stderr, "%s: %s\n", PROGRAM_NAME, why);
    goto out;
  }
  if (check_mountpoint (cl.mountpoint) == -1
      || resolve_mountpoint (cl.mountpoint, mount_dir, swap_file) == -1)
    goto out;
  raw = choose_raw_transport (cl.device.transport);
  if (raw == -1)
    goto out;

  device.owner_uid = getuid ();
  device.owner_gid = getgid ();
  clock_gettime (CLOCK_REALTIME, &device.mount_time);
  /* Rejects unknown FUSE options, naming them. */
  session = fuse_session_new (&args, &fuse_device_ops, sizeof fuse_device_ops,
                              &device);
  if (session == NULL)
    goto out;
  /* The store and the control socket; fuse_daemonize()'s child inherits
   * them, and the core dump settings.
   */
  if (daemon_prepare (&life, &cl.device) == -1)
    goto out;
  device.blockdev.store = life.store;
  device.blockdev.size_bytes = store_size (life.store);
  /* The ladder's follower, idle until `cswap up` hands it the steps over
   * the control socket (ladder-online = follow); its thread starts then.
   */
  ladder = ladder_create (swap_file, life.store);
  if (ladder == NULL) {
    fprintf (stderr, "%s: the ladder's follower: %m\n", PROGRAM_NAME);
    goto out;
  }
  control_server_extend (life.control, ladder_control_extension (ladder));
  device.blockdev.ladder = ladder;
  if (stop_signals_install (session, swap_file) == -1)
    goto out;
  handling_signals = true;
  stop_signals_hold (&signals_before);
  mounted = fuse_session_mount (session, mount_dir) == 0;
  stop_signals_release (&signals_before);
  if (!mounted)
    goto out;
  /* Before fuse_daemonize(), so that its errors reach the terminal; its
   * threads start in raw_server_run().
   */
  if (raw) {
    raw_server = raw_server_open (fuse_session_fd (session), &device,
                                  cl.device.transport == TRANSPORT_URING,
                                  cl.max_threads ? cl.max_threads
                                                 : DEFAULT_RAW_FALLBACK_THREADS);
    if (raw_server == NULL)
      goto out;
  }
  if (fuse_daemonize (fuse.foreground) == -1)
    goto out;
  /* After fuse_daemonize(): neither threads nor memory locks survive its
   * fork.  The file is mounted and the loop about to serve: READY=1.
   */
  if (daemon_start_after_fork (&life) == -1)
    goto out;

  if (raw_server ? raw_server_run (raw_server, session_exited, session) == 0
                 : serve_classic (session, &fuse, cl.max_threads) == 0)
    status = EXIT_SUCCESS;

 out:
  /* No swapon of the follower's may race the end; one in flight reads
   * its header through the request threads, so this comes first.
   */
  ladder_shut (ladder);
  /* No thread serves the file any more: the store can go, before the
   * mount, which nothing reads now.
   */
  raw_server_close (raw_server);
  daemon_stop (&life);
  ladder_destroy (ladder);
  device.blockdev = (struct blockdev) { .store = NULL };
  /* Ignored from here: not even fusermount3's wait in the unmount may
   * be cut short.
   */
  if (handling_signals)
    stop_signals_ignore ();
  if (mounted)
    fuse_session_unmount (session);
  if (session)
    fuse_session_destroy (session);
  free (fuse.mountpoint);
  fuse_opt_free_args (&args);
  return status;
}
