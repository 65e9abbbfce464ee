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
 * a killed cswap-ublk's devices, and its store, outlive it, and a new
 * daemon takes them over: its standby, or one started with --recover
 * ID,… (ublk-take-over.h, ublk-standby.h).
 *
 * ublk (drivers/block/ublk_drv.c, Linux 6.0 and later; enabled in Debian
 * from 6.12) is a block device whose requests a userspace server answers
 * through io_uring: a request reaches the queue's thread as task work,
 * and its answer completes it from the same io_uring_enter, with no loop
 * device, no FUSE hop and no socket in between (doc/design.md, "ublk").
 *
 * This file is the daemon's outline, main(): it reads the command line
 * (ublk-options.h), makes the store, adds the devices or takes them over
 * (ublk-device-life.h, ublk-take-over.h), starts the queues (ublk-queue.h:
 * a thread per CPU serving every device) and the disks, and serves until
 * a SIGTERM or SIGINT arrives while no disk is swap (while one is, they
 * are refused with a line that names it: the pages swapped to it would
 * be lost), or until a device's queues end of themselves (someone deleted
 * the device, or a queue failed).  It then stops the disks, the queues,
 * deletes the devices and prints the stats line; but where a disk is
 * swap then (or after an error once one started), it exits leaving them
 * all for recovery instead (ublk_leave_swap_for_recovery).
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
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "daemon-life.h"
#include "daemon-log.h"
#include "ladder-follow.h"
#include "lost-pages.h"
#include "lost-pages-numbers.h"
#include "store-segment.h"
#include "ublk-control.h"
#include "ublk-device-life.h"
#include "ublk-leftovers.h"
#include "ublk-options.h"
#include "ublk-queue.h"
#include "ublk-standby.h"
#include "ublk-take-over.h"

#define PROGRAM_NAME "cswap-ublk"

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
          ublk_recovery_mode (ublk_recovery_flags (features, true)));
  printf ("ublk_ioctl_encode=%s\n",
          features & UBLK_F_CMD_IOCTL_ENCODE ? "yes" : "no");
  ublk_control_close (control);
  return EXIT_SUCCESS;
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
    swap = ublk_swap_device (devices, count);
    if (swap) {
      fprintf (stderr, "%s: %s refused: %s is swap; swapoff it first\n",
               PROGRAM_NAME, strsignal (info.ssi_signo), swap);
      continue;
    }
    return;
  }
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

/* /dev/ublk-control, of a driver with user copy: the handle, or NULL
 * after saying why.
 */
static struct ublk_control *
open_control (void)
{
  const char *why;
  struct ublk_control *control = ublk_control_open (&why);

  if (control == NULL) {
    if (errno == ENOENT)
      fprintf (stderr, "%s: no %s: this kernel's ublk driver is not loaded "
               "(modprobe ublk_drv) or not built (CONFIG_BLK_DEV_UBLK)\n",
               PROGRAM_NAME, UBLK_CONTROL_PATH);
    else
      fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, why);
    return NULL;
  }
  /* User copy (6.5 and later; every Debian kernel with ublk has it):
   * without it the driver pins a buffer per tag as it copies
   * (ublk-queue.h).
   */
  if (!(ublk_control_features (control) & UBLK_F_USER_COPY)) {
    fprintf (stderr, "%s: this kernel's ublk driver has no UBLK_F_USER_COPY "
             "(Linux 6.5 and later): use cswap-fuse\n", PROGRAM_NAME);
    ublk_control_close (control);
    return NULL;
  }
  return control;
}

/* Splits into standby and server (ublk-standby.h), the standby locking
 * what IO_PATH names: returns 1 in a standby taking over the COUNT
 * devices RECOVER_IDS (*CONTROL then a ring of its own, or NULL after
 * saying why), 0 in the server (*REPORT_FD to tell the standby on), -1
 * without a standby.
 */
static int
split_off_standby (struct ublk_control **control, int count,
                   uint32_t recover_ids[], const struct io_path *io_path,
                   int *report_fd)
{
  int standby = ublk_standby_split (count, recover_ids, io_path, report_fd);
  const char *why;

  if (standby == 1) {
    /* The control ring was the server's since the split (its requests
     * moved the ring's heads behind this process's back): one of our own.
     */
    ublk_control_close (*control);
    *control = ublk_control_open (&why);
    if (*control == NULL)
      fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, why);
  }
  return standby;
}

/* The end of the COUNT DEVICES, none of them swap: the number deleted.
 * The disks first, while the queues serve what they flush; then the
 * queues, whose commands the driver has aborted; then the devices.
 */
static int
end_devices (struct ublk_control *control, struct served_device *devices,
             int count, struct ublk_queues *queues)
{
  int deleted = 0;

  for (int i = count - 1; i >= 0; i--)
    ublk_stop_disk (control, &devices[i]);
  ublk_queues_stop (queues);
  for (int i = count - 1; i >= 0; i--)
    deleted += ublk_delete_device (control, &devices[i]);
  return deleted;
}

int
main (int argc, char *argv[])
{
  struct ublk_command_line cl;
  struct daemon_life life = { .name = PROGRAM_NAME };
  struct served_device devices[UBLK_MAX_WINDOWS];
  uint32_t recover_ids[UBLK_MAX_WINDOWS];
  struct ublk_control *control = NULL;
  struct ublk_queues *queues = NULL;
  struct ladder *ladder = NULL;
  struct lost_pages_numbers lost_numbers;
  int status = EXIT_FAILURE, signal_fd = -1, ended_fd = -1, count = 0, r;
  int total = 0, deleted, standby = 0, report_fd = -1;
  bool persists, recovering, has_standby;
  bool listed = false;
  sigset_t stop_signals;

  if (argc == 2 && strcmp (argv[1], "--features") == 0)
    return print_features ();
  if (argc >= 2 && strcmp (argv[1], "--delete-dead") == 0)
    return ublk_delete_dead (argc - 2, argv + 2);
  r = ublk_command_line_read (argc, argv, &cl, devices, recover_ids, &count);
  if (r != 0)
    return r == 1 ? EXIT_SUCCESS : EXIT_FAILURE;
  for (int i = 0; i < count; i++)
    devices[i].char_fd = -1;

  control = open_control ();
  if (control == NULL)
    return EXIT_FAILURE;
  /* The store outlives the daemon where the devices can (user
   * recovery), and then a standby waits to take them over
   * (ublk-standby.h).
   */
  persists = ublk_recovery_flags (ublk_control_features (control), true);
  if (persists && !cl.recover && !cl.no_standby) {
    struct io_path io_path = daemon_io_path (&cl.device, false);
    standby = split_off_standby (&control, count, recover_ids, &io_path,
                                 &report_fd);
  }
  if (control == NULL)
    return EXIT_FAILURE;
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
    if (ublk_add_device (control, &devices[i], cl.queues, cl.depth,
                         cl.device.store.persistence != STORE_PRIVATE,
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
    ublk_warn_forced_removal ();
  if (daemon_prepare (&life, &cl.device) == -1)
    goto out;
  ublk_say_adoption (life.store);
  /* The ladder's follower, idle until `cswap up` hands it the steps over
   * the control socket (ladder-online = follow), or ublk_resume_ladder finds
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
    if (recovering && ublk_recover_device (control, &devices[i],
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
  queues = ublk_start_queues (control, devices, count, ended_fd);
  if (queues == NULL)
    goto out;
  for (int i = 0; i < count; i++)
    if (ublk_start_device (control, &devices[i]) == -1)
      goto out;
  ublk_standby_release_messages ();
  if (recovering)
    ublk_resume_ladder (ladder);
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
  ublk_leave_swap_for_recovery (devices, count, has_standby);
  if (listed)
    unlink (cl.device_list);
  deleted = end_devices (control, devices, count, queues);
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
