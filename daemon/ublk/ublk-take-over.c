/* cswap: taking a killed cswap-ublk's devices over, and leaving a
 * daemon's devices to be taken over (see ublk-take-over.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon-log.h"
#include "lost-pages.h"
#include "page.h"
#include "store-segment.h"
#include "ublk-leftovers.h"
#include "ublk-standby.h"
#include "ublk-take-over.h"

#define PROGRAM_NAME "cswap-ublk"

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
 * none is; all of them where it does not (a store that does not
 * persist, new at each take-over).  0, or -1 with errno.
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

int
ublk_recover_device (struct ublk_control *control, struct served_device *d,
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
    ublk_wait_10ms ();
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
    ublk_wait_10ms ();
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
  d->char_fd = ublk_open_char_device (dev_id);
  return d->char_fd == -1 ? -1 : 0;
}

void
ublk_warn_forced_removal (void)
{
  if (store_segment_forced_removal ())
    fprintf (stderr, "%s: warning: kernel.shm_rmid_forced=1: the kernel "
             "destroys the store's System V segment when this daemon dies, "
             "so a killed daemon's pages are lost (their reads fail with "
             "EIO) instead of taken over; sysctl kernel.shm_rmid_forced=0 "
             "keeps them\n", PROGRAM_NAME);
}

void
ublk_say_adoption (struct store *store)
{
  const struct store_adoption *adoption = store_adoption (store);

  if (adoption == NULL)
    return;
  if (adoption->adopted)
    fprintf (stderr, "%s: adopted the killed daemon's store: %llu pages, "
             "%llu lost\n", PROGRAM_NAME,
             (unsigned long long) adoption->pages,
             (unsigned long long) adoption->lost);
  if (adoption->adopted && adoption->backing_adopted)
    fprintf (stderr, "%s: %llu of them on the backing file, whose records "
             "it reads as the killed daemon did\n", PROGRAM_NAME,
             (unsigned long long) adoption->backing_pages);
  else if (adoption->adopted && adoption->backing_why)
    fprintf (stderr, "%s: the killed daemon's pages on the backing file "
             "are lost (read as EIO): %s\n", PROGRAM_NAME,
             adoption->backing_why);
  if (adoption->adopted && adoption->kept_geometry[0])
    fprintf (stderr, "%s: with the store's own %s: it keeps the geometry "
             "it was made with; a store made new takes the configured "
             "one\n", PROGRAM_NAME, adoption->kept_geometry);
  else if (adoption->why)
    fprintf (stderr, "%s: the killed daemon's store cannot be adopted (%s): "
             "its pages are lost\n", PROGRAM_NAME, adoption->why);
}

void
ublk_resume_ladder (struct ladder *ladder)
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

void
ublk_leave_swap_for_recovery (const struct served_device *devices, int count,
                              bool has_standby)
{
  const char *swap = ublk_swap_device (devices, count);
  char ids[UBLK_MAX_WINDOWS * 12] = "";
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
  _exit (UBLK_EXIT_LEFT_FOR_RECOVERY);
}
