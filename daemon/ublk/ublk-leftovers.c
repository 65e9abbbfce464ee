/* cswap: deleting what a killed cswap-ublk left (ublk-leftovers.h). */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "proc-swaps.h"
#include "small-file.h"
#include "store-segment.h"
#include "ublk-control.h"
#include "ublk-leftovers.h"

#define PROGRAM_NAME "cswap-ublk"

bool
ublk_server_alive (int32_t pid)
{
  char path[64], comm[32];

  if (pid <= 0 || (kill (pid, 0) == -1 && errno == ESRCH))
    return false;
  snprintf (path, sizeof path, "/proc/%d/comm", (int) pid);
  if (read_small_file (path, comm, sizeof comm) <= 0)
    return false;
  return strncmp (comm, PROGRAM_NAME, strlen (PROGRAM_NAME)) == 0;
}

struct swap_search {
  const char *disk;             /* /dev/ublkbN */
  bool found;
};

static void
match_disk (const struct proc_swap_area *area, void *arg)
{
  struct swap_search *search = arg;

  size_t length = strlen (search->disk);

  /* Its disk deleted (the driver stops it when the server dies), an
   * area is listed as "/dev/ublkbN (deleted)".
   */
  if (strncmp (area->name, search->disk, length) == 0
      && (area->name[length] == '\0'
          || strcmp (area->name + length, " (deleted)") == 0))
    search->found = true;
}

/* The store a killed server of device DEV_ID left (store-segment.h), if
 * DEV_ID was its set's first: once the device is gone nothing can take
 * it over, and its memory is locked until removed.  Only segments this
 * user made and owns, mode 0600 (store_segment_remove_device): never
 * another user's, whatever it holds.
 */
static void
remove_store (uint32_t dev_id)
{
  if (store_segment_remove_device (dev_id) > 0)
    printf ("%s: freed the store the server of device %u left\n",
            PROGRAM_NAME, dev_id);
}

/* Deletes device DEV_ID if it is dead: 0 (deleted, or not there), or -1
 * after saying why it stays.
 */
static int
delete_one (struct ublk_control *control, uint32_t dev_id)
{
  struct ublk_dev_info info;
  char disk[64];
  struct swap_search search = { .disk = disk };
  int r;

  snprintf (disk, sizeof disk, "/dev/ublkb%u", dev_id);
  r = ublk_control_get_info (control, dev_id, &info);
  if (r == -ENODEV) {
    remove_store (dev_id);
    return 0;
  }
  if (r < 0) {
    fprintf (stderr, "%s: device %u: GET_DEV_INFO: %s\n", PROGRAM_NAME,
             dev_id, strerror (-r));
    return -1;
  }
  if (ublk_server_alive (info.ublksrv_pid)) {
    fprintf (stderr, "%s: %s is served by cswap-ublk (pid %d): not deleted\n",
             PROGRAM_NAME, disk, (int) info.ublksrv_pid);
    return -1;
  }
  /* A disk that is still swap holds the device: DEL_DEV would wait for
   * its last user, forever where the disk was deleted under swap, since
   * such an area cannot be swapped off.
   */
  proc_swaps_each (match_disk, &search);
  if (search.found && (info.state == UBLK_S_DEV_QUIESCED
                       || info.state == UBLK_S_DEV_FAIL_IO)) {
    /* User recovery: a swapoff would wait for a server (6.12). */
    fprintf (stderr, "%s: %s is still swap and waits for a new server: take "
             "it over (cswap up, or cswap-ublk --recover %u), then swapoff "
             "it: not deleted\n", PROGRAM_NAME, disk, dev_id);
    return -1;
  }
  if (search.found) {
    fprintf (stderr, "%s: %s is still swap (swapoff it first): not deleted\n",
             PROGRAM_NAME, disk);
    return -1;
  }
  r = ublk_control_delete (control, dev_id);
  if (r < 0 && r != -ENODEV) {
    fprintf (stderr, "%s: device %u: DEL_DEV: %s\n", PROGRAM_NAME, dev_id,
             strerror (-r));
    return -1;
  }
  printf ("%s: deleted device %u, whose server is gone\n", PROGRAM_NAME,
          dev_id);
  remove_store (dev_id);
  return 0;
}

int
ublk_delete_dead (int count, char *const ids[])
{
  struct ublk_control *control = NULL;
  uint32_t *dev_ids;
  const char *why;
  int status = EXIT_FAILURE;

  if (count == 0) {
    fprintf (stderr, "%s: --delete-dead: no device number given\n",
             PROGRAM_NAME);
    return EXIT_FAILURE;
  }
  dev_ids = calloc (count, sizeof *dev_ids);
  if (dev_ids == NULL) {
    fprintf (stderr, "%s: calloc: %m\n", PROGRAM_NAME);
    return EXIT_FAILURE;
  }
  for (int i = 0; i < count; i++) {
    int64_t dev_id;

    if (parse_int64 (ids[i], 0, UINT32_MAX - 1, &dev_id, &why) == -1) {
      fprintf (stderr, "%s: --delete-dead: %s: %s\n", PROGRAM_NAME, ids[i],
               why);
      goto out;
    }
    dev_ids[i] = dev_id;
  }
  control = ublk_control_open (&why);
  if (control == NULL) {
    /* No driver: no device to delete. */
    if (errno == ENOENT)
      status = EXIT_SUCCESS;
    else
      fprintf (stderr, "%s: %s: %m\n", PROGRAM_NAME, why);
    goto out;
  }
  status = EXIT_SUCCESS;
  for (int i = 0; i < count; i++)
    if (delete_one (control, dev_ids[i]) == -1)
      status = EXIT_FAILURE;
  ublk_control_close (control);
 out:
  free (dev_ids);
  return status;
}
