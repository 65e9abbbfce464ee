/* cswap: cswap-ublk — the store served as a ublk block device.
 *
 *   modprobe ublk_drv
 *   cswap-ublk --size 4G &         # prints /dev/ublkbN once it serves
 *   mkswap /dev/ublkbN && swapon --discard=pages /dev/ublkbN
 *
 * ublk (drivers/block/ublk_drv.c, Linux 6.0 and later; enabled in Debian
 * from 6.12) is a block device whose requests a userspace server answers
 * through io_uring: a request reaches the queue's thread as task work,
 * and its answer completes it from the same io_uring_enter, with no loop
 * device, no FUSE hop and no socket in between (doc/design.md, "ublk").
 *
 * This file reads the command line, makes the store, adds the device,
 * starts the queues (ublk-queue.h) and the disk, and serves until a
 * SIGTERM or SIGINT arrives while the disk is not swap (while it is, they
 * are refused with a line that names it: the pages swapped to it would be
 * lost), or until the queues end of themselves (someone deleted the
 * device).  It then stops the disk, the queues, deletes the device and
 * prints the stats line.  The device options are the other front ends'
 * (options.c), as --key=value, --key value, -o key=value or key=value.
 *
 * Everything that can fail runs before the first queue thread starts, so
 * that a failure undoes cleanly and its message reaches the terminal.
 *
 * Locking: none.  main() is single-threaded until the queues start; the
 * queue threads use only the device (device.h: thread-safe), the control
 * thread only the store.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "config-file.h"
#include "daemon-life.h"
#include "device.h"
#include "options.h"
#include "parse.h"
#include "program-message.h"
#include "ublk-control.h"
#include "ublk-queue.h"

#define PROGRAM_NAME "cswap-ublk"

/* Tags per queue: while its thread serves one request the driver can
 * queue the others, and the thread then takes them in one round.  Each
 * holds a buffer of the largest request, resident once touched; the
 * FUSE rings measured 8 as enough (fuse-uring.c).
 */
#define DEFAULT_DEPTH 8
#define MAX_DEPTH 128
#define MAX_QUEUES 64

/* How long the driver's /dev/ublkcN may take to appear (devtmpfs makes
 * it at once; udev may rename or chmod it a moment later).
 */
#define CHAR_DEVICE_WAIT_MS 5000

struct command_line {
  struct cswap_options device;
  struct cswap_service service;
  unsigned queues;              /* 0: one per CPU */
  unsigned depth;
  int64_t dev_id;               /* -1: the driver picks */
};

__attribute__ ((format (printf, 1, 2)))
static void
report_error (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  program_message_v (PROGRAM_NAME, fmt, ap);
  va_end (ap);
}

static void
usage (void)
{
  printf ("Usage: %s [OPTIONS]\n"
          "Serves a compressed swap device as a ublk block device, "
          "/dev/ublkbN,\nprinted on standard output once it serves.\n\n"
          "Device options, as --key=value, --key value, -o key=value or "
          "key=value:\n", PROGRAM_NAME);
  for (const char *line = options_help; *line; ) {
    int len = strcspn (line, "\n");

    printf ("    %s%.*s\n", line[0] == ' ' ? "  " : "--", len, line);
    line += len + (line[len] == '\n');
  }
  printf ("\n%s options:\n"
          "    --config=FILE     Device options from FILE and its drop-ins\n"
          "                      (cswap.conf(5)); options after it override\n"
          "    --queues=N        Queues, each with a thread bound to its CPU\n"
          "                      (default: one per CPU)\n"
          "    --depth=N         Requests in flight per queue (default %d)\n"
          "    --id=N            The device number N: /dev/ublkbN (default:\n"
          "                      the driver's choice)\n"
          "    --features        Print what the kernel's ublk driver has, exit\n",
          PROGRAM_NAME, DEFAULT_DEPTH);
}

/* One option KEY with VALUE; 0, or -1 after saying why. */
static int
take_option (struct command_line *cl, const char *key, const char *value)
{
  const char *why;
  int64_t number;

  if (strcmp (key, "config") == 0) {
    if (config_file_read (value, &cl->device, &cl->service, NULL, &why) == -1)
      goto bad;
    return 0;
  }
  if (strcmp (key, "queues") == 0 || strcmp (key, "depth") == 0
      || strcmp (key, "id") == 0) {
    int64_t max = key[0] == 'q' ? MAX_QUEUES : key[0] == 'd' ? MAX_DEPTH : 1 << 20;
    if (parse_int64 (value, key[0] == 'i' ? 0 : 1, max, &number, &why) == -1) {
      fprintf (stderr, "%s: --%s: %s\n", PROGRAM_NAME, key, why);
      return -1;
    }
    if (key[0] == 'q')
      cl->queues = number;
    else if (key[0] == 'd')
      cl->depth = number;
    else
      cl->dev_id = number;
    return 0;
  }
  if (options_set (&cl->device, key, value, &why) == 0)
    return 0;
 bad:
  fprintf (stderr, "%s: %s\n", PROGRAM_NAME, why);
  return -1;
}

/* The command line into CL: 0, 1 (--help or --version done), or -1. */
static int
parse_command_line (int argc, char *argv[], struct command_line *cl)
{
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *value;
    char key[64];
    size_t key_len;

    if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
      usage ();
      return 1;
    }
    if (strcmp (arg, "--version") == 0) {
      printf ("%s %s\n", PROGRAM_NAME, CSWAP_VERSION);
      return 1;
    }
    if (strcmp (arg, "-o") == 0) {
      if (++i == argc) {
        fprintf (stderr, "%s: -o needs KEY=VALUE\n", PROGRAM_NAME);
        return -1;
      }
      arg = argv[i];
    }
    else if (strncmp (arg, "--", 2) == 0)
      arg += 2;
    else if (strchr (arg, '=') == NULL) {
      fprintf (stderr, "%s: %s: not an option (see --help)\n", PROGRAM_NAME,
               arg);
      return -1;
    }
    key_len = strcspn (arg, "=");
    if (key_len == 0 || key_len >= sizeof key) {
      fprintf (stderr, "%s: %s: not an option (see --help)\n", PROGRAM_NAME,
               argv[i]);
      return -1;
    }
    memcpy (key, arg, key_len);
    key[key_len] = '\0';
    if (arg[key_len] == '=')
      value = arg + key_len + 1;
    else if (argv[i] != arg && strncmp (argv[i], "--", 2) == 0 && i + 1 < argc)
      value = argv[++i];
    else {
      fprintf (stderr, "%s: %s needs a value\n", PROGRAM_NAME, argv[i]);
      return -1;
    }
    if (take_option (cl, key, value) == -1)
      return -1;
  }
  return 0;
}

/* cswap-ublk --features: what the running kernel's driver has, as
 * key=value lines; exit 0, or 1 where there is no driver.
 */
static int
print_features (void)
{
  const char *why;
  struct ublk_control *control = ublk_control_open (&why);
  uint64_t features;

  if (control == NULL) {
    fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, why);
    return EXIT_FAILURE;
  }
  features = ublk_control_features (control);
  printf ("ublk_features=0x%llx\n", (unsigned long long) features);
  printf ("ublk_user_copy=%s\n", features & UBLK_F_USER_COPY ? "yes" : "no");
  printf ("ublk_user_recovery=%s\n",
          features & UBLK_F_USER_RECOVERY ? "yes" : "no");
  printf ("ublk_ioctl_encode=%s\n",
          features & UBLK_F_CMD_IOCTL_ENCODE ? "yes" : "no");
  ublk_control_close (control);
  return EXIT_SUCCESS;
}

/* The parameters of a device of SIZE_BYTES: 4 KiB logical blocks (a
 * swap page is one; no request is ever part of a page, and an unaligned
 * one is refused by the block layer), requests up to DEVICE_MAX_IO_BYTES,
 * discard and write-zeroes of any length in pages, no volatile cache.
 */
static struct ublk_params
device_params (uint64_t size_bytes)
{
  return (struct ublk_params) {
    .len = sizeof (struct ublk_params),
    .types = UBLK_PARAM_TYPE_BASIC | UBLK_PARAM_TYPE_DISCARD,
    .basic = {
      .logical_bs_shift = 12,
      .physical_bs_shift = 12,
      .io_opt_shift = 12,
      .io_min_shift = 12,
      .max_sectors = DEVICE_MAX_IO_BYTES >> 9,
      .dev_sectors = size_bytes >> 9,
    },
    .discard = {
      .discard_granularity = CSWAP_PAGE_SIZE,
      .max_discard_sectors = UINT32_MAX >> 9 & ~7u,
      .max_write_zeroes_sectors = UINT32_MAX >> 9 & ~7u,
      .max_discard_segments = 1,
    },
  };
}

/* /dev/ublkcDEV_ID, opened once it exists. */
static int
open_char_device (uint32_t dev_id)
{
  char path[64];
  int fd = -1;

  snprintf (path, sizeof path, UBLK_CHAR_PATH_FORMAT, dev_id);
  for (int waited_ms = 0; waited_ms <= CHAR_DEVICE_WAIT_MS; waited_ms += 10) {
    fd = open (path, O_RDWR | O_CLOEXEC);
    if (fd >= 0 || errno != ENOENT)
      break;
    nanosleep (&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
  }
  if (fd == -1)
    fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, path);
  return fd;
}

/* Whether the kernel swaps to BLOCK_PATH (a line of /proc/swaps names
 * it).
 */
static bool
is_swap (const char *block_path)
{
  FILE *f = fopen ("/proc/swaps", "re");
  char line[512];
  size_t len = strlen (block_path);
  bool found = false;

  if (f == NULL)
    return false;
  while (!found && fgets (line, sizeof line, f))
    found = strncmp (line, block_path, len) == 0
            && (line[len] == ' ' || line[len] == '\t');
  fclose (f);
  return found;
}

/* Waits for a stop: a SIGTERM or SIGINT while BLOCK_PATH is not swap
 * (refused, with a line, while it is), or the queues ending (ENDED_FD).
 * SIGHUP is logged and ignored.
 */
static void
wait_for_stop (int signal_fd, int ended_fd, const char *block_path)
{
  struct pollfd fds[2] = {
    { .fd = signal_fd, .events = POLLIN },
    { .fd = ended_fd, .events = POLLIN },
  };

  for (;;) {
    struct signalfd_siginfo info;

    if (poll (fds, 2, -1) == -1) {
      if (errno == EINTR)
        continue;
      fprintf (stderr, "%s: poll: %m\n", PROGRAM_NAME);
      return;
    }
    if (fds[1].revents) {
      fprintf (stderr, "%s: %s: the device's queues ended (deleted?): "
               "stopping\n", PROGRAM_NAME, block_path);
      return;
    }
    if (read (signal_fd, &info, sizeof info) != sizeof info)
      continue;
    if (info.ssi_signo == SIGHUP) {
      fprintf (stderr, "%s: SIGHUP ignored (settings change through "
               "cswapctl)\n", PROGRAM_NAME);
      continue;
    }
    if (is_swap (block_path)) {
      fprintf (stderr, "%s: %s refused: %s is swap; swapoff it first\n",
               PROGRAM_NAME, strsignal (info.ssi_signo), block_path);
      continue;
    }
    return;
  }
}

int
main (int argc, char *argv[])
{
  struct command_line cl = { .depth = DEFAULT_DEPTH, .dev_id = -1 };
  struct daemon_life life = { .name = PROGRAM_NAME, .error = report_error };
  struct device device = { 0 };
  struct ublk_control *control = NULL;
  struct ublk_queues *queues = NULL;
  struct ublk_dev_info info;
  struct ublk_params params;
  bool added = false, started = false;
  int status = EXIT_FAILURE, char_fd = -1, signal_fd = -1, ended_fd = -1, r;
  const char *why;
  char block_path[64];
  sigset_t stop_signals;

  if (argc == 2 && strcmp (argv[1], "--features") == 0)
    return print_features ();
  options_init (&cl.device);
  config_service_init (&cl.service);
  r = parse_command_line (argc, argv, &cl);
  if (r != 0)
    return r == 1 ? EXIT_SUCCESS : EXIT_FAILURE;
  if (options_finish (&cl.device, &why) == -1) {
    fprintf (stderr, "%s: %s\n", PROGRAM_NAME, why);
    return EXIT_FAILURE;
  }
  if (cl.queues == 0) {
    long cpus = sysconf (_SC_NPROCESSORS_CONF);
    cl.queues = cpus < 1 ? 1 : cpus > MAX_QUEUES ? MAX_QUEUES : cpus;
  }

  control = ublk_control_open (&why);
  if (control == NULL) {
    if (errno == ENOENT)
      fprintf (stderr, "%s: no %s: this kernel's ublk driver is not loaded "
               "(modprobe ublk_drv) or not built (CONFIG_BLK_DEV_UBLK)\n",
               PROGRAM_NAME, UBLK_CONTROL_PATH);
    else
      fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, why);
    return EXIT_FAILURE;
  }
  /* The signals are read from a signalfd by main() alone: blocked here,
   * before any thread exists, so that every thread inherits the mask.
   */
  sigemptyset (&stop_signals);
  sigaddset (&stop_signals, SIGTERM);
  sigaddset (&stop_signals, SIGINT);
  sigaddset (&stop_signals, SIGHUP);
  sigprocmask (SIG_BLOCK, &stop_signals, NULL);
  signal (SIGPIPE, SIG_IGN);
  signal_fd = signalfd (-1, &stop_signals, SFD_CLOEXEC);
  ended_fd = eventfd (0, EFD_CLOEXEC);
  if (signal_fd == -1 || ended_fd == -1) {
    fprintf (stderr, "%s: signalfd or eventfd: %m\n", PROGRAM_NAME);
    goto out;
  }

  if (daemon_prepare (&life, &cl.device) == -1)
    goto out;
  device.store = life.store;
  device.owner_uid = getuid ();
  device.owner_gid = getgid ();

  info = (struct ublk_dev_info) {
    .nr_hw_queues = cl.queues,
    .queue_depth = cl.depth,
    .max_io_buf_bytes = DEVICE_MAX_IO_BYTES,
    .dev_id = (uint32_t) cl.dev_id,
    .flags = ublk_control_features (control) & UBLK_F_CMD_IOCTL_ENCODE,
  };
  r = ublk_control_add (control, &info);
  if (r < 0) {
    fprintf (stderr, "%s: ADD_DEV: %s\n", PROGRAM_NAME, strerror (-r));
    goto out;
  }
  added = true;
  snprintf (block_path, sizeof block_path, UBLK_BLOCK_PATH_FORMAT, info.dev_id);
  params = device_params (store_size (life.store));
  r = ublk_control_set_params (control, info.dev_id, &params);
  if (r < 0) {
    fprintf (stderr, "%s: SET_PARAMS: %s\n", PROGRAM_NAME, strerror (-r));
    goto out;
  }
  char_fd = open_char_device (info.dev_id);
  if (char_fd == -1)
    goto out;

  /* No fork: serving starts here.  Memory locked, the store's and the
   * control threads, READY=1 (the disk follows within a moment).
   */
  if (daemon_start_after_fork (&life) == -1)
    goto out;
  queues = ublk_queues_start (char_fd, info.dev_id, info.nr_hw_queues,
                              info.queue_depth, info.max_io_buf_bytes,
                              &device, ended_fd,
                              ublk_control_features (control)
                              & UBLK_F_CMD_IOCTL_ENCODE, &why);
  if (queues == NULL) {
    fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, why);
    goto out;
  }
  r = ublk_control_start (control, info.dev_id, getpid ());
  if (r < 0) {
    fprintf (stderr, "%s: START_DEV: %s\n", PROGRAM_NAME, strerror (-r));
    goto out;
  }
  started = true;
  fprintf (stderr, "%s: serving %s: %u queues of %u, requests up to %u KiB\n",
           PROGRAM_NAME, block_path, info.nr_hw_queues, info.queue_depth,
           info.max_io_buf_bytes / 1024);
  printf ("%s\n", block_path);
  fflush (stdout);
  wait_for_stop (signal_fd, ended_fd, block_path);
  status = EXIT_SUCCESS;

 out:
  /* The disk goes first, while the queues still serve what it flushes;
   * then the queues, whose commands the driver has aborted; then the
   * device.
   */
  if (started && (r = ublk_control_stop (control, info.dev_id)) < 0)
    fprintf (stderr, "%s: STOP_DEV: %s\n", PROGRAM_NAME, strerror (-r));
  ublk_queues_stop (queues);
  if (char_fd != -1)
    close (char_fd);
  if (added && (r = ublk_control_delete (control, info.dev_id)) < 0)
    fprintf (stderr, "%s: DEL_DEV: %s\n", PROGRAM_NAME, strerror (-r));
  ublk_control_close (control);
  daemon_stop (&life);
  if (signal_fd != -1)
    close (signal_fd);
  if (ended_fd != -1)
    close (ended_fd);
  return status;
}
