/* cswap: a cswap-ublk device's life (see ublk-device-life.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "lost-pages.h"
#include "page.h"
#include "proc-swaps.h"
#include "small-file.h"
#include "ublk-device-life.h"

#define PROGRAM_NAME "cswap-ublk"

/* How long the driver's /dev/ublkcN may take to appear (devtmpfs makes
 * it at once; udev may rename or chmod it a moment later).
 */
#define CHAR_DEVICE_WAIT_MS 5000

uint64_t
ublk_recovery_flags (uint64_t features, bool store_persists)
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

const char *
ublk_recovery_mode (uint64_t flags)
{
  if (!(flags & UBLK_F_USER_RECOVERY))
    return "none";
  return flags & UBLK_F_USER_RECOVERY_FAIL_IO ? "fail-io" : "queue";
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

void
ublk_wait_10ms (void)
{
  nanosleep (&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
}

int
ublk_open_char_device (uint32_t dev_id)
{
  char path[64];
  int fd = -1;

  snprintf (path, sizeof path, UBLK_CHAR_PATH_FORMAT, dev_id);
  for (int waited_ms = 0; waited_ms <= CHAR_DEVICE_WAIT_MS; waited_ms += 10) {
    fd = open (path, O_RDWR | O_CLOEXEC);
    /* EBUSY: a dead server's descriptor not yet released. */
    if (fd >= 0 || (errno != ENOENT && errno != EBUSY))
      break;
    ublk_wait_10ms ();
  }
  if (fd == -1)
    fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, path);
  return fd;
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

const char *
ublk_swap_device (const struct served_device *devices, int count)
{
  struct swap_search s = { devices, count, NULL };

  proc_swaps_each (note_swap_area, &s);
  return s.found;
}

int
ublk_add_device (struct ublk_control *control, struct served_device *d,
                 unsigned queues, unsigned depth, bool store_persists,
                 int64_t dev_id)
{
  struct ublk_params params;
  int r;

  d->char_fd = -1;
  d->info = (struct ublk_dev_info) {
    .nr_hw_queues = queues,
    .queue_depth = depth,
    .max_io_buf_bytes = BLOCKDEV_MAX_IO_BYTES,
    .dev_id = (uint32_t) dev_id,
    .flags = UBLK_F_USER_COPY
             | (ublk_control_features (control) & UBLK_F_CMD_IOCTL_ENCODE)
             | ublk_recovery_flags (ublk_control_features (control),
                                    store_persists),
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
  d->char_fd = ublk_open_char_device (d->info.dev_id);
  return d->char_fd == -1 ? -1 : 0;
}

struct ublk_queues *
ublk_start_queues (struct ublk_control *control,
                   struct served_device *devices, int count, int ended_fd)
{
  struct ublk_queue_device served[UBLK_MAX_WINDOWS];
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

int
ublk_start_device (struct ublk_control *control, struct served_device *d)
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
   * swap then (ublk_leave_swap_for_recovery).
   */
  d->added = d->started = true;
  d->disk = disk_number (d->info.dev_id);
  fprintf (stderr, "%s: %s %s: bytes %llu to %llu of the store, "
           "%u queues of %u, requests up to %u KiB, recovery %s\n",
           PROGRAM_NAME, d->recovering ? "took over" : "serving", d->path,
           (unsigned long long) d->offset_bytes,
           (unsigned long long) (d->offset_bytes + d->length_bytes),
           d->info.nr_hw_queues, d->info.queue_depth,
           d->info.max_io_buf_bytes / 1024,
           ublk_recovery_mode (d->info.flags));
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

void
ublk_stop_disk (struct ublk_control *control, struct served_device *d)
{
  int r;

  if (d->started && (r = ublk_control_stop (control, d->info.dev_id)) < 0)
    fprintf (stderr, "%s: %s: STOP_DEV: %s\n", PROGRAM_NAME, d->path,
             strerror (-r));
  d->started = false;
}

bool
ublk_delete_device (struct ublk_control *control, struct served_device *d)
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
