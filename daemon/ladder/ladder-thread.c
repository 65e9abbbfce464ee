/* cswap: the ladder's follower thread — it reads /proc/swaps, asks the
 * policy (ladder-policy.h) and calls swapon(2) or swapoff(2) itself,
 * until the policy says keep; then it sleeps until enough is written
 * (ladder_note_write) or a second passes.  It stands aside when another
 * process swaps a step off.  Why it works so: ladder-follow.h.
 *
 * It runs when memory is short, to make room: it takes no lock of the
 * ladder, allocates nothing, and logs only failures, through daemon_log
 * (a write to stderr could wait on the device it serves).  Started and
 * stopped by ladder-follow.c under ladder->lock (ladder-internal.h).
 */
#include <errno.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <time.h>
#include <unistd.h>

#include "daemon-log.h"
#include "ladder-internal.h"
#include "memory-safety.h"
#include "monotonic.h"
#include "page.h"
#include "proc-swaps.h"

/* swapon --discard=pages: discard a cluster once it is free, never the
 * whole device (linux/swap.h; glibc's header lacks it).
 */
#ifndef SWAP_FLAG_DISCARD_PAGES
#define SWAP_FLAG_DISCARD_PAGES 0x40000
#endif

/* The follower's stack: /proc/swaps and a path are its deepest frames. */
#define FOLLOWER_STACK_BYTES (256 * 1024)

#define MS_NS UINT64_C (1000000)

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

int
ladder_read_views (struct ladder *l, struct ladder_step_view *views,
                   uint64_t now_ns)
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

    if (ladder_read_views (l, views, monotonic_ns ()) == 0) {
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

/* Starting and stopping, under l->lock (ladder-internal.h). */

int
ladder_start_follower (struct ladder *l)
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

bool
ladder_stop_follower (struct ladder *l, unsigned wait_s)
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
