/* cswap: cswap-ublk — the store served as a ublk block device.
 *
 *   modprobe ublk_drv
 *   cswap-ublk --size 4G &         # prints /dev/ublkbN once it serves
 *   mkswap /dev/ublkbN && swapon --discard=pages /dev/ublkbN
 *
 * With --windows OFFSET:LENGTH,… it serves one device per window of the
 * store instead, in that order: the steps of `cswap up`'s ladder
 * (scripts/cswap/ladder.sh), as loop devices over windows of the FUSE
 * file are, sharing one pool.  --device-list FILE writes their paths
 * there, one a line, once all serve (`cswap up` waits for it).
 *
 * Devices are added with user recovery where the driver has it, so that
 * a killed cswap-ublk's devices outlive it: --recover ID,… (one per
 * window, same windows) takes them over instead of adding new ones.  The
 * store outlives it too (store-segment.h: its memory is a locked System
 * V segment, found by the first device's number), and the new daemon
 * adopts it: every page the kernel was told is written reads back as it
 * was.  Where it cannot (a store with a backing file, which does not
 * persist; a segment gone or made by another configuration), its store
 * is new and empty, and every page of a device taken over starts lost: a
 * read of one fails with EIO until the kernel writes, discards or zeroes
 * it (lost-pages.h; doc/design.md, "ublk").
 *
 * ublk (drivers/block/ublk_drv.c, Linux 6.0 and later; enabled in Debian
 * from 6.12) is a block device whose requests a userspace server answers
 * through io_uring: a request reaches the queue's thread as task work,
 * and its answer completes it from the same io_uring_enter, with no loop
 * device, no FUSE hop and no socket in between (doc/design.md, "ublk").
 *
 * This file reads the command line, makes the store, adds the devices,
 * starts the queues (ublk-queue.h: a thread per CPU serving every
 * device) and the disks, and serves until a SIGTERM or SIGINT arrives
 * while no disk is swap (while one is, they are refused with a line that
 * names it: the pages swapped to it would be lost), or until a device's
 * queues end of themselves (someone deleted the device, or a queue
 * failed).  It then stops the disks, the queues, deletes the devices and
 * prints the stats line; but where a disk is swap then (or after an
 * error once one started), it exits leaving them all for recovery
 * instead (leave_swap_for_recovery).
 * The device options are the other front ends' (options.c), as
 * --key=value, --key value, -o key=value or key=value.
 *
 * Everything that can fail runs before the first queue thread starts, so
 * that a failure undoes cleanly and its message reaches the terminal.
 *
 * Locking: none here.  main() is single-threaded until the queues start;
 * the queue threads use only their window (blockdev.h: thread-safe), the
 * control thread the store, the ladder (its own lock: ladder-follow.h)
 * and the lost-page counts (atomics), which is why the lost-page maps are
 * freed only after daemon_stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
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
#include "daemon-log.h"
#include "blockdev.h"
#include "options.h"
#include "ladder-follow.h"
#include "lost-pages.h"
#include "lost-pages-numbers.h"
#include "parse.h"
#include "proc-swaps.h"
#include "small-file.h"
#include "store-segment.h"
#include "ublk-control.h"
#include "ublk-leftovers.h"
#include "ublk-queue.h"
#include "ublk-standby.h"

#define PROGRAM_NAME "cswap-ublk"

/* Tags per queue: while its thread serves one request the driver can
 * queue the others, and the thread then takes them in one round.  A tag
 * costs 24 bytes of descriptor and no buffer (user copy: ublk-queue.h).
 */
#define DEFAULT_DEPTH 16
#define MAX_DEPTH 128
#define MAX_QUEUES 64

/* How long the driver's /dev/ublkcN may take to appear (devtmpfs makes
 * it at once; udev may rename or chmod it a moment later).
 */
#define CHAR_DEVICE_WAIT_MS 5000

/* The ladder's most windows (scripts/cswap/ladder.sh, MAX_LADDER_WINDOWS). */
#define MAX_WINDOWS 16
_Static_assert (MAX_WINDOWS <= UBLK_QUEUES_MAX_DEVICES,
                "one set of queues serves every window");

/* One ublk device: a window of the store. */
struct served_device {
  uint64_t offset_bytes, length_bytes;
  struct ublk_dev_info info;
  bool added, started;
  dev_t disk;                   /* the started disk's MAJ:MIN; 0: unknown */
  int char_fd;
  struct blockdev window;       /* the request layer over the window */
  char path[64];                /* /dev/ublkbN */
  bool recovering;              /* taken over: END_USER_RECOVERY, not START_DEV */
  struct lost_pages *lost;      /* the dead daemon's pages; NULL: none */
};

struct command_line {
  struct cswap_options device;
  struct cswap_service service;
  unsigned queues;              /* 0: one per CPU */
  unsigned depth;
  int64_t dev_id;               /* -1: the driver picks (the first's) */
  const char *windows;          /* --windows, or NULL: the whole store */
  const char *device_list;      /* --device-list FILE, or NULL */
  const char *recover;          /* --recover ID,…: devices to take over */
  bool print_size;
  bool no_standby;              /* --no-standby */
  bool discard_store;           /* --discard-store, with --recover */
};

static void
usage (void)
{
  printf ("Usage: %s [OPTIONS]\n"
          "Serves a compressed swap device as a ublk block device, "
          "/dev/ublkbN,\nprinted on standard output once it serves.\n\n"
          "Device options, as --key=value, --key value, -o key=value or "
          "key=value:\n", PROGRAM_NAME);
  options_print_help ();
  printf ("\n%s options:\n"
          "    --config=FILE     Device options from FILE and its drop-ins\n"
          "                      (cswap.conf(5)); options after it override\n"
          "    --queues=N        Queues, each with a thread bound to its CPU\n"
          "                      (default: one per CPU)\n"
          "    --depth=N         Requests in flight per queue (default %d)\n"
          "    --id=N            The device number N: /dev/ublkbN (default:\n"
          "                      the driver's choice; windows take N, N+1, …)\n"
          "    --windows=OFFSET:LENGTH,…  One device per window of the store\n"
          "                      (the ladder's steps), in that order\n"
          "    --device-list=FILE  Write the devices' paths to FILE once they\n"
          "                      serve, one a line\n"
          "    --recover=ID,…    Take over the devices a killed cswap-ublk left\n"
          "                      (one per window, same windows) instead of\n"
          "                      adding new ones; their old pages read as EIO\n"
          "    --discard-store   With --recover: a store that cannot be adopted\n"
          "                      (made for another size or by another version)\n"
          "                      is removed, its pages lost, instead of refused\n"
          "    --no-standby      No standby process: a killed daemon's devices\n"
          "                      wait for cswap up (or --recover)\n"
          "    --print-size      Print the store's size in bytes, exit\n"
          "    --features        Print what the kernel's ublk driver has, exit\n"
          "    --delete-dead N…  Delete the devices N… a killed cswap-ublk\n"
          "                      left (never a served one, nor swap), exit\n",
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
  if (strcmp (key, "windows") == 0) {
    cl->windows = value;
    return 0;
  }
  if (strcmp (key, "device-list") == 0) {
    cl->device_list = value;
    return 0;
  }
  if (strcmp (key, "recover") == 0) {
    cl->recover = value;
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
    if (strcmp (arg, "--print-size") == 0) {
      cl->print_size = true;
      continue;
    }
    if (strcmp (arg, "--no-standby") == 0) {
      cl->no_standby = true;
      continue;
    }
    if (strcmp (arg, "--discard-store") == 0) {
      cl->discard_store = true;
      continue;
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

/* The user-recovery flags devices are added with, from the driver's
 * FEATURES (doc/design.md, "ublk": why this order).  A store that
 * outlives the daemon (STORE_PERSISTS) wants I/O to wait for a new
 * server, and the requests the dead one held sent again (REISSUE): the
 * new daemon has every page.  A store that dies with it has none of
 * them: where the driver can fail I/O while no server runs (FAIL_IO,
 * 6.13), it does, which for swap loses nothing more than waiting would
 * (the kernel keeps a page whose swap-out failed in memory, dirty, and
 * writes it again later), and nothing waits for a server nobody starts.
 * Without recovery the driver deletes the disk under the swap area,
 * which then stays until the next boot.
 */
static uint64_t
recovery_flags (uint64_t features, bool store_persists)
{
  if (!(features & UBLK_F_USER_RECOVERY))
    return 0;
  /* A store that outlives the daemon loses nothing while I/O waits for
   * the next one, where failing it would fail swap-ins (SIGBUS) of pages
   * the new daemon still has.
   */
  if (store_persists)
    return UBLK_F_USER_RECOVERY
           | (features & UBLK_F_USER_RECOVERY_REISSUE);
  if (features & UBLK_F_USER_RECOVERY_FAIL_IO)
    return UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_FAIL_IO;
  return UBLK_F_USER_RECOVERY
         | (features & UBLK_F_USER_RECOVERY_REISSUE);
}

/* What a device added with FLAGS does with I/O while no server runs. */
static const char *
recovery_mode (uint64_t flags)
{
  if (!(flags & UBLK_F_USER_RECOVERY))
    return "none";
  return flags & UBLK_F_USER_RECOVERY_FAIL_IO ? "fail-io" : "queue";
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
  printf ("ublk_user_recovery_reissue=%s\n",
          features & UBLK_F_USER_RECOVERY_REISSUE ? "yes" : "no");
  printf ("ublk_user_recovery_fail_io=%s\n",
          features & UBLK_F_USER_RECOVERY_FAIL_IO ? "yes" : "no");
  printf ("ublk_recovery_mode=%s\n",
          recovery_mode (recovery_flags (features, true)));
  printf ("ublk_recovery_mode_with_backing_file=%s\n",
          recovery_mode (recovery_flags (features, false)));
  printf ("ublk_ioctl_encode=%s\n",
          features & UBLK_F_CMD_IOCTL_ENCODE ? "yes" : "no");
  ublk_control_close (control);
  return EXIT_SUCCESS;
}

/* The parameters of a device of SIZE_BYTES: 4 KiB logical blocks (a
 * swap page is one; no request is ever part of a page, and an unaligned
 * one is refused by the block layer), requests up to
 * BLOCKDEV_MAX_IO_BYTES, discard and write-zeroes of any length in
 * pages, no volatile cache.
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
      .max_sectors = BLOCKDEV_MAX_IO_BYTES >> 9,
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

/* The step of every wait for the driver below. */
static void
wait_10ms (void)
{
  nanosleep (&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
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
    /* EBUSY: a dead server's descriptor not yet released. */
    if (fd >= 0 || (errno != ENOENT && errno != EBUSY))
      break;
    wait_10ms ();
  }
  if (fd == -1)
    fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, path);
  return fd;
}

/* The windows in SPEC ("OFFSET:LENGTH,…", sizes as size= takes them)
 * into DEVICES over a store of STORE_BYTES; with no SPEC, one window, the
 * whole store.  Returns how many, or -1 after saying why.
 */
static int
parse_windows (const char *spec, uint64_t store_bytes,
               struct served_device devices[MAX_WINDOWS])
{
  char copy[1024], *save = NULL;
  int count = 0;

  if (spec == NULL) {
    devices[0] = (struct served_device) { .length_bytes = store_bytes };
    return 1;
  }
  if (strlen (spec) >= sizeof copy) {
    fprintf (stderr, "%s: --windows: too long\n", PROGRAM_NAME);
    return -1;
  }
  strcpy (copy, spec);
  for (char *w = strtok_r (copy, ",", &save); w; w = strtok_r (NULL, ",", &save)) {
    char *colon = strchr (w, ':');
    uint64_t offset, length;
    const char *why = "OFFSET:LENGTH expected";

    if (count == MAX_WINDOWS) {
      fprintf (stderr, "%s: --windows: more than %d\n", PROGRAM_NAME,
               MAX_WINDOWS);
      return -1;
    }
    if (colon == NULL)
      goto bad;
    *colon = '\0';
    if (parse_size (w, &offset, &why) == -1
        || parse_size (colon + 1, &length, &why) == -1)
      goto bad;
    why = "not whole pages, empty, or past the end of the store";
    if (offset % CSWAP_PAGE_SIZE || length % CSWAP_PAGE_SIZE || length == 0
        || offset > store_bytes || length > store_bytes - offset)
      goto bad;
    devices[count++] = (struct served_device) {
      .offset_bytes = offset, .length_bytes = length,
    };
    continue;
  bad:
    fprintf (stderr, "%s: --windows: %s%s%s: %s\n", PROGRAM_NAME, w,
             colon ? ":" : "", colon ? colon + 1 : "", why);
    return -1;
  }
  if (count == 0) {
    fprintf (stderr, "%s: --windows: none given\n", PROGRAM_NAME);
    return -1;
  }
  return count;
}

/* --recover's device numbers, one per window: 0, or -1 after saying why. */
static int
parse_recover_ids (const char *spec, uint32_t ids[MAX_WINDOWS], int count)
{
  char copy[256], *save = NULL;
  int n = 0;

  if (strlen (spec) >= sizeof copy) {
    fprintf (stderr, "%s: --recover: too long\n", PROGRAM_NAME);
    return -1;
  }
  strcpy (copy, spec);
  for (char *id = strtok_r (copy, ",", &save); id; id = strtok_r (NULL, ",", &save)) {
    int64_t number;
    const char *why;

    if (n == count) {
      n++;
      break;
    }
    if (parse_int64 (id, 0, UINT32_MAX - 1, &number, &why) == -1) {
      fprintf (stderr, "%s: --recover: %s: %s\n", PROGRAM_NAME, id, why);
      return -1;
    }
    ids[n++] = number;
  }
  if (n != count) {
    fprintf (stderr, "%s: --recover: %s: one device number per window "
             "(%d) expected\n", PROGRAM_NAME, spec, count);
    return -1;
  }
  return 0;
}

/* The device number of /dev/ublkbDEV_ID's disk, from sysfs (whatever
 * its nodes in /dev are called, or if they are gone); 0 if it has none.
 */
static dev_t
disk_number (uint32_t dev_id)
{
  char path[64], text[32];
  unsigned maj, min;

  snprintf (path, sizeof path, "/sys/block/ublkb%u/dev", dev_id);
  if (read_small_file (path, text, sizeof text) <= 0
      || sscanf (text, "%u:%u", &maj, &min) != 2)
    return 0;
  return makedev (maj, min);
}

struct swap_search {
  const struct served_device *devices;
  int count;
  const char *found;
};

static void
note_swap_area (const struct proc_swap_area *area, void *arg)
{
  struct swap_search *s = arg;

  for (int i = 0; i < s->count && s->found == NULL; i++)
    if (s->devices[i].started && area->rdev != 0
        && area->rdev == s->devices[i].disk)
      s->found = s->devices[i].path;
}

/* The first of the COUNT DEVICES whose disk is swap, or NULL.  An area
 * is matched by device number (proc-swaps.h), not by the name swapon was
 * given: a symlink or another node of the disk is the same swap.
 */
static const char *
swap_device (const struct served_device *devices, int count)
{
  struct swap_search s = { devices, count, NULL };

  proc_swaps_each (note_swap_area, &s);
  return s.found;
}

/* Waits for a stop: a SIGTERM or SIGINT while no device is swap
 * (refused, with a line, while one is), or the queues ending (ENDED_FD).
 * SIGHUP is logged and ignored.
 */
static void
wait_for_stop (int signal_fd, int ended_fd,
               const struct served_device *devices, int count)
{
  struct pollfd fds[2] = {
    { .fd = signal_fd, .events = POLLIN },
    { .fd = ended_fd, .events = POLLIN },
  };

  for (;;) {
    struct signalfd_siginfo info;
    const char *swap;

    if (poll (fds, 2, -1) == -1) {
      if (errno == EINTR)
        continue;
      fprintf (stderr, "%s: poll: %m\n", PROGRAM_NAME);
      return;
    }
    if (fds[1].revents) {
      fprintf (stderr, "%s: a device's queues ended (the device deleted, "
               "or a queue failed)\n", PROGRAM_NAME);
      return;
    }
    if (read (signal_fd, &info, sizeof info) != sizeof info)
      continue;
    if (info.ssi_signo == SIGHUP) {
      fprintf (stderr, "%s: SIGHUP ignored (settings change through "
               "cswapctl)\n", PROGRAM_NAME);
      continue;
    }
    swap = swap_device (devices, count);
    if (swap) {
      fprintf (stderr, "%s: %s refused: %s is swap; swapoff it first\n",
               PROGRAM_NAME, strsignal (info.ssi_signo), swap);
      continue;
    }
    return;
  }
}

/* Adds D as a ublk device (number DEV_ID, or the driver's choice at -1)
 * with its parameters and opens its char device: 0, or -1 after saying
 * why.
 */
static int
add_device (struct ublk_control *control, struct served_device *d,
            const struct command_line *cl, int64_t dev_id)
{
  struct ublk_params params;
  int r;

  d->char_fd = -1;
  d->info = (struct ublk_dev_info) {
    .nr_hw_queues = cl->queues,
    .queue_depth = cl->depth,
    .max_io_buf_bytes = BLOCKDEV_MAX_IO_BYTES,
    .dev_id = (uint32_t) dev_id,
    .flags = UBLK_F_USER_COPY
             | (ublk_control_features (control) & UBLK_F_CMD_IOCTL_ENCODE)
             | recovery_flags (ublk_control_features (control),
                               cl->device.store.persistence
                               != STORE_PRIVATE),
  };
  r = ublk_control_add (control, &d->info);
  if (r < 0) {
    fprintf (stderr, "%s: ADD_DEV: %s\n", PROGRAM_NAME, strerror (-r));
    return -1;
  }
  d->added = true;
  snprintf (d->path, sizeof d->path, UBLK_BLOCK_PATH_FORMAT, d->info.dev_id);
  params = device_params (d->length_bytes);
  r = ublk_control_set_params (control, d->info.dev_id, &params);
  if (r < 0) {
    fprintf (stderr, "%s: %s: SET_PARAMS: %s\n", PROGRAM_NAME, d->path,
             strerror (-r));
    return -1;
  }
  d->char_fd = open_char_device (d->info.dev_id);
  return d->char_fd == -1 ? -1 : 0;
}

/* How long a dead server's device may take to be ready for a new one:
 * the driver quiesces it, and releases the dead server's char device,
 * as the dead process's io_uring is torn down (work queued at its exit).
 */
#define RECOVERY_WAIT_MS 10000

/* Whether device INFO waits for a new server. */
static bool
waits_for_server (const struct ublk_dev_info *info)
{
  return info->state == UBLK_S_DEV_QUIESCED
         || info->state == UBLK_S_DEV_FAIL_IO;
}

/* D's lost pages, taken over with store STORE: those of its window in
 * the store's lost map (store.h) where it persists, none (no map) when
 * none is; all of them where it does not (a store with a backing file,
 * new at each take-over).  0, or -1 with errno.
 */
static int
lost_map (struct served_device *d, struct store *store)
{
  uint64_t first = d->offset_bytes / CSWAP_PAGE_SIZE;
  uint64_t pages = d->length_bytes / CSWAP_PAGE_SIZE, store_pages;
  _Atomic uint64_t *bits = store_lost_map (store, &store_pages);

  if (bits == NULL) {
    d->lost = lost_pages_create (pages);
    return d->lost ? 0 : -1;
  }
  d->lost = lost_pages_over (bits, first, pages);
  if (d->lost == NULL)
    return -1;
  if (lost_pages_left (d->lost) == 0) {
    lost_pages_destroy (d->lost);
    d->lost = NULL;
  }
  return 0;
}

/* Takes device DEV_ID over as D (its window set): checks it is a killed
 * cswap-ublk's device of D's size, starts its user recovery and opens
 * its char device; start_device ends the recovery.  Every page of it is
 * lost.  0, or -1 after saying why, the device left as it was found
 * (never stopped nor deleted: it may still be swap).
 */
static int
recover_device (struct ublk_control *control, struct served_device *d,
                uint32_t dev_id)
{
  struct ublk_params params;
  int r = 0;

  d->char_fd = -1;
  snprintf (d->path, sizeof d->path, UBLK_BLOCK_PATH_FORMAT, dev_id);
  /* Checked before the recovery starts, which cannot be undone.  EBUSY
   * is waited out as START_USER_RECOVERY's is below: a standby asks the
   * moment its server dies (ublk-standby.h).  (The EBUSY it met for 10 s
   * came through the control ring it shared with the server; with one of
   * its own it has not been seen.)
   */
  for (int waited_ms = 0;; waited_ms += 10) {
    r = ublk_control_get_info (control, dev_id, &d->info);
    if (r == 0)
      r = ublk_control_get_params (control, dev_id, &params);
    if (r != -EBUSY || waited_ms >= RECOVERY_WAIT_MS)
      break;
    wait_10ms ();
  }
  if (r < 0) {
    fprintf (stderr, "%s: %s: GET_DEV_INFO or GET_PARAMS: %s\n", PROGRAM_NAME,
             d->path, strerror (-r));
    return -1;
  }
  if ((params.basic.dev_sectors << 9) != d->length_bytes
      || params.basic.logical_bs_shift != 12
      || !(d->info.flags & UBLK_F_USER_COPY)) {
    fprintf (stderr, "%s: %s is not a cswap-ublk device of %llu bytes "
             "(its windows changed?): not taken over\n", PROGRAM_NAME,
             d->path, (unsigned long long) d->length_bytes);
    return -1;
  }
  for (int waited_ms = 0;; waited_ms += 10) {
    r = ublk_control_get_info (control, dev_id, &d->info);
    if (r < 0) {
      fprintf (stderr, "%s: %s: GET_DEV_INFO: %s\n", PROGRAM_NAME, d->path,
               strerror (-r));
      return -1;
    }
    if (!(d->info.flags & UBLK_F_USER_RECOVERY)) {
      fprintf (stderr, "%s: %s was added without user recovery: it cannot "
               "be taken over (cswap-ublk --delete-dead %u)\n", PROGRAM_NAME,
               d->path, dev_id);
      return -1;
    }
    if (waits_for_server (&d->info)) {
      r = ublk_control_start_recovery (control, dev_id);
      if (r != -EBUSY)
        break;
    }
    else if (d->info.state != UBLK_S_DEV_LIVE) {
      fprintf (stderr, "%s: %s is stopped (state %u), not waiting for a "
               "server: it cannot be taken over\n", PROGRAM_NAME, d->path,
               d->info.state);
      return -1;
    }
    else if (ublk_server_alive (d->info.ublksrv_pid)) {
      /* LIVE with its server alive; or dying, not yet quiesced. */
      if (waited_ms >= RECOVERY_WAIT_MS) {
        fprintf (stderr, "%s: %s is served (pid %d): not taken over\n",
                 PROGRAM_NAME, d->path, (int) d->info.ublksrv_pid);
        return -1;
      }
    }
    if (waited_ms >= RECOVERY_WAIT_MS) {
      r = -EBUSY;               /* never quiesced, or never released */
      break;
    }
    wait_10ms ();
  }
  if (r < 0) {
    fprintf (stderr, "%s: %s: START_USER_RECOVERY: %s\n", PROGRAM_NAME,
             d->path, strerror (-r));
    return -1;
  }
  if (lost_map (d, d->window.store) == -1) {
    fprintf (stderr, "%s: %s: the lost-page map: %m\n", PROGRAM_NAME, d->path);
    return -1;
  }
  d->window.lost = d->lost;
  d->recovering = true;
  d->char_fd = open_char_device (dev_id);
  return d->char_fd == -1 ? -1 : 0;
}

/* kernel.shm_rmid_forced=1 turns the store's persistence off: said at
 * every start, since nothing else would until a kill lost the pages.
 */
static void
warn_forced_removal (void)
{
  if (store_segment_forced_removal ())
    fprintf (stderr, "%s: warning: kernel.shm_rmid_forced=1: the kernel "
             "destroys the store's System V segment when this daemon dies, "
             "so a killed daemon's pages are lost (their reads fail with "
             "EIO) instead of taken over; sysctl kernel.shm_rmid_forced=0 "
             "keeps them\n", PROGRAM_NAME);
}

/* What became of the killed daemon's store, when taking over. */
static void
say_adoption (struct store *store)
{
  const struct store_adoption *adoption = store_adoption (store);

  if (adoption == NULL)
    return;
  if (adoption->adopted)
    fprintf (stderr, "%s: adopted the killed daemon's store: %llu pages, "
             "%llu lost\n", PROGRAM_NAME,
             (unsigned long long) adoption->pages,
             (unsigned long long) adoption->lost);
  if (adoption->adopted && adoption->kept_geometry[0])
    fprintf (stderr, "%s: with the store's own %s: it keeps the geometry "
             "it was made with; a store made new takes the configured "
             "one\n", PROGRAM_NAME, adoption->kept_geometry);
  else if (adoption->why)
    fprintf (stderr, "%s: the killed daemon's store cannot be adopted (%s): "
             "its pages are lost\n", PROGRAM_NAME, adoption->why);
}

/* With the devices served: where the killed daemon followed the swap in
 * use (ladder-online = follow), this one follows again as it did.
 */
static void
resume_ladder (struct ladder *ladder)
{
  char error[256];
  int steps = ladder_resume (ladder, error, sizeof error);

  if (steps > 0)
    fprintf (stderr, "%s: following the swap in use again, over %d steps, "
             "as the killed daemon did\n", PROGRAM_NAME, steps);
  else if (steps == -1)
    fprintf (stderr, "%s: the killed daemon followed the swap in use, and "
             "this one cannot (%s): the steps it swapped off stay off until "
             "`cswap up`\n", PROGRAM_NAME, error);
}

/* Starts the queues that serve the COUNT DEVICES, a thread per CPU for
 * all of them (ublk-queue.h): the queues, or NULL after saying why.
 */
static struct ublk_queues *
start_queues (struct ublk_control *control, struct served_device *devices,
              int count, int ended_fd)
{
  struct ublk_queue_device served[MAX_WINDOWS];
  struct ublk_queues *queues;
  const char *why;

  for (int i = 0; i < count; i++)
    served[i] = (struct ublk_queue_device) {
      .char_fd = devices[i].char_fd,
      .nr_queues = devices[i].info.nr_hw_queues,
      .depth = devices[i].info.queue_depth,
      .max_io_bytes = devices[i].info.max_io_buf_bytes,
      .window = &devices[i].window,
    };
  queues = ublk_queues_start (served, count, ended_fd,
                              ublk_control_features (control)
                              & UBLK_F_CMD_IOCTL_ENCODE, &why);
  if (queues == NULL)
    fprintf (stderr, "%s: the queues of %s%s: %s: %m\n", PROGRAM_NAME,
             devices[0].path, count > 1 ? " and the others" : "", why);
  return queues;
}

/* Starts D's disk, its queues served: 0, or -1 after saying why. */
static int
start_device (struct ublk_control *control, struct served_device *d)
{
  int r;

  if (d->recovering)
    r = ublk_control_end_recovery (control, d->info.dev_id, getpid ());
  else
    r = ublk_control_start (control, d->info.dev_id, getpid ());
  if (r < 0) {
    fprintf (stderr, "%s: %s: %s: %s\n", PROGRAM_NAME, d->path,
             d->recovering ? "END_USER_RECOVERY" : "START_DEV", strerror (-r));
    return -1;
  }
  /* Ours now: stopped and deleted when the daemon stops, unless it is
   * swap then (leave_swap_for_recovery).
   */
  d->added = d->started = true;
  d->disk = disk_number (d->info.dev_id);
  fprintf (stderr, "%s: %s %s: bytes %llu to %llu of the store, "
           "%u queues of %u, requests up to %u KiB, recovery %s\n",
           PROGRAM_NAME, d->recovering ? "took over" : "serving", d->path,
           (unsigned long long) d->offset_bytes,
           (unsigned long long) (d->offset_bytes + d->length_bytes),
           d->info.nr_hw_queues, d->info.queue_depth,
           d->info.max_io_buf_bytes / 1024, recovery_mode (d->info.flags));
  if (d->recovering && d->lost == NULL)
    fprintf (stderr, "%s: %s: every page of it is in the killed daemon's "
             "store, adopted\n", PROGRAM_NAME, d->path);
  else if (d->recovering)
    fprintf (stderr, "%s: %s: %llu of its pages were lost with the killed "
             "daemon: a read of one fails with EIO (its owner gets SIGBUS) "
             "until it is written again\n", PROGRAM_NAME, d->path,
             (unsigned long long) lost_pages_left (d->lost));
  return 0;
}

/* Stops D's disk, if this daemon started it, while the queues still
 * serve what it flushes; the driver then aborts its commands.
 */
static void
stop_disk (struct ublk_control *control, struct served_device *d)
{
  int r;

  if (d->started && (r = ublk_control_stop (control, d->info.dev_id)) < 0)
    fprintf (stderr, "%s: %s: STOP_DEV: %s\n", PROGRAM_NAME, d->path,
             strerror (-r));
  d->started = false;
}

/* Undoes what add_device did of D, once every disk is stopped and the
 * queues are (the driver deletes a device only when no ring holds its
 * char device).  False when the device stays (its DEL_DEV failed, or it
 * was never ours: a device being taken over is left as it was found).
 */
static bool
delete_device (struct ublk_control *control, struct served_device *d)
{
  bool deleted = false;
  int r;

  if (d->char_fd != -1)
    close (d->char_fd);
  d->char_fd = -1;
  if (d->added && (r = ublk_control_delete (control, d->info.dev_id)) < 0)
    fprintf (stderr, "%s: %s: DEL_DEV: %s\n", PROGRAM_NAME, d->path,
             strerror (-r));
  else
    deleted = d->added;
  d->added = false;
  /* The map itself goes after the control thread, which reads it. */
  if (d->lost)
    fprintf (stderr, "%s: %s: taken over from a killed daemon: "
             "lost_reads=%llu lost_pages_unwritten=%llu\n", PROGRAM_NAME,
             d->path, (unsigned long long) lost_pages_reads_refused (d->lost),
             (unsigned long long) lost_pages_left (d->lost));
  return deleted;
}

/* Called where the daemon cannot go on (an error after a disk started,
 * its queues ended or failed) or is stopping: if a disk it serves is swap,
 * it exits here, leaving every device as a killed daemon would, and says
 * so.  Never STOP_DEV nor DEL_DEV under swap: the kernel's swap area would
 * become "… (deleted)", every page swapped there lost, and the delete
 * would wait for ever for swap to let the disk go.
 *
 * With user recovery the driver holds the disks' I/O until a new server
 * ends their recovery, and the store (a System V segment, PERSISTS) is
 * left as it is: the standby (HAS_STANDBY: it takes this exit status,
 * UBLK_EXIT_LEFT_FOR_RECOVERY, as its server's death), `cswap up` or
 * --recover takes both over.  Without it there is no choice: no server
 * can take the disk over, and the driver fails its I/O and removes it as
 * this process ends, its pages lost; stopping it here would only add the
 * endless wait.  The exit comes while the queues still serve, so that the
 * messages can be written even where stderr is a file whose pages are in
 * that swap: the queue threads' own first (daemon-log.h: the ring written
 * out), then this one's.  Returns only when no disk is swap.
 */
static void
leave_swap_for_recovery (const struct served_device *devices, int count,
                         bool persists, bool has_standby)
{
  const char *swap = swap_device (devices, count);
  char ids[MAX_WINDOWS * 12] = "";
  size_t used = 0;

  if (swap == NULL)
    return;
  daemon_log_stop ();
  for (int i = 0; i < count; i++)
    used += snprintf (ids + used, sizeof ids - used, "%s%u", i ? "," : "",
                      devices[i].info.dev_id);
  if (!(devices[0].info.flags & UBLK_F_USER_RECOVERY)) {
    fprintf (stderr, "%s: cannot go on, and %s is swap: added without "
             "user recovery, it cannot be taken over; the driver removes "
             "it as this daemon ends, with every page swapped to it\n",
             PROGRAM_NAME, swap);
    _exit (EXIT_FAILURE);
  }
  fprintf (stderr, "%s: cannot go on, but %s is swap: its devices (%s) are "
           "left for recovery, not stopped; the kernel holds their I/O "
           "until a new server takes them over: %s%s%s\n", PROGRAM_NAME,
           swap, ids, has_standby ? "the standby, now" : "`cswap up`, or "
           "`cswap-ublk --recover=", has_standby ? "" : ids,
           has_standby ? "" : "` with this daemon's options");
  if (!persists)
    fprintf (stderr, "%s: its store (with a backing file) ends with this "
             "daemon: a read of a page swapped to them will fail with "
             "EIO\n", PROGRAM_NAME);
  _exit (UBLK_EXIT_LEFT_FOR_RECOVERY);
}

/* The devices' paths into PATH, one a line, whole or not at all. */
static int
write_device_list (const char *path, const struct served_device *devices,
                   int count)
{
  char tmp[PATH_MAX];
  FILE *f;

  if (snprintf (tmp, sizeof tmp, "%s.tmp", path) >= (int) sizeof tmp
      || (f = fopen (tmp, "we")) == NULL) {
    fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, path);
    return -1;
  }
  for (int i = 0; i < count; i++)
    fprintf (f, "%s\n", devices[i].path);
  if (fclose (f) == EOF || rename (tmp, path) == -1) {
    fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, path);
    unlink (tmp);
    return -1;
  }
  return 0;
}

int
main (int argc, char *argv[])
{
  struct command_line cl = { .depth = DEFAULT_DEPTH, .dev_id = -1 };
  struct daemon_life life = { .name = PROGRAM_NAME };
  struct served_device devices[MAX_WINDOWS];
  uint32_t recover_ids[MAX_WINDOWS];
  struct ublk_control *control = NULL;
  struct ublk_queues *queues = NULL;
  struct ladder *ladder = NULL;
  struct lost_pages_numbers lost_numbers;
  int status = EXIT_FAILURE, signal_fd = -1, ended_fd = -1, count = 0, r;
  int total = 0, deleted, standby = 0, report_fd = -1;
  bool persists, recovering, has_standby;
  bool listed = false;
  const char *why;
  sigset_t stop_signals;

  if (argc == 2 && strcmp (argv[1], "--features") == 0)
    return print_features ();
  if (argc >= 2 && strcmp (argv[1], "--delete-dead") == 0)
    return ublk_delete_dead (argc - 2, argv + 2);
  options_init (&cl.device);
  config_service_init (&cl.service);
  r = parse_command_line (argc, argv, &cl);
  if (r != 0)
    return r == 1 ? EXIT_SUCCESS : EXIT_FAILURE;
  if (options_finish (&cl.device, &why) == -1) {
    fprintf (stderr, "%s: %s\n", PROGRAM_NAME, why);
    return EXIT_FAILURE;
  }
  if (cl.print_size) {
    printf ("%llu\n", (unsigned long long) cl.device.store.size_bytes);
    return EXIT_SUCCESS;
  }
  count = parse_windows (cl.windows, cl.device.store.size_bytes, devices);
  if (count == -1)
    return EXIT_FAILURE;
  for (int i = 0; i < count; i++)
    devices[i].char_fd = -1;
  if (cl.recover && parse_recover_ids (cl.recover, recover_ids, count) == -1)
    return EXIT_FAILURE;
  if (cl.discard_store && !cl.recover) {
    fprintf (stderr, "%s: --discard-store: only with --recover\n",
             PROGRAM_NAME);
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
  /* User copy (6.5 and later; every Debian kernel with ublk has it):
   * without it the driver pins a buffer per tag as it copies
   * (ublk-queue.h).
   */
  if (!(ublk_control_features (control) & UBLK_F_USER_COPY)) {
    fprintf (stderr, "%s: this kernel's ublk driver has no UBLK_F_USER_COPY "
             "(Linux 6.5 and later): use cswap-fuse\n", PROGRAM_NAME);
    ublk_control_close (control);
    return EXIT_FAILURE;
  }
  /* The store outlives the daemon where the devices can (user
   * recovery), and then a standby waits to take them over
   * (ublk-standby.h).
   */
  persists = recovery_flags (ublk_control_features (control), true)
             && cl.device.store.backing_path == NULL;
  if (persists && !cl.recover && !cl.no_standby)
    standby = ublk_standby_split (count, recover_ids, &report_fd);
  if (standby == 1) {
    /* The control ring was the server's since the split (its requests
     * moved the ring's heads behind this process's back): one of our own.
     */
    ublk_control_close (control);
    control = ublk_control_open (&why);
    if (control == NULL) {
      fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, why);
      return EXIT_FAILURE;
    }
  }
  recovering = cl.recover || standby == 1;
  has_standby = persists && !cl.recover && !cl.no_standby && standby == 0;

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

  /* The store, found again by the first device's number: known before
   * it is made when taking over, and once added otherwise.
   */
  if (persists)
    cl.device.store.persistence = recovering ? STORE_SEGMENT_ADOPT
      : STORE_SEGMENT_NEW;
  total = count;
  for (int i = 0; !recovering && i < total; i++)
    if (add_device (control, &devices[i], &cl,
                    cl.dev_id == -1 ? -1 : cl.dev_id + i) == -1) {
      count = i + 1;            /* what the end must undo */
      goto out;
    }
  if (report_fd != -1) {
    for (int i = 0; i < total; i++)
      recover_ids[i] = devices[i].info.dev_id;
    ublk_standby_report (report_fd, total, recover_ids);
    report_fd = -1;
  }
  cl.device.store.segment_device =
    recovering ? recover_ids[0] : devices[0].info.dev_id;
  cl.device.store.discard_segment = cl.discard_store;
  if (persists)
    warn_forced_removal ();
  if (daemon_prepare (&life, &cl.device) == -1)
    goto out;
  say_adoption (life.store);
  /* The ladder's follower, idle until `cswap up` hands it the steps over
   * the control socket (ladder-online = follow), or resume_ladder finds
   * them in an adopted store.
   */
  ladder = ladder_create (NULL, life.store);
  if (ladder == NULL) {
    fprintf (stderr, "%s: the ladder's follower: %m\n", PROGRAM_NAME);
    goto out;
  }
  control_server_extend (life.control, ladder_control_extension (ladder));
  control_server_extend (life.control, lost_pages_numbers_init (&lost_numbers));
  for (int i = 0; i < total; i++) {
    devices[i].window = (struct blockdev) {
      .store = life.store, .base_bytes = devices[i].offset_bytes,
      .size_bytes = devices[i].length_bytes, .ladder = ladder,
    };
    if (recovering && recover_device (control, &devices[i],
                                      recover_ids[i]) == -1) {
      count = i + 1;            /* what the end must undo */
      goto out;
    }
    lost_pages_numbers_add (&lost_numbers, devices[i].lost);
  }

  /* No fork: serving starts here.  Memory locked, the store's and the
   * control threads, READY=1 (the disks follow within a moment).
   */
  if (daemon_start_after_fork (&life) == -1)
    goto out;
  queues = start_queues (control, devices, count, ended_fd);
  if (queues == NULL)
    goto out;
  for (int i = 0; i < count; i++)
    if (start_device (control, &devices[i]) == -1)
      goto out;
  ublk_standby_release_messages ();
  if (recovering)
    resume_ladder (ladder);
  if (cl.device_list) {
    if (write_device_list (cl.device_list, devices, count) == -1)
      goto out;
    listed = true;
  }
  for (int i = 0; i < count; i++)
    printf ("%s\n", devices[i].path);
  fflush (stdout);
  wait_for_stop (signal_fd, ended_fd, devices, count);
  status = EXIT_SUCCESS;

 out:
  ublk_standby_release_messages ();
  /* No swapon of the follower's may race the end; one in flight reads
   * its header through the queues, so this comes before they stop.
   */
  ladder_shut (ladder);
  leave_swap_for_recovery (devices, count, persists, has_standby);
  if (listed)
    unlink (cl.device_list);
  /* The disks first, while the queues serve what they flush; then the
   * queues, whose commands the driver has aborted; then the devices.
   */
  for (int i = count - 1; i >= 0; i--)
    stop_disk (control, &devices[i]);
  ublk_queues_stop (queues);
  deleted = 0;
  for (int i = count - 1; i >= 0; i--)
    deleted += delete_device (control, &devices[i]);
  /* A device left (one being taken over, or not yet reached) will want
   * its pages from the next daemon.
   */
  if (life.store && deleted < total)
    store_keep_on_destroy (life.store);
  ublk_control_close (control);
  daemon_stop (&life);
  ladder_destroy (ladder);
  for (int i = 0; i < total; i++)
    lost_pages_destroy (devices[i].lost);
  if (signal_fd != -1)
    close (signal_fd);
  if (ended_fd != -1)
    close (ended_fd);
  return status;
}
