/* cswap: the ladder's follower (see ladder-follow.h).
 *
 * Lock order: common/lock-order.h (ladder->lock is a leaf: nothing of
 * the engine is taken under it, and the follower, which the control
 * thread may join while holding it, takes no lock of the ladder).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "config-file.h"
#include "daemon-log.h"
#include "json.h"
#include "ladder-follow.h"
#include "ladder-policy.h"
#include "ladder-record.h"
#include "memory-safety.h"
#include "monotonic.h"
#include "page.h"
#include "parse.h"
#include "proc-swaps.h"
#include "store.h"

/* swapon --discard=pages: discard a cluster once it is free, never the
 * whole device (linux/swap.h; glibc's header lacks it).
 */
#ifndef SWAP_FLAG_DISCARD_PAGES
#define SWAP_FLAG_DISCARD_PAGES 0x40000
#endif

#define DEVICE_NAME_BYTES LADDER_RECORD_DEVICE_BYTES
/* "/proc/self/fd/" and a descriptor's number. */
#define FD_PATH_BYTES 32
/* The follower's stack: /proc/swaps and a path are its deepest frames. */
#define FOLLOWER_STACK_BYTES (256 * 1024)
/* How long ladder_shut waits for a follower in the middle of a swapon. */
#define SHUT_WAIT_S 5

#define MS_NS UINT64_C (1000000)

/* A step is its held descriptor, never a path: `ladder add` checks the
 * device it opened, and every swapon and swapoff after goes through
 * /proc/self/fd/FD, which the kernel resolves to that same open file,
 * whatever has become of the name it was opened by (a symlink pointed
 * elsewhere since).  DEVICE is only what it shows.
 */
struct ladder_step {
  char device[DEVICE_NAME_BYTES]; /* the name FD was opened at, resolved */
  int fd;                       /* held open: the window stays attached */
  dev_t rdev;
  uint64_t backing_dev, backing_inode; /* a loop's file, as checked */
  uint64_t offset_bytes, length_bytes;
  int priority;                 /* swapon -p; -1: the kernel's choice */
  _Atomic uint64_t rest_until_ns; /* written by the follower only */
};

struct ladder {
  char swap_file[PATH_MAX];
  struct store *store;
  void *record;                 /* the store's note (ladder-record.h), or NULL */
  struct control_extension extension;
  int wake_fd;                  /* eventfd: the write path wakes the follower */

  pthread_mutex_t lock;
  /* Protected by lock; constant while the follower runs. */
  struct ladder_step steps[LADDER_MAX_STEPS];
  unsigned count;
  uint64_t headroom_bytes;
  uint64_t floor_bytes;         /* the least swap kept online (0: none) */
  bool follower_running;
  pthread_t follower;
  bool shut;                    /* ladder_shut ran: commands are refused */
  bool abandoned;               /* the follower outlived ladder_shut */

  atomic_bool following;        /* read by the write path */
  atomic_bool stopping;         /* tells the follower to end */
  atomic_bool stood_aside;      /* it ended: another swapped a step off */
  _Atomic uint64_t written_bytes;
  _Atomic uint64_t swapons, swapoffs, swap_errors;
};

/* The kernel's view. */

struct area_match {
  struct ladder *ladder;
  struct ladder_step_view *views;
};

static void
match_area (const struct proc_swap_area *area, void *arg)
{
  struct area_match *m = arg;

  if (area->rdev == 0)
    return;
  for (unsigned i = 0; i < m->ladder->count; i++)
    if (m->ladder->steps[i].rdev == area->rdev) {
      m->views[i].online = true;
      m->views[i].size_bytes = area->size_bytes;
      m->views[i].used_bytes = area->used_bytes;
    }
}

/* The steps as the policy sees them, now; -1 when /proc/swaps cannot be
 * read.  A step is matched by its device number, whatever name swapon
 * was given.
 */
static int
read_views (struct ladder *l, struct ladder_step_view *views, uint64_t now_ns)
{
  struct area_match m = { l, views };

  for (unsigned i = 0; i < l->count; i++)
    views[i] = (struct ladder_step_view) {
      /* Less the header page, as the kernel counts an area's size. */
      .size_bytes = l->steps[i].length_bytes - CSWAP_PAGE_SIZE,
      .resting = atomic_load_explicit (&l->steps[i].rest_until_ns,
                                       memory_order_relaxed) > now_ns,
    };
  return proc_swaps_each (match_area, &m) == -1 ? -1 : 0;
}

static unsigned
online_count (const struct ladder_step_view *views, unsigned count)
{
  unsigned online = 0;

  for (unsigned i = 0; i < count; i++)
    online += views[i].online;
  return online;
}

/* The follower. */

static void
step_failed (struct ladder *l, struct ladder_step *s, const char *call,
             const char *why)
{
  atomic_fetch_add (&l->swap_errors, 1);
  atomic_store_explicit (&s->rest_until_ns,
                         monotonic_ns () + LADDER_REST_MS * MS_NS,
                         memory_order_relaxed);
  daemon_log ("%s: ladder: %s %s: %s (left alone for %d s)\n",
              program_invocation_short_name, call, s->device, why,
              LADDER_REST_MS / 1000);
}

/* The name of descriptor FD: what swapon(2) and swapoff(2) are given for
 * a step, so that they open the device `ladder add` checked, and not
 * whatever its name names now.  The kernel shows the swap area in
 * /proc/swaps by the path the descriptor was opened at (/dev/loopN), not
 * by this name.
 */
static void
fd_path (int fd, char path[static FD_PATH_BYTES])
{
  snprintf (path, FD_PATH_BYTES, "/proc/self/fd/%d", fd);
}

/* Whether step S's descriptor still names what `ladder add` checked:
 * the same device number, and for a loop device the same file at the
 * same window.  Cheap (no allocation, no I/O through the daemon): the
 * follower runs it before each swapon and swapoff.  False with the
 * reason logged and the step resting.
 */
static bool
step_still_checked (struct ladder *l, struct ladder_step *s, const char *call)
{
  struct loop_info64 info;
  struct stat st;
  uint64_t bytes;

  if (fstat (s->fd, &st) == -1 || !S_ISBLK (st.st_mode)
      || st.st_rdev != s->rdev)
    step_failed (l, s, call, "its descriptor no longer names the device "
                 "it was checked as");
  else if (l->swap_file[0]
           && (ioctl (s->fd, LOOP_GET_STATUS64, &info) == -1
               || info.lo_device != s->backing_dev
               || info.lo_inode != s->backing_inode
               || info.lo_offset != s->offset_bytes
               || info.lo_sizelimit != s->length_bytes))
    step_failed (l, s, call, "no longer a loop device over the daemon's "
                 "file at its window");
  else if (!l->swap_file[0]
           && (ioctl (s->fd, BLKGETSIZE64, &bytes) == -1
               || bytes != s->length_bytes))
    step_failed (l, s, call, "no longer as long as its window");
  else
    return true;
  return false;
}

static void
swap_step_on (struct ladder *l, struct ladder_step *s)
{
  int flags = SWAP_FLAG_DISCARD | SWAP_FLAG_DISCARD_PAGES;
  char path[FD_PATH_BYTES];

  /* As swapon -p does: a negative priority is the kernel's choice. */
  if (s->priority >= 0)
    flags |= SWAP_FLAG_PREFER
      | ((s->priority << SWAP_FLAG_PRIO_SHIFT) & SWAP_FLAG_PRIO_MASK);
  if (!step_still_checked (l, s, "swapon"))
    return;
  fd_path (s->fd, path);
  if (swapon (path, flags) == 0)
    atomic_fetch_add (&l->swapons, 1);
  else
    step_failed (l, s, "swapon", strerrordesc_np (errno));
}

/* Off, and its pages freed: the header page stays for the next swapon.
 * Only once swapoff(2) of the held device succeeded is its window swap
 * no more, and only then may its pages go.
 */
static bool
swap_step_off (struct ladder *l, struct ladder_step *s)
{
  char path[FD_PATH_BYTES];

  if (!step_still_checked (l, s, "swapoff"))
    return false;
  fd_path (s->fd, path);
  if (swapoff (path) == -1) {
    step_failed (l, s, "swapoff", strerrordesc_np (errno));
    return false;
  }
  atomic_fetch_add (&l->swapoffs, 1);
  /* Not once told to stop: a follower ladder_shut gave up on may be
   * finishing this swapoff after the store is gone.
   */
  if (!atomic_load (&l->stopping))
    store_zero (l->store, s->length_bytes - CSWAP_PAGE_SIZE,
                s->offset_bytes + CSWAP_PAGE_SIZE);
  return true;
}

/* Until LADDER_WAKE_BYTES more are written, LADDER_IDLE_MS pass, or
 * stop says so.
 */
static void
wait_for_writes (struct ladder *l)
{
  struct pollfd p = { .fd = l->wake_fd, .events = POLLIN };
  uint64_t count;

  if (poll (&p, 1, LADDER_IDLE_MS) > 0) {
    ssize_t r = read (l->wake_fd, &count, sizeof count);

    (void) r;                   /* EAGAIN: nothing to drain after all */
  }
}

/* Whether a step the follower saw online is off now though it did not
 * swap it off: another process did (systemd stopping its swap units at
 * shutdown, beside cswap.service; an administrator).  The follower then
 * stands aside rather than fight it: at shutdown it swapped steps on
 * again as fast as systemd took them off, and systemd failed to stop
 * them (tests/trixie/test-trixie-vm.sh).  Until `ladder stop` and
 * `ladder follow` again (`cswap up`, a refused `cswap down`).
 */
static bool
swapped_off_elsewhere (struct ladder *l, const bool *was_online,
                       const struct ladder_step_view *views)
{
  for (unsigned i = 0; i < l->count; i++)
    if (was_online[i] && !views[i].online) {
      daemon_log ("%s: ladder: %s was swapped off by another process: "
                  "the daemon no longer swaps steps on or off (cswap up "
                  "resumes it)\n", program_invocation_short_name,
                  l->steps[i].device);
      return true;
    }
  return false;
}

static void *
follow (void *arg)
{
  struct ladder *l = arg;
  struct ladder_step_view views[LADDER_MAX_STEPS];
  bool was_online[LADDER_MAX_STEPS] = { false };

  memory_safety_mark_io_thread ();
  while (!atomic_load (&l->stopping)) {
    struct ladder_action a = { LADDER_KEEP, 0 };

    if (read_views (l, views, monotonic_ns ()) == 0) {
      if (swapped_off_elsewhere (l, was_online, views)) {
        /* Nor will a daemon that takes over from this one. */
        if (l->record)
          ladder_record_clear (l->record);
        atomic_store (&l->following, false);
        atomic_store (&l->stood_aside, true);
        break;
      }
      for (unsigned i = 0; i < l->count; i++)
        was_online[i] = views[i].online;
      a = ladder_decide (views, l->count, l->headroom_bytes, l->floor_bytes);
    }
    switch (a.verb) {
    case LADDER_SWAP_ON:
      swap_step_on (l, &l->steps[a.step]);
      break;
    case LADDER_SWAP_OFF:
      if (swap_step_off (l, &l->steps[a.step]))
        was_online[a.step] = false;
      break;
    case LADDER_KEEP:
      wait_for_writes (l);
      break;
    }
  }
  return NULL;
}

void
ladder_note_write (struct ladder *l, uint64_t bytes)
{
  uint64_t before, one = 1;

  if (l == NULL || !atomic_load_explicit (&l->following, memory_order_relaxed))
    return;
  before = atomic_fetch_add_explicit (&l->written_bytes, bytes,
                                      memory_order_relaxed);
  if (before / LADDER_WAKE_BYTES != (before + bytes) / LADDER_WAKE_BYTES) {
    ssize_t r = write (l->wake_fd, &one, sizeof one);

    (void) r;                   /* EAGAIN: a wake-up is pending anyway */
  }
}

/* Starting and stopping, under l->lock. */

static int
start_follower (struct ladder *l)
{
  pthread_attr_t attr;
  int err;

  atomic_store (&l->stopping, false);
  atomic_store (&l->stood_aside, false);
  atomic_store (&l->following, true);
  pthread_attr_init (&attr);
  pthread_attr_setstacksize (&attr, FOLLOWER_STACK_BYTES);
  err = pthread_create (&l->follower, &attr, follow, l);
  pthread_attr_destroy (&attr);
  if (err) {
    atomic_store (&l->following, false);
    return err;
  }
  l->follower_running = true;
  return 0;
}

/* Ends the follower; waits at most WAIT_S seconds (0: for ever).  False
 * if it is still running then.
 */
static bool
stop_follower (struct ladder *l, unsigned wait_s)
{
  uint64_t one = 1;
  struct timespec deadline;

  if (!l->follower_running)
    return true;
  atomic_store (&l->stopping, true);
  /* Should the write fail, the follower still looks within
   * LADDER_IDLE_MS.
   */
  ssize_t r = write (l->wake_fd, &one, sizeof one);
  (void) r;
  if (wait_s == 0)
    pthread_join (l->follower, NULL);
  else {
    clock_gettime (CLOCK_REALTIME, &deadline);
    deadline.tv_sec += wait_s;
    if (pthread_timedjoin_np (l->follower, NULL, &deadline) != 0)
      return false;
  }
  l->follower_running = false;
  atomic_store (&l->following, false);
  return true;
}

static void
forget_steps (struct ladder *l)
{
  for (unsigned i = 0; i < l->count; i++)
    close (l->steps[i].fd);
  l->count = 0;
}

/* The `ladder` command. */

__attribute__ ((format (printf, 3, 4)))
static int
refuse (char *error, size_t size, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (error, size, fmt, ap);
  va_end (ap);
  return -1;
}

/* Whether FD, a loop device, is this daemon's file at exactly the window
 * OFFSET, LENGTH with direct I/O (S's backing_dev and backing_inode set
 * to that file's, for the follower's re-checks); if not, the reason in
 * ERROR.
 */
static int
check_loop_window (struct ladder *l, struct ladder_step *s, int fd,
                   const char *device, uint64_t offset, uint64_t length,
                   char *error, size_t size)
{
  struct loop_info64 info;
  struct stat file;

  if (ioctl (fd, LOOP_GET_STATUS64, &info) == -1)
    return refuse (error, size, "%s: not an attached loop device (%s)",
                   device, strerrordesc_np (errno));
  if (stat (l->swap_file, &file) == -1)
    return refuse (error, size, "%s: %s", l->swap_file,
                   strerrordesc_np (errno));
  if (info.lo_device != file.st_dev || info.lo_inode != file.st_ino)
    return refuse (error, size, "%s: not a loop device over %s", device,
                   l->swap_file);
  if (info.lo_offset != offset || info.lo_sizelimit != length)
    return refuse (error, size, "%s: covers %llu bytes from %llu of the "
                   "file, not %llu from %llu", device,
                   (unsigned long long) info.lo_sizelimit,
                   (unsigned long long) info.lo_offset,
                   (unsigned long long) length, (unsigned long long) offset);
  if (!(info.lo_flags & LO_FLAGS_DIRECT_IO))
    return refuse (error, size, "%s: direct I/O is off (a buffered loop "
                   "keeps a copy of every page)", device);
  s->backing_dev = info.lo_device;
  s->backing_inode = info.lo_inode;
  return 0;
}

/* Whether DEVICE (open as FD) is a device of LENGTH bytes whose first
 * page reads, uncached, as the store's page at OFFSET, and that page a
 * swap header: mkswap gives each one a random UUID, so only the device
 * this daemon serves that window through reads so.  How the nbdkit
 * plugin's windows (nbd-window.h), which no file names, are known.
 */
static int
check_served_window (struct ladder *l, int fd, const char *device,
                     uint64_t offset, uint64_t length, char *error,
                     size_t size)
{
  static const char magic[] = "SWAPSPACE2";
  const size_t magic_at = CSWAP_PAGE_SIZE - (sizeof magic - 1);
  CLEANUP_FREE unsigned char *ours = aligned_alloc (CSWAP_PAGE_SIZE,
                                                    2 * CSWAP_PAGE_SIZE);
  unsigned char *theirs = ours + CSWAP_PAGE_SIZE;
  uint64_t bytes;
  ssize_t r;
  int direct, err;
  char path[FD_PATH_BYTES];

  if (ours == NULL)
    return refuse (error, size, "out of memory");
  if (ioctl (fd, BLKGETSIZE64, &bytes) == -1)
    return refuse (error, size, "%s: %s", device, strerrordesc_np (errno));
  if (bytes != length)
    return refuse (error, size, "%s: %llu bytes, not the window's %llu",
                   device, (unsigned long long) bytes,
                   (unsigned long long) length);
  err = store_read (l->store, ours, CSWAP_PAGE_SIZE, offset);
  if (err)
    return refuse (error, size, "reading the window's header: %s",
                   strerrordesc_np (-err));
  if (memcmp (ours + magic_at, magic, sizeof magic - 1))
    return refuse (error, size, "the window at %llu holds no swap header "
                   "(mkswap its device first)", (unsigned long long) offset);
  /* Through FD, not DEVICE's name: the name may point elsewhere now. */
  fd_path (fd, path);
  direct = open (path, O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (direct == -1)
    return refuse (error, size, "%s: %s", device, strerrordesc_np (errno));
  r = pread (direct, theirs, CSWAP_PAGE_SIZE, 0);
  err = errno;
  close (direct);
  if (r != (ssize_t) CSWAP_PAGE_SIZE)
    return refuse (error, size, "%s: reading its first page: %s", device,
                   r == -1 ? strerrordesc_np (err) : "short read");
  if (memcmp (ours, theirs, CSWAP_PAGE_SIZE))
    return refuse (error, size, "%s: its swap header is not the one of this "
                   "daemon's window at %llu", device,
                   (unsigned long long) offset);
  return 0;
}

/* Step l->count: DEVICE over the window OFFSET, LENGTH, swapped on at
 * PRIORITY, once checked to be this daemon's window.  0, or -1 with the
 * reason in ERROR.
 */
static int
add_checked_step (struct ladder *l, const char *device, uint64_t offset,
                  uint64_t length, int priority, char *error, size_t size)
{
  struct ladder_step *s = &l->steps[l->count];
  uint64_t next = 0;
  struct stat st;
  char path[FD_PATH_BYTES];
  ssize_t name_bytes;
  int fd;

  if (l->count == LADDER_MAX_STEPS)
    return refuse (error, size, "at most %d steps", LADDER_MAX_STEPS);
  if (l->count)
    next = l->steps[l->count - 1].offset_bytes
      + l->steps[l->count - 1].length_bytes;
  if (offset != next || length % CSWAP_PAGE_SIZE
      || offset > store_size (l->store)
      || length > store_size (l->store) - offset)
    return refuse (error, size, "ladder add: the window %llu+%llu does not "
                   "follow the last step (%llu) in whole pages within the "
                   "device", (unsigned long long) offset,
                   (unsigned long long) length, (unsigned long long) next);
  /* O_NONBLOCK: a FIFO named here must not hold the control thread. */
  fd = open (device, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd == -1)
    return refuse (error, size, "%s: %s", device, strerrordesc_np (errno));
  if (fstat (fd, &st) == -1 || !S_ISBLK (st.st_mode)) {
    close (fd);
    return refuse (error, size, "%s: not a block device", device);
  }
  /* What the step is shown as: the name the kernel opened, symbolic
   * links resolved, as /proc/swaps will show it.
   */
  fd_path (fd, path);
  name_bytes = readlink (path, s->device, sizeof s->device);
  if (name_bytes <= 0 || (size_t) name_bytes >= sizeof s->device) {
    close (fd);
    return refuse (error, size, "%s: its name is too long (or unknown)",
                   device);
  }
  s->device[name_bytes] = '\0';
  for (unsigned i = 0; i < l->count; i++)
    if (l->steps[i].rdev == st.st_rdev) {
      close (fd);
      return refuse (error, size, "%s: already step %u", device, i);
    }
  if ((l->swap_file[0]
       ? check_loop_window (l, s, fd, device, offset, length, error, size)
       : check_served_window (l, fd, device, offset, length, error, size))
      == -1) {
    close (fd);
    return -1;
  }
  s->fd = fd;
  s->rdev = st.st_rdev;
  s->offset_bytes = offset;
  s->length_bytes = length;
  s->priority = priority;
  atomic_store (&s->rest_until_ns, 0);
  l->count++;
  return 0;
}

/* ladder add DEVICE OFFSET LENGTH PRIORITY */
static int
add_step (struct ladder *l, char *const *argv, struct json *reply,
          char *error, size_t size)
{
  uint64_t offset, length;
  int64_t priority;
  const char *why;

  if (l->follower_running)
    return refuse (error, size, "already following (ladder stop first)");
  if (parse_uint64 (argv[1], 0, UINT64_MAX, &offset, &why) == -1
      || parse_uint64 (argv[2], 2 * CSWAP_PAGE_SIZE, UINT64_MAX, &length,
                       &why) == -1
      || parse_int64 (argv[3], -1, 32767, &priority, &why) == -1)
    return refuse (error, size, "ladder add: %s", why);
  if (add_checked_step (l, argv[0], offset, length, priority, error, size)
      == -1)
    return -1;
  json_uint (reply, "step_count", l->count);
  return 0;
}

/* What was handed over, as a daemon that takes over from this one must
 * follow it again (ladder-record.h).
 */
static void
record_hand_over (struct ladder *l)
{
  struct ladder_hand_over h = {
    .count = l->count,
    .headroom_bytes = l->headroom_bytes,
    .floor_bytes = l->floor_bytes,
  };

  if (l->record == NULL)
    return;
  for (unsigned i = 0; i < l->count; i++) {
    memcpy (h.steps[i].device, l->steps[i].device, sizeof h.steps[i].device);
    h.steps[i].offset_bytes = l->steps[i].offset_bytes;
    h.steps[i].length_bytes = l->steps[i].length_bytes;
    h.steps[i].priority = l->steps[i].priority;
  }
  ladder_record_save (l->record, &h);
}

/* Follows the steps at HEADROOM_BYTES and FLOOR_BYTES: 0, or -1 with the
 * reason in ERROR.
 */
static int
follow_steps (struct ladder *l, uint64_t headroom_bytes, uint64_t floor_bytes,
              char *error, size_t size)
{
  int err;

  if (l->follower_running)
    return refuse (error, size, "already following");
  if (l->count == 0)
    return refuse (error, size, "no steps (ladder add first)");
  if (headroom_bytes < CONFIG_MIN_LADDER_HEADROOM
      || headroom_bytes > CONFIG_MAX_LADDER_HEADROOM)
    return refuse (error, size, "ladder follow: the headroom must be 4M "
                   "to 1T");
  l->headroom_bytes = headroom_bytes;
  l->floor_bytes = floor_bytes;
  err = start_follower (l);
  if (err)
    return refuse (error, size, "starting the follower: %s",
                   strerrordesc_np (err));
  record_hand_over (l);
  return 0;
}

/* ladder follow HEADROOM [FLOOR] */
static int
start_following (struct ladder *l, const char *headroom, const char *floor,
                 struct json *reply, char *error, size_t size)
{
  uint64_t bytes, floor_bytes = 0;
  const char *why;

  if (parse_size (headroom, &bytes, &why) == -1)
    return refuse (error, size, "ladder follow: %s", why);
  if (floor != NULL && parse_size (floor, &floor_bytes, &why) == -1)
    return refuse (error, size, "ladder follow: the floor: %s", why);
  if (follow_steps (l, bytes, floor_bytes, error, size) == -1)
    return -1;
  json_bool (reply, "following", true);
  return 0;
}

static void
show (struct ladder *l, struct json *reply)
{
  struct ladder_step_view views[LADDER_MAX_STEPS];
  bool known = read_views (l, views, monotonic_ns ()) == 0;
  bool following = l->follower_running && !atomic_load (&l->stood_aside);

  json_bool (reply, "following", following);
  /* The follower ended: a step was swapped off by another process. */
  json_bool (reply, "stood_aside", atomic_load (&l->stood_aside));
  json_uint (reply, "headroom_bytes", following ? l->headroom_bytes : 0);
  json_uint (reply, "floor_bytes", following ? l->floor_bytes : 0);
  json_uint (reply, "free_bytes",
             known ? ladder_free_bytes (views, l->count) : 0);
  json_array_begin (reply, "steps");
  for (unsigned i = 0; i < l->count; i++) {
    json_object_begin (reply, NULL);
    json_string (reply, "device", l->steps[i].device);
    json_uint (reply, "offset_bytes", l->steps[i].offset_bytes);
    json_uint (reply, "length_bytes", l->steps[i].length_bytes);
    json_int (reply, "priority", l->steps[i].priority);
    json_bool (reply, "online", known && views[i].online);
    json_uint (reply, "used_bytes", known ? views[i].used_bytes : 0);
    json_bool (reply, "resting", views[i].resting);
    json_object_end (reply);
  }
  json_array_end (reply);
}

static int
run_ladder (void *arg, unsigned argc, char *const *argv, struct json *reply,
            char *error, size_t size)
{
  struct ladder *l = arg;
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&l->lock);

  if (l->shut)
    return refuse (error, size, "the daemon is stopping");
  if (argc == 0) {
    show (l, reply);
    return 0;
  }
  if (strcmp (argv[0], "add") == 0 && argc == 5)
    return add_step (l, argv + 1, reply, error, size);
  if (strcmp (argv[0], "follow") == 0 && (argc == 2 || argc == 3))
    return start_following (l, argv[1], argc == 3 ? argv[2] : NULL, reply,
                            error, size);
  if (strcmp (argv[0], "stop") == 0 && argc == 1) {
    stop_follower (l, 0);
    forget_steps (l);
    if (l->record)
      ladder_record_clear (l->record);
    json_bool (reply, "following", false);
    return 0;
  }
  return refuse (error, size, "usage: ladder [add DEVICE OFFSET LENGTH "
                 "PRIORITY | follow HEADROOM [FLOOR] | stop]");
}

/* The numbers. */

static const struct control_extension_number numbers[] = {
  { "ladder_steps_online", false,
    "Ladder steps that are swap, while the daemon follows the swap in use "
    "(ladder-online = follow); 0 otherwise." },
  { "ladder_swapons", true, "Ladder steps the daemon swapped on." },
  { "ladder_swapoffs", true, "Ladder steps the daemon swapped off." },
  { "ladder_swap_errors", true,
    "Ladder swapons and swapoffs that failed (the step then rests 10 s)." },
};
_Static_assert (sizeof numbers / sizeof numbers[0]
                <= CONTROL_EXTENSION_MAX_NUMBERS, "too many numbers");

static void
read_numbers (void *arg, uint64_t *values)
{
  struct ladder *l = arg;
  struct ladder_step_view views[LADDER_MAX_STEPS];
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&l->lock);

  values[0] = l->follower_running && !atomic_load (&l->stood_aside)
    && read_views (l, views, 0) == 0
    ? online_count (views, l->count) : 0;
  values[1] = atomic_load (&l->swapons);
  values[2] = atomic_load (&l->swapoffs);
  values[3] = atomic_load (&l->swap_errors);
}

const struct control_extension *
ladder_control_extension (struct ladder *l)
{
  return &l->extension;
}

struct ladder *
ladder_create (const char *swap_file, struct store *store)
{
  struct ladder *l;
  size_t note_bytes;

  if (swap_file != NULL && strlen (swap_file) >= PATH_MAX) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  l = calloc (1, sizeof *l);
  if (l == NULL)
    return NULL;
  l->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (l->wake_fd == -1) {
    free (l);
    return NULL;
  }
  if (swap_file != NULL)
    strcpy (l->swap_file, swap_file);
  l->store = store;
  /* Only a store that outlives the process has a note. */
  l->record = store_persistent_note (store, &note_bytes);
  if (l->record && note_bytes < ladder_record_bytes ())
    l->record = NULL;
  pthread_mutex_init (&l->lock, NULL);
  l->extension = (struct control_extension) {
    .command = "ladder",
    .args = "[add DEV OFFSET LENGTH PRIO | follow HEADROOM [FLOOR] | stop]",
    .help = "the device ladder's steps; follow the swap in use "
      "(ladder-online = follow)",
    .min_args = 0, .max_args = 5, .run = run_ladder,
    .read_only_max_args = 0,    /* `ladder` lists; add, follow, stop change */
    .numbers = numbers,
    .number_count = sizeof numbers / sizeof numbers[0],
    .read_numbers = read_numbers, .arg = l,
  };
  return l;
}

int
ladder_resume (struct ladder *l, char *error, size_t size)
{
  struct ladder_hand_over h;
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&l->lock);

  if (l->record == NULL || !ladder_record_load (l->record, &h))
    return 0;
  if (l->shut || l->follower_running || l->count)
    return refuse (error, size, "the ladder was handed over already");
  for (unsigned i = 0; i < h.count; i++)
    if (add_checked_step (l, h.steps[i].device, h.steps[i].offset_bytes,
                          h.steps[i].length_bytes, h.steps[i].priority,
                          error, size) == -1) {
      forget_steps (l);
      return -1;
    }
  if (follow_steps (l, h.headroom_bytes, h.floor_bytes, error, size) == -1) {
    forget_steps (l);
    return -1;
  }
  return (int) l->count;
}

void
ladder_shut (struct ladder *l)
{
  if (l == NULL)
    return;
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&l->lock);
  l->shut = true;
  /* A follower in a swapon whose header read no request thread serves
   * any more (the daemon is going) would hold us for ever: it is left to
   * end with the process, and so is what it uses.
   */
  if (!stop_follower (l, SHUT_WAIT_S)) {
    daemon_log ("%s: ladder: the follower did not stop in %d s; "
                "leaving it\n", program_invocation_short_name, SHUT_WAIT_S);
    l->abandoned = true;
    return;
  }
  forget_steps (l);
}

void
ladder_destroy (struct ladder *l)
{
  if (l == NULL || l->abandoned)
    return;
  forget_steps (l);
  close (l->wake_fd);
  pthread_mutex_destroy (&l->lock);
  free (l);
}
